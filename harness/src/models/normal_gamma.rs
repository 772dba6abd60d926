//! Unknown mean and precision of a 1-d Gaussian with a Normal–Gamma prior (Ding et al. 2014 §5.1, App. E).
//!
//! xᵢ ~ N(μ, γ⁻¹), prior μ | γ ~ N(0, γ⁻¹), γ ~ Gam(1, 1) (shape, rate). The posterior is
//! Normal–Gamma: μ | γ ~ N(μ_N, (κ_N γ)⁻¹), γ ~ Gam(α_N, β_N) with μ_N = N x̄/(N + 1),
//! κ_N = N + 1, α_N = 1 + N/2, β_N = 1 + ½ Σ(xᵢ − x̄)² + N x̄²/(2(N + 1)).
//!
//! The potential is U(μ, γ) = −((N + 1)/2) ln γ + (γ/2) Σ(xᵢ − μ)² + γμ²/2 + γ + const, so
//!
//! ```text
//! ∂U/∂μ = (N + 1) μ γ − γ Σ xᵢ
//! ∂U/∂γ = −(N + 1)/(2γ) + 1 + μ²/2 + ½ Σ (xᵢ − μ)²
//! ```
//!
//! with the sums over a minibatch scaled by N/Ñ for the stochastic gradient. The paper's printed
//! ∂U/∂γ lacks the ½ in front of the data sum; the derivation above (checked against central
//! differences of U in the tests) has it.
//!
//! γ must stay positive. The −(N + 1)/(2γ) term is a barrier the continuous dynamics never
//! crosses, but a discrete step can; a step that lands at γ < 0 is reflected, γ ← −γ and
//! p_γ ← −p_γ. Specular reflection at the boundary of the support preserves the Boltzmann
//! distribution e^{−U(θ) − K(p)} restricted to γ > 0, so it keeps the target; with N = 100 the
//! posterior of γ lies about 7 standard deviations from 0, so reflections are rare.
//!
//! The marginals are standard (Murphy 2007, §8; Bernardo & Smith 1994, App. A): μ is Student-t
//! with 2α_N degrees of freedom, location μ_N and scale √(β_N/(α_N κ_N)), γ is Gam(α_N, β_N); an
//! exact draw is γ from its Gamma, then μ | γ.
//!
//! # References
//!
//! * K. P. Murphy (2007), "Conjugate Bayesian analysis of the Gaussian distribution", technical
//!   note, §8 (eq. 99: the marginal of μ).
//! * J. M. Bernardo, A. F. M. Smith (1994), *Bayesian Theory*, Wiley, App. A.
//! * G. Marsaglia, W. W. Tsang (2000), "A simple method for generating gamma variables", *ACM
//!   Trans. Math. Softw.* 26, 363–372.

use super::conjugate::NormalGammaPosterior;
use super::gaussian_mean::MinibatchSampler;
use rand_pcg::Pcg64;
use sgmcmc::rng::standard_normal_f64;

/// Data and exact posterior of the Normal–Gamma model.
#[derive(Clone, Debug)]
pub struct NormalGamma {
    /// Observations.
    pub x: Vec<f64>,
    /// Minibatch size Ñ.
    pub batch: usize,
    /// Posterior μ_N.
    pub mu_n: f64,
    /// Posterior κ_N.
    pub kappa_n: f64,
    /// Posterior α_N.
    pub alpha_n: f64,
    /// Posterior β_N.
    pub beta_n: f64,
}

impl NormalGamma {
    /// N points from N(0, 1) with the given seed (the data of both parts of Ding et al. 2014 §5.1).
    pub fn simulate(n: usize, batch: usize, seed: u64) -> Self {
        let mut rng = Pcg64::new(seed as u128, 0x9a33a);
        let x: Vec<f64> = (0..n).map(|_| standard_normal_f64(&mut rng)).collect();
        let nf = n as f64;
        let mean = x.iter().sum::<f64>() / nf;
        let ss: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
        NormalGamma {
            batch,
            mu_n: nf * mean / (nf + 1.0),
            kappa_n: nf + 1.0,
            alpha_n: 1.0 + nf / 2.0,
            beta_n: 1.0 + 0.5 * ss + nf * mean * mean / (2.0 * (nf + 1.0)),
            x,
        }
    }

    /// The exact posterior density p(μ, γ | x) (normalised; 0 for γ ≤ 0).
    pub fn density(&self, mu: f64, gamma: f64) -> f64 {
        if gamma <= 0.0 {
            return 0.0;
        }
        let prec = self.kappa_n * gamma;
        let log_normal = 0.5 * (prec / (2.0 * std::f64::consts::PI)).ln()
            - 0.5 * prec * (mu - self.mu_n).powi(2);
        let log_gamma = self.alpha_n * self.beta_n.ln() - libm::lgamma(self.alpha_n)
            + (self.alpha_n - 1.0) * gamma.ln()
            - self.beta_n * gamma;
        (log_normal + log_gamma).exp()
    }

