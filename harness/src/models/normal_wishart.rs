//! Mean and precision of a 1-d Gaussian under a Normal–Wishart prior, sampled in (μ, log τ) (Roychowdhury & Parthasarathy 2017 §4.1).
//!
//! xᵢ ~ N(μ, τ⁻¹), i = 1..N. Roychowdhury & Parthasarathy 2017 writes the prior as W(τ | 1, 1): the Wishart with ν = 1 degree of
//! freedom and scale 1, which in one dimension is Gamma(shape ν/2 = ½, rate 1/2). The paper does
//! not print the prior on μ of its "normal-Wishart" pair; we take the conjugate μ | τ ~
//! N(μ₀, (κ₀τ)⁻¹) with μ₀ = [`MU0`] = 0 and κ₀ = [`KAPPA0`] = 1. The posterior is Normal–Gamma:
//!
//! ```text
//! κ_N = κ₀ + N,  μ_N = (κ₀μ₀ + N x̄)/κ_N,  α_N = ½ + N/2,
//! β_N = ½ + ½ Σ(xᵢ − x̄)² + κ₀ N (x̄ − μ₀)²/(2κ_N),
//! τ ~ Gamma(α_N, β_N),  μ ~ Student-t(2α_N, μ_N, β_N/(α_N κ_N))
//! ```
//!
//! # Parametrisation
//!
//! τ must stay positive, so the samplers move in θ = (μ, λ) with λ = log τ; the density of λ
//! carries the Jacobian dτ/dλ = e^λ. With S(μ) = ½ Σ(xᵢ − μ)² + ½κ₀(μ − μ₀)² + β₀ (β₀ = ½):
//!
//! ```text
//! U(μ, λ) = −(N/2 + α₀ + ½) λ + e^λ S(μ)            (α₀ = ½: the coefficient is N/2 + 1)
//! ∂U/∂μ = e^λ [ −Σ(xᵢ − μ) + κ₀(μ − μ₀) ]
//! ∂U/∂λ = −(N/2 + 1) + e^λ S(μ)
//! ```
//!
//! The −(N/2 + 1)λ term is −(N/2) λ from the likelihood, −(α₀ − 1)λ − ½λ from the two prior
//! factors and −λ from the Jacobian. On a minibatch B the data sums are scaled by N/|B| (Ding et
//! al. 2014, eq. 2); the prior terms are not. The sums run over the data points one by one (no
//! precomputed sufficient statistics), so the per-iteration times are those of a model whose
//! gradient costs O(N) — what the paper timed.

use super::conjugate::NormalGammaPosterior;
use rand_pcg::Pcg64;
use sgmcmc::rng::standard_normal_f64;

/// Prior mean μ₀ of μ (our choice; the paper does not state it).
pub const MU0: f64 = 0.0;
/// Prior precision factor κ₀ (μ | τ ~ N(μ₀, (κ₀τ)⁻¹); our choice).
pub const KAPPA0: f64 = 1.0;
/// Prior shape α₀ of τ: W(τ | ν = 1, 1) in 1-d is Gamma(ν/2, ½).
pub const ALPHA0: f64 = 0.5;
/// Prior rate β₀ of τ.
pub const BETA0: f64 = 0.5;

/// Data and exact Normal–Gamma posterior of the Normal–Wishart model.
#[derive(Clone, Debug)]
pub struct NormalWishart {
    /// Observations.
    pub x: Vec<f64>,
    /// Posterior κ_N.
    pub kappa_n: f64,
    /// Posterior μ_N.
    pub mu_n: f64,
    /// Posterior α_N.
    pub alpha_n: f64,
    /// Posterior β_N.
    pub beta_n: f64,
}

impl NormalWishart {
    /// N points from N(0, 1) drawn with `seed`.
    pub fn simulate(n: usize, seed: u64) -> Self {
        let mut rng = Pcg64::new(seed as u128, 0x4e57);
        Self::from_data((0..n).map(|_| standard_normal_f64(&mut rng)).collect())
    }

    /// The posterior given observations `x` (at least one).
    pub fn from_data(x: Vec<f64>) -> Self {
        let nf = x.len() as f64;
        let mean = x.iter().sum::<f64>() / nf;
        let ss: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
        let kappa_n = KAPPA0 + nf;
        NormalWishart {
            kappa_n,
            mu_n: (KAPPA0 * MU0 + nf * mean) / kappa_n,
            alpha_n: ALPHA0 + nf / 2.0,
            beta_n: BETA0 + 0.5 * ss + KAPPA0 * nf * (mean - MU0).powi(2) / (2.0 * kappa_n),
            x,
        }
    }

    /// Exact posterior means (E μ, E τ) = (μ_N, α_N/β_N).
    pub fn posterior_mean(&self) -> (f64, f64) {
        (self.mu_n, self.alpha_n / self.beta_n)
    }

    /// Exact posterior standard deviations of μ (Student-t marginal) and τ (Gamma marginal).
    pub fn posterior_sd(&self) -> (f64, f64) {
        let var_mu = self.beta_n / (self.kappa_n * (self.alpha_n - 1.0));
        (var_mu.sqrt(), self.alpha_n.sqrt() / self.beta_n)
    }

