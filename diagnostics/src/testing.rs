//! Test fixtures of the estimators: seeded AR(1) and AR(2) series, normal draws, and the two fixed chains of the ArviZ cross-checks.

use rand_pcg::Pcg64;
use sgmcmc::rng::standard_normal_f64;

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

/// `n` draws of the AR(2) process `x_t = φ₁ x_{t−1} + φ₂ x_{t−2} + ε_t`, `ε_t ~ N(0, 1)`, after
/// 10 000 discarded steps from `x = 0` (far past its memory for the stationary φ used here),
/// from `Pcg64::new(seed, stream)`.
pub(crate) fn ar2(phi1: f64, phi2: f64, n: usize, seed: u128, stream: u128) -> Vec<f64> {
    let mut rng = Pcg64::new(seed, stream);
    let (mut x1, mut x2) = (0.0, 0.0);
    let mut out = Vec::with_capacity(n);
    for t in 0..n + 10_000 {
        let x = phi1 * x1 + phi2 * x2 + standard_normal_f64(&mut rng);
        x2 = x1;
        x1 = x;
        if t >= 10_000 {
            out.push(x);
        }
    }
    out
}

/// `n` independent `N(mean, sd²)` draws.
pub(crate) fn normals(n: usize, mean: f64, sd: f64, rng: &mut Pcg64) -> Vec<f64> {
    (0..n)
        .map(|_| mean + sd * standard_normal_f64(rng))
        .collect()
}

/// Two fixed chains of 50 draws, `sin(0.3t) + 0.5 sin(2.1t) + 0.01t` and
/// `1.2 cos(0.25t + 0.4) + 0.3 sin(1.7t)`, on which ArviZ 0.21 was run for the cross-checks.
pub(crate) fn fixed_two_chains() -> [Vec<f64>; 2] {
    let t = || (0..50).map(|t| t as f64);
    [
        t().map(|t| (0.3 * t).sin() + 0.5 * (2.1 * t).sin() + 0.01 * t)
            .collect(),
        t().map(|t| (0.25 * t + 0.4).cos() * 1.2 + 0.3 * (1.7 * t).sin())
            .collect(),
    ]
}