    /// The exact marginal posterior density of μ: Student-t with `2α_N` degrees of freedom,
    /// location `μ_N` and scale `√(β_N/(α_N κ_N))` (Murphy 2007, §8; Bernardo & Smith
    /// 1994, App. A).
    pub fn mu_marginal_density(&self, mu: f64) -> f64 {
        self.posterior().mean_density(mu)
    }

    /// The exact marginal posterior density of γ: Gamma with shape `α_N` and rate `β_N` (0 for
    /// γ ≤ 0).
    pub fn gamma_marginal_density(&self, gamma: f64) -> f64 {
        self.posterior().precision_density(gamma)
    }

    /// One exact, independent draw (μ, γ) from the posterior: γ ~ Gam(α_N, β_N) (the core's
    /// Marsaglia & Tsang 2000 draw), then μ | γ ~ N(μ_N, (κ_N γ)⁻¹).
    pub fn sample_exact(&self, rng: &mut Pcg64) -> (f64, f64) {
        let gamma = sgmcmc::rng::gamma(rng, self.alpha_n) / self.beta_n;
        let mu = self.mu_n + standard_normal_f64(rng) / (self.kappa_n * gamma).sqrt();
        (mu, gamma)
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

    /// Posterior means (E μ, E γ) = (μ_N, α_N/β_N).
    pub fn posterior_mean(&self) -> (f64, f64) {
        (self.mu_n, self.alpha_n / self.beta_n)
    }

    /// Posterior standard deviations of μ (Student-t marginal) and γ.
    pub fn posterior_sd(&self) -> (f64, f64) {
        let var_mu = self.beta_n / (self.kappa_n * (self.alpha_n - 1.0));
        (var_mu.sqrt(), self.alpha_n.sqrt() / self.beta_n)
    }

    /// The exact potential U(μ, γ) up to a constant (full data).
    pub fn potential(&self, mu: f64, gamma: f64) -> f64 {
        let n = self.x.len() as f64;
        let ss: f64 = self.x.iter().map(|v| (v - mu).powi(2)).sum();
        -(n + 1.0) / 2.0 * gamma.ln() + gamma / 2.0 * ss + gamma * mu * mu / 2.0 + gamma
    }

    /// The full-data gradient (∂U/∂μ, ∂U/∂γ).
    pub fn gradient(&self, mu: f64, gamma: f64) -> (f64, f64) {
        self.batch_gradient(mu, gamma, 0..self.x.len(), 1.0)
    }

    fn batch_gradient(
        &self,
        mu: f64,
        gamma: f64,
        idx: impl Iterator<Item = usize>,
        scale: f64,
    ) -> (f64, f64) {
        let n = self.x.len() as f64;
        let (mut sx, mut ss) = (0.0, 0.0);
        for i in idx {
            sx += self.x[i];
            ss += (self.x[i] - mu).powi(2);
        }
        let gmu = (n + 1.0) * mu * gamma - gamma * scale * sx;
        let ggamma = -(n + 1.0) / (2.0 * gamma) + 1.0 + 0.5 * mu * mu + 0.5 * scale * ss;
        (gmu, ggamma)
    }

    /// A minibatch stochastic gradient over θ = (μ, γ) with its own RNG.
    pub fn stochastic_gradient(&self, seed: u64) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        let mut sampler = MinibatchSampler::new(self.x.len(), self.batch, seed);
        let scale = self.x.len() as f64 / self.batch as f64;
        move |t: &[f64], g: &mut [f64]| {
            let idx = sampler.draw().to_vec();
            let (a, b) = self.batch_gradient(t[0], t[1], idx.into_iter(), scale);
            g[0] = a;
            g[1] = b;
        }
    }