    /// The exact marginal density of μ: Student-t with 2α_N degrees of freedom, location μ_N and
    /// squared scale β_N/(α_N κ_N).
    pub fn density_mu(&self, mu: f64) -> f64 {
        self.posterior().mean_density(mu)
    }

    /// The exact marginal density of τ: Gamma(α_N, β_N) (0 for τ ≤ 0).
    pub fn density_tau(&self, tau: f64) -> f64 {
        self.posterior().precision_density(tau)
    }

    /// The posterior's parameters, for [`NormalGammaPosterior`]'s marginals.
    fn posterior(&self) -> NormalGammaPosterior {
        NormalGammaPosterior {
            mu_n: self.mu_n,
            kappa_n: self.kappa_n,
            alpha_n: self.alpha_n,
            beta_n: self.beta_n,
        }
    }

    /// U(μ, λ) on the rows `batch` (all rows, unscaled, when `None`; a minibatch's data sums
    /// scaled by N/|B|), with ∇U written into `grad` if given.
    pub fn potential(
        &self,
        theta: &[f64],
        batch: Option<&[usize]>,
        grad: Option<&mut [f64]>,
    ) -> f64 {
        let (mu, lambda) = (theta[0], theta[1]);
        let n = self.x.len() as f64;
        // Σ(xᵢ − μ) and ½Σ(xᵢ − μ)², point by point.
        let (mut sum_dev, mut half_ss) = (0.0, 0.0);
        let scale = match batch {
            None => {
                for &x in &self.x {
                    let d = x - mu;
                    sum_dev += d;
                    half_ss += d * d;
                }
                1.0
            }
            Some(rows) => {
                for &i in rows {
                    let d = self.x[i] - mu;
                    sum_dev += d;
                    half_ss += d * d;
                }
                n / rows.len() as f64
            }
        };
        sum_dev *= scale;
        half_ss *= 0.5 * scale;
        let tau = lambda.exp();
        let s = half_ss + 0.5 * KAPPA0 * (mu - MU0).powi(2) + BETA0;
        let shape = n / 2.0 + ALPHA0 + 0.5;
        if let Some(g) = grad {
            g[0] = tau * (-sum_dev + KAPPA0 * (mu - MU0));
            g[1] = -shape + tau * s;
        }
        -shape * lambda + tau * s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ∇U against central differences, and the minibatch potential on the full batch equals the
    /// full one.
    #[test]
    fn gradient_matches_central_differences() {
        let m = NormalWishart::simulate(200, 4);
        for theta in [[0.1, 0.2], [-0.4, -0.3], [0.0, 0.0]] {
            let mut g = [0.0; 2];
            let u = m.potential(&theta, None, Some(&mut g));
            for j in 0..2 {
                let e = 1e-6;
                let (mut a, mut b) = (theta, theta);
                a[j] += e;
                b[j] -= e;
                let fd = (m.potential(&a, None, None) - m.potential(&b, None, None)) / (2.0 * e);
                assert!(
                    (fd - g[j]).abs() < 1e-5 * (1.0 + g[j].abs()),
                    "{j}: {fd} {}",
                    g[j]
                );
            }
            let all: Vec<usize> = (0..200).collect();
            let mut g2 = [0.0; 2];
            let u2 = m.potential(&theta, Some(&all), Some(&mut g2));
            assert!((u - u2).abs() < 1e-9 * (1.0 + u.abs()));
        }
    }

    /// The mode of U in λ, for fixed μ = μ_N, and the exact moments agree with a 1-d quadrature of
    /// the unnormalised density exp(−U) (which must integrate to the Normal–Gamma posterior).
    #[test]
    fn exact_moments_match_quadrature_of_the_potential() {
        let m = NormalWishart::simulate(300, 9);
        let (em, et) = m.posterior_mean();
        let (sm, st) = m.posterior_sd();
        let (lo_m, hi_m) = (em - 10.0 * sm, em + 10.0 * sm);
        let (lo_l, hi_l) = ((et - 10.0 * st).max(1e-6).ln(), (et + 10.0 * st).ln());
        let n = 600;
        let u0 = m.potential(&[em, et.ln()], None, None);
        let (mut z, mut s_mu, mut s_tau, mut s_tau2) = (0.0, 0.0, 0.0, 0.0);
        for i in 0..n {
            let mu = lo_m + (hi_m - lo_m) * (i as f64 + 0.5) / n as f64;
            for j in 0..n {
                let l = lo_l + (hi_l - lo_l) * (j as f64 + 0.5) / n as f64;
                let w = (u0 - m.potential(&[mu, l], None, None)).exp();
                z += w;
                s_mu += w * mu;
                s_tau += w * l.exp();
                s_tau2 += w * l.exp() * l.exp();
            }
        }
        let mean_tau = s_tau / z;
        assert!((s_mu / z - em).abs() < 1e-3 * sm, "{} {em}", s_mu / z);
        assert!((mean_tau - et).abs() < 1e-3 * st, "{mean_tau} {et}");
        let sd_tau = (s_tau2 / z - mean_tau * mean_tau).sqrt();
        assert!((sd_tau / st - 1.0).abs() < 1e-3, "{sd_tau} {st}");
    }
}
