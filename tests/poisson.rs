//! Statistical and edge-case tests of `sgmcmc::rng::poisson` (Knuth below λ = 10, PTRS above), f32 and f64.
//!
//! Every test uses a fixed seed. For each λ ∈ {0.5, 3, 9.5, 10.5, 50, 1000} and both float types,
//! 10⁶ draws must have
//!
//! * a sample mean within 5 standard errors of λ, SE = √(λ/n);
//! * a sample variance within 5 standard errors of λ, SE = √((μ₄ − σ⁴)/n) = √((λ + 2λ²)/n)
//!   (Poisson: μ₄ = λ(1 + 3λ), σ⁴ = λ²);
//! * a χ² goodness-of-fit p-value above α = 0.001 against the exact pmf, with bins of expected
//!   count ≥ 20 (tails pooled into the end bins) and df = bins − 1.
//!
//! Five standard errors is a two-sided false-alarm probability of 5.7·10⁻⁷ per statistic.
//! `checks_reject_a_wrong_rate` shows that the same checks fail for a 1 % error in λ at λ = 50
//! (and in the variance / shape, for a deliberately wrong sampler). Run with `-- --nocapture`
//! to see the statistics.

use rand_core::{Infallible, SeedableRng, TryRng};
use rand_pcg::Pcg64;
use sgmcmc::Real;
use sgmcmc::rng::poisson;

const N: usize = 1_000_000;
const Z_MAX: f64 = 5.0;
const ALPHA: f64 = 0.001;
const LAMBDAS: [f64; 6] = [0.5, 3.0, 9.5, 10.5, 50.0, 1000.0];

fn pcg(k: u64) -> Pcg64 {
    Pcg64::seed_from_u64(0x9015_0000 + k)
}

/// ln P(k) of Poisson(λ) in f64 through libm's lgamma.
fn ln_pmf(k: u64, lambda: f64) -> f64 {
    let k = k as f64;
    -lambda + k * lambda.ln() - libm::lgamma(k + 1.0)
}

/// The regularized upper incomplete gamma function Q(a, x) = Γ(a, x)/Γ(a) (the χ² survival
/// function is Q(df/2, χ²/2)): power series of P = 1 − Q for x < a + 1, modified-Lentz continued
/// fraction of Q otherwise (Numerical Recipes §6.2), to ~10⁻¹⁵.
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let prefactor = (a * x.ln() - x - libm::lgamma(a)).exp();
    if x < a + 1.0 {
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        (1.0 - sum * prefactor).max(0.0)
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (h * prefactor).min(1.0)
    }
}

#[test]
fn gamma_q_matches_closed_forms() {
    // Q(1, x) = e^{−x}; Q(df/2, ·) for df = 2 is the χ²₂ survival e^{−x/2}.
    for x in [0.1, 1.0, 2.5, 10.0, 40.0] {
        assert!((gamma_q(1.0, x) - (-x).exp()).abs() < 1e-14 * (-x).exp().max(1e-300) + 1e-16);
    }
    // Q(1/2, x) = erfc(√x).
    for x in [0.05, 0.5, 3.0, 12.0] {
        let e = libm::erfc(x.sqrt());
        assert!((gamma_q(0.5, x) - e).abs() < 1e-12 * e.max(1e-12), "{x}");
    }
    // Known χ² critical values at α = 0.001: df = 10 → 29.588, df = 50 → 86.661.
    assert!((gamma_q(5.0, 29.588 / 2.0) - 0.001).abs() < 2e-6);
    assert!((gamma_q(25.0, 86.661 / 2.0) - 0.001).abs() < 2e-6);
}

/// The statistics of one run of draws.
#[derive(Debug)]
struct Fit {
    mean_z: f64,
    var_z: f64,
    chi2: f64,
    df: usize,
    p_value: f64,
}

