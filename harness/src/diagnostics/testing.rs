//! Test fixtures of the harness's own diagnostics (densities, moments, summaries, device logs): seeded AR(1) series, normal and gamma draws.
//!
//! The estimators' fixtures moved with them to `sgmcmc-diagnostics` (its `testing` module); these
//! are the few the harness's remaining tests need, kept here because a `#[cfg(test)]` module of
//! another crate cannot be imported.

use rand_pcg::Pcg64;
use sgmcmc::rng::{standard_normal_f64, uniform_open_f64};

/// `n` draws of the AR(1) process `x_t = φ x_{t−1} + √(1−φ²) ε_t`, `ε_t ~ N(0, 1)`, started in
/// its stationary law `x_0 ~ N(0, 1)`, from `Pcg64::new(seed, stream)`.
pub(crate) fn ar1(phi: f64, n: usize, seed: u128, stream: u128) -> Vec<f64> {
    let mut rng = Pcg64::new(seed, stream);
    let s = (1.0 - phi * phi).sqrt();
    let mut x = standard_normal_f64(&mut rng);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(x);
        x = phi * x + s * standard_normal_f64(&mut rng);
    }
    out
}

/// `n` independent `N(mean, sd²)` draws.
pub(crate) fn normals(n: usize, mean: f64, sd: f64, rng: &mut Pcg64) -> Vec<f64> {
    (0..n)
        .map(|_| mean + sd * standard_normal_f64(rng))
        .collect()
}

/// One Gamma(shape α ≥ 1, rate β) draw by Marsaglia & Tsang (2000).
pub(crate) fn gamma(alpha: f64, beta: f64, rng: &mut Pcg64) -> f64 {
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let z = standard_normal_f64(rng);
        let v = (1.0 + c * z).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = uniform_open_f64(rng);
        if u.ln() < 0.5 * z * z + d - d * v + d * v.ln() {
            return d * v / beta;
        }
    }
}
