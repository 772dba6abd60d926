//! The formulas of docs/gradient-noise.md checked by simulation: the covariance of a minibatch gradient with and without replacement, and the in-batch estimate's unbiasedness.

use rand_pcg::Pcg64;
use sgmcmc::rng::{standard_normal_f64, uniform_f64};

const N: usize = 40;
const B: usize = 6;
const DRAWS: usize = 400_000;

/// Mean and standard error of `x`.
fn mean_se(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

/// Draws `DRAWS` minibatches of B from a fixed population of N per-example gradients (skewed,
/// so nothing relies on normality) and returns, per draw, the minibatch gradient
/// N/B Σ_{i∈B} gᵢ and the doc's estimate V̂ from the same minibatch.
fn simulate(replace: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = Pcg64::new(17, 3);
    let g: Vec<f64> = (0..N)
        .map(|_| standard_normal_f64(&mut rng).exp())
        .collect();
    let (n, b) = (N as f64, B as f64);
    let (mut grads, mut estimates) = (Vec::with_capacity(DRAWS), Vec::with_capacity(DRAWS));
    let mut perm: Vec<usize> = (0..N).collect();
    for _ in 0..DRAWS {
        let mut batch = [0.0; B];
        for (i, x) in batch.iter_mut().enumerate() {
            let index = if replace {
                ((uniform_f64(&mut rng) * n) as usize).min(N - 1)
            } else {
                // A partial Fisher–Yates shuffle: B distinct indices.
                let j = i + ((uniform_f64(&mut rng) * (N - i) as f64) as usize).min(N - i - 1);
                perm.swap(i, j);
                perm[i]
            };
            *x = g[index];
        }
        let t: f64 = batch.iter().sum();
        let q: f64 = batch.iter().map(|x| x * x).sum();
        let s2 = (q - t * t / b) / (b - 1.0);
        grads.push(n / b * t);
        estimates.push(if replace {
            n * n * s2 / b
        } else {
            n * (n - b) * s2 / b
        });
    }
    (g, grads, estimates)
}

/// V = N(N − b)S/b without replacement and N(N − 1)S/b with it (S: the population variance
/// with divisor N − 1); the simulated variance of the minibatch gradient must match, and the
/// mean of V̂ must match V. Both within 5 standard errors of the simulation: the gradient's
/// variance through the standard error of the squared deviations about the exact mean N·ḡ,
/// V̂'s mean through its own standard error.
#[test]
fn minibatch_gradient_variance_and_its_estimate() {
    for replace in [false, true] {
        let (g, grads, estimates) = simulate(replace);
        let (n, b) = (N as f64, B as f64);
        let mean = g.iter().sum::<f64>() / n;
        let s = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let exact = if replace {
            n * (n - 1.0) * s / b
        } else {
            n * (n - b) * s / b
        };
        let squared: Vec<f64> = grads.iter().map(|x| (x - n * mean).powi(2)).collect();
        let (var, var_se) = mean_se(&squared);
        assert!(
            (var - exact).abs() < 5.0 * var_se,
            "replace = {replace}: simulated variance {var} ± {var_se}, formula {exact}"
        );
        let (est, est_se) = mean_se(&estimates);
        assert!(
            (est - exact).abs() < 5.0 * est_se,
            "replace = {replace}: mean estimate {est} ± {est_se}, formula {exact}"
        );
        // And the two schemes differ by more than the noise (the test can tell them apart).
        let other = if replace {
            n * (n - b) * s / b
        } else {
            n * (n - 1.0) * s / b
        };
        assert!((var - other).abs() > 5.0 * var_se, "replace = {replace}");
    }
}
