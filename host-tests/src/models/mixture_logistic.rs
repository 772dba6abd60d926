//! The synthetic 2-d logistic regression of Roychowdhury & Parthasarathy 2017 §4.2: inputs from a two-Gaussian mixture, labels from σ(Wᵀx).
//!
//! Roychowdhury & Parthasarathy 2017 (following its reference \[6\]) draws N = 2000 inputs from the equal-weight mixture of
//! N([1, −1], I) and N([−1, 1], I) and "classifies these points using a linear classifier with
//! weights W = [1, −1]". We read "classify" as drawing the labels yᵢ ~ Bernoulli(σ(Wᵀxᵢ)), so
//! that W is the generating parameter of the model being fitted (thresholding σ at ½ would make
//! the classes separable and the posterior improper in the limit). No intercept, no
//! standardisation; the prior is N(0, 10 I) ([`super::logistic_regression::PRIOR_VARIANCE`]).

use super::logistic_regression::{Design, LogisticRegression, PRIOR_VARIANCE, sigmoid};
use rand_pcg::Pcg64;
use sgmcmc::rng::{standard_normal_f64, uniform_f64};

/// The generating weights W = [1, −1].
pub const TRUE_WEIGHTS: [f64; 2] = [1.0, -1.0];

/// N points of the mixture with labels drawn from σ(Wᵀx), as a posterior with prior N(0, 10 I).
pub fn synthetic_2d(n: usize, seed: u64) -> LogisticRegression {
    let mut rng = Pcg64::new(seed as u128, 0x2d10);
    let mut x = Vec::with_capacity(2 * n);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        // Component 1 (mean [1, −1]) or 2 (mean [−1, 1]) with probability ½ each.
        let sign = if uniform_f64(&mut rng) < 0.5 {
            1.0
        } else {
            -1.0
        };
        let row = [
            sign + standard_normal_f64(&mut rng),
            -sign + standard_normal_f64(&mut rng),
        ];
        let z = TRUE_WEIGHTS[0] * row[0] + TRUE_WEIGHTS[1] * row[1];
        y.push(if uniform_f64(&mut rng) < sigmoid(z) {
            1.0
        } else {
            0.0
        });
        x.extend(row);
    }
    LogisticRegression::new(Design { x, y, d: 2 }, PRIOR_VARIANCE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data are what they claim: the mixture means ±[1, −1] and a label rate near ½ (the
    /// mixture is symmetric in Wᵀx).
    #[test]
    fn synthetic_data_have_the_mixture_moments() {
        let m = synthetic_2d(20_000, 3);
        let d = &m.data;
        let mean0 = (0..d.len()).map(|i| d.row(i)[0]).sum::<f64>() / d.len() as f64;
        let second0 = (0..d.len()).map(|i| d.row(i)[0].powi(2)).sum::<f64>() / d.len() as f64;
        assert!(mean0.abs() < 0.05, "{mean0}");
        // E x₀² = 1 (component variance) + 1 (squared component mean).
        assert!((second0 - 2.0).abs() < 0.1, "{second0}");
        let rate = d.y.iter().sum::<f64>() / d.len() as f64;
        assert!((rate - 0.5).abs() < 0.02, "{rate}");
    }
}