/// Mean and variance z-scores and the χ² test of integer samples against Poisson(λ).
fn fit(samples: &[u64], lambda: f64) -> Fit {
    let n = samples.len() as f64;
    let mean = samples.iter().map(|&k| k as f64).sum::<f64>() / n;
    let var = samples
        .iter()
        .map(|&k| (k as f64 - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    let mean_z = (mean - lambda) / (lambda / n).sqrt();
    let var_z = (var - lambda) / ((lambda + 2.0 * lambda * lambda) / n).sqrt();

    // Histogram up to a cutoff far in the tail (P(K > kmax) < 10⁻²⁰ for these λ).
    let kmax = (lambda + 15.0 * lambda.sqrt() + 30.0) as usize;
    let mut counts = vec![0u64; kmax + 2];
    for &k in samples {
        counts[(k as usize).min(kmax + 1)] += 1;
    }
    // Bins [lo, hi) with expected ≥ 20 each; the first starts at 0, the last runs to ∞.
    let expected: Vec<f64> = (0..=kmax)
        .map(|k| n * ln_pmf(k as u64, lambda).exp())
        .collect();
    let mut bins: Vec<(f64, f64)> = Vec::new(); // (expected, observed)
    let (mut e, mut o) = (0.0, 0.0);
    for k in 0..=kmax {
        e += expected[k];
        o += counts[k] as f64;
        if e >= 20.0 {
            bins.push((e, o));
            e = 0.0;
            o = 0.0;
        }
    }
    // The remainder (and the tail beyond kmax) goes into the last bin, with the exact tail mass.
    let total_expected: f64 = bins.iter().map(|b| b.0).sum();
    let last = bins.last_mut().expect("at least one bin");
    last.0 += n - total_expected;
    last.1 += o + counts[kmax + 1] as f64;
    let chi2: f64 = bins.iter().map(|&(e, o)| (o - e).powi(2) / e).sum();
    let df = bins.len() - 1;
    let p_value = gamma_q(df as f64 / 2.0, chi2 / 2.0);
    Fit {
        mean_z,
        var_z,
        chi2,
        df,
        p_value,
    }
}

fn draws<T: Real>(seed: u64, lambda: f64, n: usize) -> Vec<u64> {
    let mut rng = pcg(seed);
    let l = T::from_f64(lambda);
    (0..n).map(|_| poisson::<T, _>(&mut rng, l)).collect()
}

fn check<T: Real>(name: &str, seed: u64) {
    for (i, &lambda) in LAMBDAS.iter().enumerate() {
        let s = draws::<T>(seed + i as u64, lambda, N);
        let f = fit(&s, lambda);
        println!("{name} λ = {lambda}: {f:?}");
        assert!(
            f.df >= 1 && f.chi2.is_finite(),
            "{name} λ = {lambda}: {f:?}"
        );
        assert!(f.mean_z.abs() < Z_MAX, "{name} λ = {lambda}: mean {f:?}");
        assert!(f.var_z.abs() < Z_MAX, "{name} λ = {lambda}: variance {f:?}");
        assert!(f.p_value > ALPHA, "{name} λ = {lambda}: χ² {f:?}");
    }
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn poisson_f64_moments_and_chi_square() {
    check::<f64>("f64", 0);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn poisson_f32_moments_and_chi_square() {
    check::<f32>("f32", 100);
}

#[test]
fn checks_reject_a_wrong_rate() {
    // Draws at λ(1 + 1 %) tested against λ = 50: the mean is off by 0.5, i.e. 0.5/√(50/10⁶) ≈ 71 SE.
    let s = draws::<f64>(7, 50.5, N);
    let f = fit(&s, 50.0);
    assert!(f.mean_z.abs() > Z_MAX && f.p_value < ALPHA, "{f:?}");
    // A right mean with the wrong shape (a rounded normal of variance 2λ) fails variance and χ².
    let mut rng = pcg(8);
    let wrong: Vec<u64> = (0..N)
        .map(|_| {
            (50.0 + (100.0f64).sqrt() * sgmcmc::rng::standard_normal_f64(&mut rng) + 0.5).max(0.0)
                as u64
        })
        .collect();
    let f = fit(&wrong, 50.0);
    assert!(f.var_z.abs() > Z_MAX && f.p_value < ALPHA, "{f:?}");
}

/// A generator that counts the words it hands out.
struct Counting {
    inner: Pcg64,
    words: u64,
}

impl TryRng for Counting {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.words += 1;
        Ok(rand_core::Rng::next_u32(&mut self.inner))
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.words += 1;
        Ok(rand_core::Rng::next_u64(&mut self.inner))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        rand_core::Rng::fill_bytes(&mut self.inner, dst);
        Ok(())
    }
}

#[test]
fn uniforms_per_draw() {
    // Knuth: X + 1 uniforms, λ + 1 on average; the count's SD is √λ, so over 10⁵ draws 5 SE is
    // 5·√(λ/10⁵) ≤ 0.05 for λ ≤ 9.5.
    let n = 100_000u64;
    for lambda in [0.5, 3.0, 9.5] {
        let per = words_per_draw(lambda, n);
        println!("λ = {lambda}: {per:.4} uniforms per draw");
        let tol = 5.0 * (lambda / n as f64).sqrt();
        assert!((per - (lambda + 1.0)).abs() < tol, "λ = {lambda}: {per}");
    }
    // PTRS: two uniforms per attempt, attempts geometric with the acceptance probability p
    // documented in `sgmcmc::rng` (0.756, 0.854, 0.880, 0.892). The estimate 2/per of p has SE
    // ≈ p·√((1 − p)/10⁵) ≤ 0.0013; ±0.01 is more than 7 SE.
    for (lambda, p) in [(10.0, 0.756), (100.0, 0.854), (1000.0, 0.880), (1e6, 0.892)] {
        let per = words_per_draw(lambda, n);
        let acc = 2.0 / per;
        println!("λ = {lambda}: {per:.4} uniforms per draw, acceptance {acc:.4}");
        assert!((acc - p).abs() < 0.01, "λ = {lambda}: acceptance {acc}");
    }
}

fn words_per_draw(lambda: f64, n: u64) -> f64 {
    let mut c = Counting {
        inner: pcg(50),
        words: 0,
    };
    for _ in 0..n {
        poisson::<f64, _>(&mut c, lambda);
    }
    c.words as f64 / n as f64
}

#[test]
fn invalid_rates_return_zero_without_drawing() {
    for lambda in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut c = Counting {
            inner: pcg(60),
            words: 0,
        };
        assert_eq!(poisson::<f64, _>(&mut c, lambda), 0, "{lambda}");
        assert_eq!(poisson::<f32, _>(&mut c, lambda as f32), 0, "{lambda}");
        assert_eq!(c.words, 0, "{lambda}");
    }
}

#[test]
fn extreme_rates_do_not_panic() {
    let mut rng = pcg(70);
    // Tiny λ: P(K ≥ 1) ≈ λ.
    for _ in 0..1000 {
        assert_eq!(poisson(&mut rng, 1e-30f64), 0);
        assert_eq!(poisson(&mut rng, f32::MIN_POSITIVE), 0);
    }
    // Huge λ: near λ (within 10 standard deviations), and saturating rather than panicking.
    for lambda in [1e6f64, 1e12, 1e15] {
        let k = poisson(&mut rng, lambda) as f64;
        assert!(
            (k - lambda).abs() < 10.0 * lambda.sqrt() + 1.0,
            "{lambda}: {k}"
        );
    }
    for lambda in [1e6f32, 1e12] {
        let k = poisson(&mut rng, lambda) as f64;
        let l = lambda as f64;
        // f32 cannot resolve integers near 10¹² (spacing 2¹⁶): allow that spacing.
        assert!(
            (k - l).abs() < 10.0 * l.sqrt() + 1.0 + l * 2f64.powi(-23),
            "{lambda}: {k}"
        );
    }
    for lambda in [1e25f64, f64::MAX] {
        let _ = poisson(&mut rng, lambda);
    }
    for lambda in [1e25f32, f32::MAX] {
        let _ = poisson(&mut rng, lambda);
    }
    assert_eq!(poisson(&mut rng, 1e25f64), u64::MAX);
}
