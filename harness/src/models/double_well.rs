//! The double-well potential of Ding et al. 2014 §3 (and Li et al. 2016 §3), with simulated gradient noise.
//!
//! U(θ) = (θ + 4)(θ + 1)(θ − 1)(θ − 3)/14 + 0.5 = (θ⁴ + θ³ − 13θ² − θ + 12)/14 + 0.5,
//! ∇U(θ) = (4θ³ + 3θ² − 26θ − 1)/14, target ρ(θ) ∝ e^{−U(θ)}. The "unknown" gradient noise is
//! simulated as ∇Ũ(θ) h = ∇U(θ) h + N(0, 2Bh), i.e. ∇Ũ = ∇U + N(0, 2B/h).

use rand_pcg::Pcg64;
use sgmcmc::rng::standard_normal_f64;

/// U(θ).
pub fn potential(theta: f64) -> f64 {
    (theta + 4.0) * (theta + 1.0) * (theta - 1.0) * (theta - 3.0) / 14.0 + 0.5
}

/// ∇U(θ).
pub fn gradient(theta: f64) -> f64 {
    (((4.0 * theta + 3.0) * theta - 26.0) * theta - 1.0) / 14.0
}

/// The unnormalised target density e^{−U(θ)}.
pub fn density(theta: f64) -> f64 {
    (-potential(theta)).exp()
}

/// The local maximum of U between the two wells (the barrier), found by bisection on ∇U over
/// [−1, 1], where ∇U changes sign once (∇U(−1) > 0 > ∇U(1)).
pub fn barrier() -> f64 {
    let (mut lo, mut hi) = (-1.0, 1.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if gradient(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A stochastic gradient ∇U + N(0, 2B/h) drawn from its own RNG.
pub fn noisy_gradient(h: f64, b: f64, seed: u64) -> impl FnMut(&[f64], &mut [f64]) {
    let mut rng = Pcg64::new(seed as u128, 0xd0b1e);
    let sd = (2.0 * b / h).sqrt();
    move |t: &[f64], g: &mut [f64]| {
        for (g, &t) in g.iter_mut().zip(t) {
            *g = gradient(t) + sd * standard_normal_f64(&mut rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_matches_central_differences() {
        for i in -50..=50 {
            let t = i as f64 * 0.11;
            let e = 1e-5;
            let fd = (potential(t + e) - potential(t - e)) / (2.0 * e);
            assert!(
                (fd - gradient(t)).abs() < 1e-7 * (1.0 + fd.abs()),
                "θ = {t}"
            );
        }
        let b = barrier();
        assert!(gradient(b).abs() < 1e-12 && b.abs() < 0.1);
    }
}
