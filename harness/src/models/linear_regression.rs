//! Bayesian linear regression with a Gaussian prior: minibatch gradients and the exact conjugate posterior.
//!
//! y = Xw + ε, ε ~ N(0, σ²), prior w ~ N(0, α⁻¹ I). The posterior is N(m, Λ⁻¹) with
//! Λ = αI + XᵀX/σ² and m = Λ⁻¹Xᵀy/σ², so a sampler's output can be compared with the truth.
//! The stochastic gradient of U(w) = −log p(w | X, y) on a minibatch S of size n is
//! ∇Ũ(w) = αw − (N/n) Σ_{i∈S} xᵢ (yᵢ − xᵢᵀw)/σ² (Ding et al. 2014, eq. 2).

use rand_pcg::Pcg64;
use sgmcmc::linalg::{cholesky_in_place, cholesky_solve_in_place, spd_inverse};
use sgmcmc::rng::{standard_normal_f64, uniform_f64};

/// A data set and its exact posterior.
#[derive(Clone, Debug)]
pub struct LinearRegression {
    /// Design matrix, row-major N × d.
    pub x: Vec<f64>,
    /// Responses.
    pub y: Vec<f64>,
    /// Number of weights.
    pub d: usize,
    /// Prior precision α.
    pub prior_precision: f64,
    /// Noise variance σ².
    pub noise_var: f64,
    /// The weights the data were simulated from.
    pub true_weights: Vec<f64>,
    /// Exact posterior mean.
    pub posterior_mean: Vec<f64>,
    /// Exact posterior standard deviations.
    pub posterior_sd: Vec<f64>,
}

impl LinearRegression {
    /// Simulates N points with standard normal features and weights wⱼ = (−1)ʲ (1 + j/2).
    pub fn simulate(n: usize, d: usize, seed: u64) -> Self {
        let mut rng = Pcg64::new(seed as u128, 0x11ea);
        let true_weights: Vec<f64> = (0..d)
            .map(|j| if j % 2 == 0 { 1.0 } else { -1.0 } * (1.0 + j as f64 / 2.0))
            .collect();
        let (prior_precision, noise_var): (f64, f64) = (1.0, 1.0);
        let mut x = Vec::with_capacity(n * d);
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            let row: Vec<f64> = (0..d).map(|_| standard_normal_f64(&mut rng)).collect();
            let mean: f64 = row.iter().zip(&true_weights).map(|(a, b)| a * b).sum();
            y.push(mean + noise_var.sqrt() * standard_normal_f64(&mut rng));
            x.extend(row);
        }
        let mut precision = vec![0.0; d * d];
        let mut xty = vec![0.0; d];
        for i in 0..n {
            let row = &x[i * d..(i + 1) * d];
            for a in 0..d {
                xty[a] += row[a] * y[i] / noise_var;
                for b in 0..d {
                    precision[a * d + b] += row[a] * row[b] / noise_var;
                }
            }
        }
        for a in 0..d {
            precision[a * d + a] += prior_precision;
        }
        let mut l = precision.clone();
        cholesky_in_place(&mut l, d).expect("posterior precision is SPD");
        let mut posterior_mean = xty;
        cholesky_solve_in_place(&l, d, &mut posterior_mean).expect("d × d and d");
        let mut cov = vec![0.0; d * d];
        spd_inverse(&precision, d, &mut cov).expect("posterior precision is SPD");
        let posterior_sd = (0..d).map(|j| cov[j * d + j].sqrt()).collect();
        LinearRegression {
            x,
            y,
            d,
            prior_precision,
            noise_var,
            true_weights,
            posterior_mean,
            posterior_sd,
        }
    }

    /// Number of data points N.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// `true` when there are no data.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// A stochastic-gradient closure over minibatches of `batch` points drawn uniformly with
    /// replacement by its own RNG.
    pub fn minibatch_gradient(
        &self,
        batch: usize,
        seed: u64,
    ) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        let mut rng = Pcg64::new(seed as u128, 0xba7c);
        let n = self.len();
        let scale = n as f64 / batch as f64 / self.noise_var;
        move |w: &[f64], g: &mut [f64]| {
            for (gj, wj) in g.iter_mut().zip(w) {
                *gj = self.prior_precision * wj;
            }
            for _ in 0..batch {
                let i = ((uniform_f64(&mut rng) * n as f64) as usize).min(n - 1);
                let row = &self.x[i * self.d..(i + 1) * self.d];
                let r: f64 = self.y[i] - row.iter().zip(w).map(|(a, b)| a * b).sum::<f64>();
                for (gj, xj) in g.iter_mut().zip(row) {
                    *gj -= scale * xj * r;
                }
            }
        }
    }
}
