//! The synthetic 2-d logistic regression of Roychowdhury & Parthasarathy 2017 §4.2: inputs from a two-Gaussian mixture, labels from σ(Wᵀx).
//!
//! Roychowdhury & Parthasarathy 2017 (following its reference \[6\]) draws N = 2000 inputs from the equal-weight mixture of
//! N([1, −1], I) and N([−1, 1], I) and "classifies these points using a linear classifier with
//! weights W = [1, −1]". We read "classify" as drawing the labels yᵢ ~ Bernoulli(σ(Wᵀxᵢ)), so
//! that W is the generating parameter of the model being fitted (thresholding σ at ½ would make
//! the classes separable and the posterior improper in the limit). No intercept, no
//! standardisation; the prior is N(0, 10 I) ([`super::logistic_regression::PRIOR_VARIANCE`]).
//! [`synthetic_2d_labelled`] also gives the two other readings on the same inputs (labels
//! sign(Wᵀx), labels = mixture component), which `blr-2d` compares by quadrature.

use super::logistic_regression::{Design, LogisticRegression, PRIOR_VARIANCE, sigmoid};
use rand_pcg::Pcg64;
use sgmcmc::rng::{standard_normal_f64, uniform_f64};

/// The generating weights W = [1, −1].
pub const TRUE_WEIGHTS: [f64; 2] = [1.0, -1.0];

/// Three readings of "classifies these points using a linear classifier with weights W"
/// (Roychowdhury & Parthasarathy 2017 §4.2); all three label the same inputs x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelReading {
    /// yᵢ ~ Bernoulli(σ(Wᵀxᵢ)): W is the generating parameter of the fitted model (our reading).
    Bernoulli,
    /// yᵢ = 1 if Wᵀxᵢ > 0: deterministic, so W itself separates the classes.
    Sign,
    /// yᵢ = 1 if xᵢ was drawn from the component with mean [1, −1]: the mixture component.
    Component,
}

impl LabelReading {
    /// The three readings, ours first.
    pub const ALL: [LabelReading; 3] = [
        LabelReading::Bernoulli,
        LabelReading::Sign,
        LabelReading::Component,
    ];

    /// A short description for tables.
    pub fn label(self) -> &'static str {
        match self {
            LabelReading::Bernoulli => "y ~ Bernoulli(σ(Wᵀx))",
            LabelReading::Sign => "y = [Wᵀx > 0]",
            LabelReading::Component => "y = mixture component",
        }
    }
}

/// N points of the mixture with labels drawn from σ(Wᵀx), as a posterior with prior N(0, 10 I).
pub fn synthetic_2d(n: usize, seed: u64) -> LogisticRegression {
    synthetic_2d_labelled(n, seed, LabelReading::Bernoulli)
}

/// N points of the mixture labelled by `reading`, as a posterior with prior N(0, 10 I). The
/// random stream is the same for every reading (the Bernoulli uniform is drawn and discarded by
/// the others), so one seed gives the same inputs x under all three.
pub fn synthetic_2d_labelled(n: usize, seed: u64, reading: LabelReading) -> LogisticRegression {
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
        let u = uniform_f64(&mut rng);
        let positive = match reading {
            LabelReading::Bernoulli => u < sigmoid(z),
            LabelReading::Sign => z > 0.0,
            LabelReading::Component => sign > 0.0,
        };
        y.push(if positive { 1.0 } else { 0.0 });
        x.extend(row);
    }
    LogisticRegression::new(Design { x, y, d: 2 }, PRIOR_VARIANCE)
}

/// Rows of `model` that the classifier sign(wᵀx) gets wrong (0: w separates the classes).
pub fn misclassified(model: &LogisticRegression, w: &[f64]) -> usize {
    let d = &model.data;
    (0..d.len())
        .filter(|&i| {
            let z: f64 = d.row(i).iter().zip(w).map(|(x, w)| x * w).sum();
            (z > 0.0) != (d.y[i] > 0.5)
        })
        .count()
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

    /// The three readings label the same inputs; the sign reading is separated by W, the others
    /// are not (the mixture components overlap, and Bernoulli labels flip near the boundary).
    #[test]
    fn label_readings_share_the_inputs() {
        let [b, s, c] = LabelReading::ALL.map(|r| synthetic_2d_labelled(500, 7, r));
        assert_eq!(b.data.x, s.data.x);
        assert_eq!(b.data.x, c.data.x);
        assert_eq!(misclassified(&s, &TRUE_WEIGHTS), 0);
        assert!(misclassified(&b, &TRUE_WEIGHTS) > 0);
        assert!(misclassified(&c, &TRUE_WEIGHTS) > 0);
    }
}