    /// Reflects a state that left the support: γ ← |γ|, p_γ ← −p_γ when γ < 0.
    pub fn reflect(theta: &mut [f64], momentum: &mut [f64]) {
        if theta[1] < 0.0 {
            theta[1] = -theta[1];
            if let Some(p) = momentum.get_mut(1) {
                *p = -*p;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_matches_central_differences_and_density_integrates_to_one() {
        let m = NormalGamma::simulate(100, 10, 3);
        for &(mu, g) in &[(0.1, 0.9), (-0.3, 1.4), (0.0, 0.5)] {
            let e = 1e-6;
            let fmu = (m.potential(mu + e, g) - m.potential(mu - e, g)) / (2.0 * e);
            let fg = (m.potential(mu, g + e) - m.potential(mu, g - e)) / (2.0 * e);
            let (a, b) = m.gradient(mu, g);
            assert!((a - fmu).abs() < 1e-5 * (1.0 + a.abs()), "{a} {fmu}");
            assert!((b - fg).abs() < 1e-5 * (1.0 + b.abs()), "{b} {fg}");
        }
        // Midpoint rule over ±8 sd in μ and (0, E γ + 10 sd] in γ.
        let (mm, mg) = m.posterior_mean();
        let (sm, sg) = m.posterior_sd();
        let (nm, ng) = (400, 400);
        let (lo_m, hi_m) = (mm - 8.0 * sm, mm + 8.0 * sm);
        let hi_g = mg + 10.0 * sg;
        let (dm, dg) = ((hi_m - lo_m) / nm as f64, hi_g / ng as f64);
        let mut total = 0.0;
        for i in 0..nm {
            for j in 0..ng {
                total += m.density(lo_m + (i as f64 + 0.5) * dm, (j as f64 + 0.5) * dg) * dm * dg;
            }
        }
        assert!((total - 1.0).abs() < 1e-3, "∫ density = {total}");
    }

    /// The marginals integrate to 1 (midpoint rule over ±12 sd of μ, (0, E γ + 12 sd] of γ) and
    /// have the moments of their laws: the t's mean μ_N and variance β_N/(κ_N(α_N − 1)) =
    /// `posterior_sd().0²`, the Gamma's mean α_N/β_N and variance α_N/β_N². The μ marginal also
    /// equals the joint density integrated over γ (at three points). Midpoint-rule error on 4·10⁴
    /// cells of these smooth densities is < 10⁻⁸; the tails beyond 12 sd hold < 10⁻⁹ (the t has
    /// 102 degrees of freedom); we assert 10⁻⁶.
    #[test]
    fn marginals_integrate_to_one_with_the_right_moments() {
        let m = NormalGamma::simulate(100, 10, 9);
        let (mm, mg) = m.posterior_mean();
        let (sm, sg) = m.posterior_sd();
        let moments = |f: &dyn Fn(f64) -> f64, lo: f64, hi: f64| {
            let cells = 40_000;
            let w = (hi - lo) / cells as f64;
            let (mut z, mut s1, mut s2) = (0.0, 0.0, 0.0);
            for i in 0..cells {
                let x = lo + (i as f64 + 0.5) * w;
                let p = f(x) * w;
                z += p;
                s1 += p * x;
                s2 += p * x * x;
            }
            (z, s1, s2 - s1 * s1)
        };
        let (z, mean, var) = moments(
            &|x| m.mu_marginal_density(x),
            mm - 12.0 * sm,
            mm + 12.0 * sm,
        );
        assert!((z - 1.0).abs() < 1e-6, "∫ p(μ) = {z}");
        assert!((mean - mm).abs() < 1e-6 * sm, "{mean} vs {mm}");
        assert!((var / (sm * sm) - 1.0).abs() < 1e-6, "{var} vs {}", sm * sm);
        let (z, mean, var) = moments(&|g| m.gamma_marginal_density(g), 0.0, mg + 12.0 * sg);
        assert!((z - 1.0).abs() < 1e-6, "∫ p(γ) = {z}");
        assert!((mean - m.alpha_n / m.beta_n).abs() < 1e-6 * sg);
        assert!((var / (m.alpha_n / m.beta_n.powi(2)) - 1.0).abs() < 1e-6);
        assert_eq!(m.gamma_marginal_density(-0.1), 0.0);
        for mu in [mm - 2.0 * sm, mm, mm + 0.7 * sm] {
            let (joint, _, _) = moments(&|g| m.density(mu, g), 1e-9, mg + 12.0 * sg);
            let t = m.mu_marginal_density(mu);
            assert!((joint / t - 1.0).abs() < 1e-6, "μ = {mu}: {joint} vs {t}");
        }
    }

    /// 2·10⁵ exact draws: the sample means of μ and γ within 5 standard errors of E μ and E γ,
    /// and the sample variances within 5 of their standard errors (≈ √(2/n) relative for μ's
    /// near-normal t, √((2 + 6/α_N)/n) for the Gamma) of the exact variances.
    #[test]
    fn exact_draws_have_the_posterior_moments() {
        let m = NormalGamma::simulate(100, 10, 4);
        let mut rng = Pcg64::new(12, 34);
        let n = 200_000;
        let draws: Vec<(f64, f64)> = (0..n).map(|_| m.sample_exact(&mut rng)).collect();
        let nf = n as f64;
        let (mm, mg) = m.posterior_mean();
        let (sm, sg) = m.posterior_sd();
        for (k, (mean, sd)) in [(mm, sm), (mg, sg)].into_iter().enumerate() {
            let xs: Vec<f64> = draws
                .iter()
                .map(|d| if k == 0 { d.0 } else { d.1 })
                .collect();
            let m1 = xs.iter().sum::<f64>() / nf;
            let v = xs.iter().map(|x| (x - m1).powi(2)).sum::<f64>() / (nf - 1.0);
            assert!(
                (m1 - mean).abs() < 5.0 * sd / nf.sqrt(),
                "{k}: {m1} vs {mean}"
            );
            let rel = if k == 0 {
                (2.0 / nf).sqrt()
            } else {
                ((2.0 + 6.0 / m.alpha_n) / nf).sqrt()
            };
            assert!(
                (v / (sd * sd) - 1.0).abs() < 5.0 * rel,
                "{k}: {v} vs {}",
                sd * sd
            );
        }
    }
}
