//! Statistical, edge-case and value-stability tests of `sgmcmc::rng`.
//!
//! Every test uses a fixed seed, so it is deterministic; the statistical thresholds are 5 standard
//! errors (two-sided false-alarm probability 5.7·10⁻⁷ per statistic for a correct sampler) and a
//! Kolmogorov–Smirnov test at α = 0.001. The `checks_reject_*` tests feed deliberately wrong
//! samples to the same checks, showing that each check can fail. Run with `-- --nocapture` to see
//! the measured statistics.

use crate::common;

use common::ConstRng;
use rand_core::{Infallible, SeedableRng, TryRng};
use rand_pcg::Pcg64;
use sgmcmc::rng::{
    fill_standard_normal, gamma, standard_normal_f32, standard_normal_f64, uniform_f32,
    uniform_f64, uniform_open_f32, uniform_open_f64,
};
use std::f64::consts::SQRT_2;

/// Draws per distributional test.
const N: usize = 1_000_000;
/// Draws per tail-fraction test (the |z| > 4 fraction is 6.3·10⁻⁵: 10⁷ draws give ≈ 633 hits).
const N_TAIL: usize = 10_000_000;
/// Asymptotic Kolmogorov critical value at α = 0.001: P(√n·D > 1.9495) = 0.001.
const KS_CRIT: f64 = 1.9495;
/// Number of standard errors allowed for moment and proportion checks.
const Z_MAX: f64 = 5.0;

const SEED: u128 = 0xcafef00dd15ea5e5;
const STREAM: u128 = 0xa02bdbf7bb3c0a7ac28fa16a64abf96;

/// A fixed-seed generator per test. `seed_from_u64` expands `k` through PCG32 into an unrelated
/// state *and* stream; PCG64 streams that share a state and differ only in the increment are known
/// to be correlated, so the statistical tests do not use `Pcg64::new(SEED, STREAM + k)`.
fn pcg(k: u64) -> Pcg64 {
    Pcg64::seed_from_u64(0x5eed_0000 + k)
}

/// Φ(x), the standard normal CDF, through libm's erf.
fn phi(x: f64) -> f64 {
    0.5 * (1.0 + libm::erf(x / SQRT_2))
}

/// Two-sided normal tail probability P(|Z| > t) = 2(1 − Φ(t)) = erfc(t/√2) (erfc avoids the
/// cancellation in 1 − Φ).
fn two_sided_tail(t: f64) -> f64 {
    libm::erfc(t / SQRT_2)
}

/// Kolmogorov–Smirnov statistic D = sup |F_n − F| of the sample against `cdf` (sorts `xs`).
fn ks_statistic(xs: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter().enumerate().fold(0.0f64, |d, (i, &x)| {
        let f = cdf(x);
        d.max((i + 1) as f64 / n - f).max(f - i as f64 / n)
    })
}

/// Sample moments, accumulated in f64 by two passes (mean, then central moments).
#[derive(Debug, Clone, Copy)]
struct Moments {
    n: usize,
    mean: f64,
    /// Central second moment m₂ (the 1/n variance; the 1/(n−1) correction is 10⁻⁶ relative).
    var: f64,
    /// g₁ = m₃ / m₂^{3/2}
    skew: f64,
    /// g₂ = m₄ / m₂² − 3
    kurt: f64,
}

fn moments(xs: &[f64]) -> Moments {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let (mut m2, mut m3, mut m4) = (0.0, 0.0, 0.0);
    for &x in xs {
        let d = x - mean;
        let d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    let (m2, m3, m4) = (m2 / n, m3 / n, m4 / n);
    Moments {
        n: xs.len(),
        mean,
        var: m2,
        skew: m3 / (m2 * m2.sqrt()),
        kurt: m4 / (m2 * m2) - 3.0,
    }
}

/// The outcome of the standard-normal checks on one sample.
#[derive(Debug)]
struct NormalReport {
    m: Moments,
    ks_d: f64,
    z_mean: f64,
    z_var: f64,
    z_skew: f64,
    z_kurt: f64,
    ks_crit: f64,
}

impl NormalReport {
    /// Names of the checks that fail (empty for a sample consistent with N(0, 1)).
    fn failures(&self) -> Vec<&'static str> {
        let mut f = Vec::new();
        if self.z_mean.abs() > Z_MAX {
            f.push("mean");
        }
        if self.z_var.abs() > Z_MAX {
            f.push("var");
        }
        if self.z_skew.abs() > Z_MAX {
            f.push("skew");
        }
        if self.z_kurt.abs() > Z_MAX {
            f.push("kurt");
        }
        if self.ks_d > self.ks_crit {
            f.push("ks");
        }
        f
    }
}

/// Moments and KS of `xs` against N(0, 1). The standard errors are those of the sample statistics
/// of n i.i.d. N(0, 1) draws (moments μ₂ = 1, μ₄ = 3, μ₆ = 15, μ₈ = 105, odd ones 0):
fn normal_report(mut xs: Vec<f64>) -> NormalReport {
    let m = moments(&xs);
    let n = m.n as f64;
    // Mean: Var(x̄) = σ²/n = 1/n, so SE = 1/√n.
    let se_mean = (1.0 / n).sqrt();
    // Variance: Var(m₂) ≈ (μ₄ − σ⁴)/n = (3 − 1)/n, so SE = √(2/n).
    let se_var = (2.0 / n).sqrt();
    // Skewness: g₁ ≈ m₃ (m₂ ≈ 1), and with the estimated mean m₃ ≈ (1/n)Σx³ − 3x̄, whose variance
    // is (μ₆ − 6μ₄ + 9μ₂)/n = (15 − 18 + 9)/n = 6/n, so SE = √(6/n).
    let se_skew = (6.0 / n).sqrt();
    // Excess kurtosis: g₂ = m₄/m₂² − 3, delta method at (m₄, m₂) = (3, 1) with gradient (1, −6):
    // Var(m₄) = (μ₈ − μ₄²)/n = 96/n, Cov(m₄, m₂) = (μ₆ − μ₄μ₂)/n = 12/n, Var(m₂) = 2/n, so
    // Var(g₂) = (96 − 2·6·12 + 36·2)/n = 24/n and SE = √(24/n).
    let se_kurt = (24.0 / n).sqrt();
    let ks_d = ks_statistic(&mut xs, phi);
    NormalReport {
        m,
        ks_d,
        z_mean: m.mean / se_mean,
        z_var: (m.var - 1.0) / se_var,
        z_skew: m.skew / se_skew,
        z_kurt: m.kurt / se_kurt,
        ks_crit: KS_CRIT / n.sqrt(),
    }
}

fn assert_standard_normal(label: &str, xs: Vec<f64>) {
    let r = normal_report(xs);
    println!(
        "{label}: n = {}, mean = {:+.6} (z {:+.2}), var = {:.6} (z {:+.2}), skew = {:+.6} \
         (z {:+.2}), kurt = {:+.6} (z {:+.2}), KS D = {:.6} (crit {:.6})",
        r.m.n,
        r.m.mean,
        r.z_mean,
        r.m.var,
        r.z_var,
        r.m.skew,
        r.z_skew,
        r.m.kurt,
        r.z_kurt,
        r.ks_d,
        r.ks_crit
    );
    assert!(
        r.failures().is_empty(),
        "{label} failed {:?}: {r:#?}",
        r.failures()
    );
}

/// The outcome of the U(0, 1) checks on one sample.
#[derive(Debug)]
struct UniformReport {
    mean: f64,
    var: f64,
    z_mean: f64,
    z_var: f64,
    ks_d: f64,
    ks_crit: f64,
}

impl UniformReport {
    fn failures(&self) -> Vec<&'static str> {
        let mut f = Vec::new();
        if self.z_mean.abs() > Z_MAX {
            f.push("mean");
        }
        if self.z_var.abs() > Z_MAX {
            f.push("var");
        }
        if self.ks_d > self.ks_crit {
            f.push("ks");
        }
        f
    }
}

fn uniform_report(mut xs: Vec<f64>) -> UniformReport {
    let m = moments(&xs);
    let n = m.n as f64;
    // U(0, 1): mean 1/2, σ² = 1/12, so SE(x̄) = √(1/(12n)).
    let se_mean = (1.0 / (12.0 * n)).sqrt();
    // Var(m₂) ≈ (μ₄ − σ⁴)/n with μ₄ = 1/80: (1/80 − 1/144)/n = 1/(180n), so SE = √(1/(180n)).
    let se_var = (1.0 / (180.0 * n)).sqrt();
    let ks_d = ks_statistic(&mut xs, |x| x.clamp(0.0, 1.0));
    UniformReport {
        mean: m.mean,
        var: m.var,
        z_mean: (m.mean - 0.5) / se_mean,
        z_var: (m.var - 1.0 / 12.0) / se_var,
        ks_d,
        ks_crit: KS_CRIT / n.sqrt(),
    }
}

fn assert_uniform(label: &str, xs: Vec<f64>, open: bool) {
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    assert!(lo >= 0.0 && hi < 1.0, "{label}: range [{lo}, {hi}]");
    if open {
        assert!(lo > 0.0, "{label}: returned 0");
    }
    let r = uniform_report(xs);
    println!(
        "{label}: mean = {:.6} (z {:+.2}), var = {:.6} (z {:+.2}), KS D = {:.6} (crit {:.6}), \
         min = {lo:e}, max = {hi}",
        r.mean, r.z_mean, r.var, r.z_var, r.ks_d, r.ks_crit
    );
    assert!(
        r.failures().is_empty(),
        "{label} failed {:?}: {r:#?}",
        r.failures()
    );
}

// ---- standard normals ---------------------------------------------------------------------------

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn standard_normal_f64_moments_and_ks() {
    let mut rng = pcg(1);
    let xs: Vec<f64> = (0..N).map(|_| standard_normal_f64(&mut rng)).collect();
    assert_standard_normal("standard_normal_f64", xs);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn standard_normal_f32_moments_and_ks() {
    let mut rng = pcg(2);
    let xs: Vec<f64> = (0..N)
        .map(|_| f64::from(standard_normal_f32(&mut rng)))
        .collect();
    assert_standard_normal("standard_normal_f32", xs);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn fill_standard_normal_f64_moments_and_ks() {
    let mut rng = pcg(3);
    let mut buf = vec![0.0f64; N];
    // Uneven chunks, as a sampler filling its noise buffer step by step would.
    for chunk in buf.chunks_mut(997) {
        fill_standard_normal(&mut rng, chunk);
    }
    assert_standard_normal("fill_standard_normal::<f64>", buf);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn fill_standard_normal_f32_moments_and_ks() {
    let mut rng = pcg(4);
    let mut buf = vec![0.0f32; N];
    fill_standard_normal(&mut rng, &mut buf);
    assert_standard_normal(
        "fill_standard_normal::<f32>",
        buf.into_iter().map(f64::from).collect(),
    );
}

#[test]
fn fill_matches_successive_draws() {
    let mut a = pcg(5);
    let mut b = pcg(5);
    let mut buf64 = [0.0f64; 1000];
    fill_standard_normal(&mut a, &mut buf64);
    assert!(
        buf64
            .iter()
            .all(|&z| z.to_bits() == standard_normal_f64(&mut b).to_bits())
    );
    let mut buf32 = [0.0f32; 1000];
    fill_standard_normal(&mut a, &mut buf32);
    assert!(
        buf32
            .iter()
            .all(|&z| z.to_bits() == standard_normal_f32(&mut b).to_bits())
    );
    // Both generators are in the same state afterwards; an empty fill draws nothing.
    fill_standard_normal::<f64, _>(&mut a, &mut []);
    assert_eq!(uniform_f64(&mut a).to_bits(), uniform_f64(&mut b).to_bits());
}

/// Counts the fractions of |z| > 3 and |z| > 4 in `N_TAIL` draws against erfc(t/√2), each within
/// `Z_MAX` binomial standard errors √(p(1 − p)/n); returns the failing thresholds.
fn tail_failures(label: &str, mut draw: impl FnMut() -> f64) -> Vec<f64> {
    let thresholds = [3.0, 4.0];
    let mut counts = [0u64; 2];
    for _ in 0..N_TAIL {
        let a = draw().abs();
        for (c, &t) in counts.iter_mut().zip(&thresholds) {
            *c += u64::from(a > t);
        }
    }
    let n = N_TAIL as f64;
    let mut failed = Vec::new();
    for (&c, &t) in counts.iter().zip(&thresholds) {
        let p = two_sided_tail(t);
        let se = (p * (1.0 - p) / n).sqrt();
        let z = (c as f64 / n - p) / se;
        println!(
            "{label}: P(|z| > {t}) = {:.4e} vs 2(1 − Φ({t})) = {p:.4e} (count {c}, z {z:+.2})",
            c as f64 / n
        );
        if z.abs() > Z_MAX {
            failed.push(t);
        }
    }
    failed
}

#[test]
fn standard_normal_f64_tail_fractions() {
    let mut rng = pcg(6);
    let failed = tail_failures("standard_normal_f64", || standard_normal_f64(&mut rng));
    assert!(failed.is_empty(), "tail fractions off at {failed:?}");
}

#[test]
fn standard_normal_f32_tail_fractions() {
    let mut rng = pcg(7);
    let failed = tail_failures("standard_normal_f32", || {
        f64::from(standard_normal_f32(&mut rng))
    });
    assert!(failed.is_empty(), "tail fractions off at {failed:?}");
}

/// KS test of the shape of the far tail: given |Z| > t, P(|Z| ≤ z) = 1 − erfc(z/√2)/erfc(t/√2).
/// With t = 3.7 beyond both ziggurats' r (3.654 and 3.443), every such value comes from the
/// Marsaglia tail sampler. Returns (count, D, critical D).
fn tail_shape_ks(mut draw: impl FnMut() -> f64) -> (usize, f64, f64) {
    let t = 3.7;
    let mut tail: Vec<f64> = (0..N_TAIL)
        .map(|_| draw().abs())
        .filter(|&a| a > t)
        .collect();
    let q = two_sided_tail(t);
    let d = ks_statistic(&mut tail, |z| 1.0 - two_sided_tail(z) / q);
    (tail.len(), d, KS_CRIT / (tail.len() as f64).sqrt())
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn standard_normal_tail_shape_ks() {
    let mut rng = pcg(8);
    let (n64, d64, c64) = tail_shape_ks(|| standard_normal_f64(&mut rng));
    println!("standard_normal_f64 |z| > 3.7: n = {n64}, KS D = {d64:.5} (crit {c64:.5})");
    let (n32, d32, c32) = tail_shape_ks(|| f64::from(standard_normal_f32(&mut rng)));
    println!("standard_normal_f32 |z| > 3.7: n = {n32}, KS D = {d32:.5} (crit {c32:.5})");
    // 10⁷·erfc(3.7/√2) ≈ 2157 expected; a missing or doubled tail would show here first.
    assert!(
        (1900..2450).contains(&n64) && (1900..2450).contains(&n32),
        "{n64} {n32}"
    );
    assert!(d64 < c64 && d32 < c32);
}

#[test]
fn standard_normal_f64_agrees_with_rand_distr() {
    // rand_distr's StandardNormal is the same ZIGNOR algorithm with the same bit layout and the
    // same word consumption, but its tables were generated from v truncated to 12 digits; ours are
    // correctly rounded, so values agree to < 10⁻⁹ relative (3.3·10⁻¹⁰ measured), not bit for
    // bit.
    use rand_distr::{Distribution, StandardNormal};
    let mut ours = pcg(9);
    let mut theirs = pcg(9);
    let mut max_rel = 0.0f64;
    for k in 0..N {
        let a = standard_normal_f64(&mut ours);
        let b: f64 = StandardNormal.sample(&mut theirs);
        let rel = (a - b).abs() / b.abs().max(1e-300);
        assert!(rel < 1e-9 || (a - b).abs() < 1e-15, "draw {k}: {a} vs {b}");
        max_rel = max_rel.max(rel);
    }
    println!("max relative difference to rand_distr over {N} draws: {max_rel:e}");
    assert_eq!(
        uniform_f64(&mut ours).to_bits(),
        uniform_f64(&mut theirs).to_bits()
    );
}

// ---- Gamma variates -----------------------------------------------------------------------------

/// The regularized lower incomplete gamma function P(a, x) = γ(a, x)/Γ(a), the Gamma(a, 1) CDF:
/// its power series for x < a + 1 and the modified-Lentz continued fraction of Q = 1 − P
/// otherwise (Numerical Recipes §6.2), both to ~10⁻¹⁵, with libm's lgamma for the prefactor
/// x^a e^{−x}/Γ(a). Checked against closed forms in `gamma_cdf_matches_closed_forms`.
fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let prefactor = (a * x.ln() - x - libm::lgamma(a)).exp();
    if x < a + 1.0 {
        // γ(a, x) = x^a e^{−x} Σₙ xⁿ / (a(a+1)…(a+n)).
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        (sum * prefactor).min(1.0)
    } else {
        // Γ(a, x) = x^a e^{−x} · 1/(x + 1 − a − 1·(1 − a)/(x + 3 − a − 2·(2 − a)/(x + 5 − a − …))).
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
        (1.0 - prefactor * h).max(0.0)
    }
}

#[test]
fn gamma_cdf_matches_closed_forms() {
    // P(1, x) = 1 − e^{−x}; P(2, x) = 1 − e^{−x}(1 + x); P(½, x) = erf(√x);
    // P(5, x) = 1 − e^{−x} Σ_{k<5} x^k/k!. Both branches (x < a + 1 and x ≥ a + 1) are hit. The
    // tolerance is absolute: the closed forms themselves cancel near 0 (1 − e^{−x}(1 + x) at
    // x = 0.01 keeps only ~12 digits), and the KS test needs far less.
    for &x in &[1e-6f64, 0.01, 0.3, 0.9, 1.5, 2.9, 3.1, 5.0, 8.0, 20.0, 40.0] {
        let e = (-x).exp();
        let p5 = 1.0 - e * (1.0 + x + x * x / 2.0 + x.powi(3) / 6.0 + x.powi(4) / 24.0);
        for (a, exact) in [
            (1.0, -(-x).exp_m1()),
            (2.0, 1.0 - e * (1.0 + x)),
            (0.5, libm::erf(x.sqrt())),
            (5.0, p5),
        ] {
            let got = gamma_p(a, x);
            assert!(
                (got - exact).abs() < 1e-13,
                "P({a}, {x}) = {got}, expected {exact}"
            );
        }
    }
}

/// The central moments μ₀ … μ₈ of Gamma(k, 1), from the raw moments E[Xⁿ] = k(k+1)…(k+n−1) by
/// the binomial expansion of E[(X − k)ⁿ] (cancellation costs at most ~3 of 16 digits for k ≤ 5).
/// The closed forms are μ₂ = k, μ₃ = 2k, μ₄ = 3k² + 6k, μ₆ = 15k³ + 130k² + 120k,
/// μ₈ = 105k⁴ + 2380k³ + 7308k² + 5040k (checked in `gamma_moment_formulas`).
fn gamma_central_moments(k: f64) -> [f64; 9] {
    let mut raw = [1.0f64; 9];
    for n in 1..9 {
        raw[n] = raw[n - 1] * (k + (n - 1) as f64);
    }
    let mut mu = [0.0f64; 9];
    for (n, m) in mu.iter_mut().enumerate() {
        let mut binom = 1.0;
        for (j, &raw_j) in raw.iter().enumerate().take(n + 1) {
            // C(n, j) E[X^j] (−k)^{n−j}
            *m += binom * raw_j * (-k).powi((n - j) as i32);
            binom = binom * (n - j) as f64 / (j + 1) as f64;
        }
    }
    mu
}

/// E[q(Y)²] for the polynomial q(y) = Σ cᵢ yⁱ (degree ≤ 4) of a centred variable Y with central
/// moments `mu` (μ₀ = 1, μ₁ = 0): Σᵢⱼ cᵢ cⱼ μᵢ₊ⱼ.
fn expect_sq(c: [f64; 5], mu: &[f64; 9]) -> f64 {
    let mut s = 0.0;
    for i in 0..5 {
        for j in 0..5 {
            s += c[i] * c[j] * mu[i + j];
        }
    }
    s
}

/// The asymptotic standard errors of (mean, m₂, g₁, g₂) over n draws of a distribution with
/// central moments `mu`, by the delta method on influence functions (the mean is estimated, so
/// each central moment mᵣ has influence IFᵣ(y) = yʳ − μᵣ − r μᵣ₋₁ y with y = x − μ):
///
/// ```text
/// mean:  IF = y                                     Var = μ₂/n
/// m₂:    IF₂ = y² − μ₂                              Var = (μ₄ − μ₂²)/n
/// g₁ = m₃/m₂^{3/2}:  IF = IF₃/μ₂^{3/2} − (3/2) μ₃ μ₂^{−5/2} IF₂,   IF₃ = y³ − μ₃ − 3μ₂ y
/// g₂ = m₄/m₂² − 3:   IF = IF₄/μ₂² − 2 μ₄ μ₂^{−3} IF₂,            IF₄ = y⁴ − μ₄ − 4μ₃ y
/// SE = √(E[IF²]/n)
/// ```
///
/// For N(0, 1) this gives 1/n, 2/n, 6/n and 24/n, the normal tests' values (checked in
/// `gamma_moment_formulas`).
fn moment_standard_errors(mu: &[f64; 9], n: f64) -> [f64; 4] {
    let (m2, m3, m4) = (mu[2], mu[3], mu[4]);
    let if2 = [-m2, 0.0, 1.0, 0.0, 0.0];
    let if3 = [-m3, -3.0 * m2, 0.0, 1.0, 0.0];
    let if4 = [-m4, -4.0 * m3, 0.0, 0.0, 1.0];
    let comb = |a: [f64; 5], wa: f64, b: [f64; 5], wb: f64| -> [f64; 5] {
        core::array::from_fn(|i| wa * a[i] + wb * b[i])
    };
    let g1 = comb(if3, m2.powf(-1.5), if2, -1.5 * m3 * m2.powf(-2.5));
    let g2 = comb(if4, m2.powi(-2), if2, -2.0 * m4 * m2.powi(-3));
    [
        (m2 / n).sqrt(),
        (expect_sq(if2, mu) / n).sqrt(),
        (expect_sq(g1, mu) / n).sqrt(),
        (expect_sq(g2, mu) / n).sqrt(),
    ]
}

#[test]
fn gamma_moment_formulas() {
    // Standard normal central moments: the generic SEs reduce to the normal tests' √(c/n).
    let normal = [1.0, 0.0, 1.0, 0.0, 3.0, 0.0, 15.0, 0.0, 105.0];
    let se = moment_standard_errors(&normal, 1.0);
    for (got, want) in se.iter().zip([1.0f64, 2.0, 6.0, 24.0]) {
        assert!((got - want.sqrt()).abs() < 1e-12, "{got} vs √{want}");
    }
    for k in [0.5, 1.0, 2.0, 5.0] {
        let mu = gamma_central_moments(k);
        let closed = [
            (2, k),
            (3, 2.0 * k),
            (4, 3.0 * k * k + 6.0 * k),
            (6, 15.0 * k.powi(3) + 130.0 * k * k + 120.0 * k),
            (
                8,
                105.0 * k.powi(4) + 2380.0 * k.powi(3) + 7308.0 * k * k + 5040.0 * k,
            ),
        ];
        for (r, want) in closed {
            assert!(
                (mu[r] / want - 1.0).abs() < 1e-11,
                "k = {k}: μ{r} = {}",
                mu[r]
            );
        }
    }
}

/// Moments (z-scores) and KS of `xs` against Gamma(k, 1); returns the names of failing checks.
/// Targets: mean k, variance k, skewness 2/√k, excess kurtosis 6/k, each within `Z_MAX` of the
/// delta-method SEs of [`moment_standard_errors`] at Gamma(k)'s own central moments; KS at
/// α = 0.001 against [`gamma_p`].
fn gamma_failures(label: &str, k: f64, mut xs: Vec<f64>) -> Vec<&'static str> {
    let m = moments(&xs);
    let n = m.n as f64;
    let [se_mean, se_var, se_skew, se_kurt] = moment_standard_errors(&gamma_central_moments(k), n);
    let z = [
        (m.mean - k) / se_mean,
        (m.var - k) / se_var,
        (m.skew - 2.0 / k.sqrt()) / se_skew,
        (m.kurt - 6.0 / k) / se_kurt,
    ];
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let d = ks_statistic(&mut xs, |x| gamma_p(k, x));
    let crit = KS_CRIT / n.sqrt();
    println!(
        "{label}: mean {:.5} (z {:+.2}), var {:.5} (z {:+.2}), skew {:.5} (z {:+.2}), \
         kurt {:.5} (z {:+.2}), KS D = {d:.6} (crit {crit:.6}), min {min:e}",
        m.mean, z[0], m.var, z[1], m.skew, z[2], m.kurt, z[3]
    );
    let mut f = Vec::new();
    for (name, z) in ["mean", "var", "skew", "kurt"].into_iter().zip(z) {
        if z.is_nan() || z.abs() > Z_MAX {
            f.push(name);
        }
    }
    if d.is_nan() || d > crit {
        f.push("ks");
    }
    if min.is_nan() || min < 0.0 {
        f.push("negative");
    }
    f
}

const GAMMA_SHAPES: [f64; 4] = [0.5, 1.0, 2.0, 5.0];

// Seeds: the first choice, pcg(20 + j), gave √n·D = 1.947 for shape ½ (critical 1.9495, p ≈ 0.001,
// mean at z = +2.75); 30 further seeds for that shape gave a spread consistent with the
// Kolmogorov distribution (median 0.75, largest 1.88), and 6 seeds × 4·10⁶ draws per shape
// {½, 1, 5} and type stayed below 1.6, so it was chance, and the f64 seeds were moved to 50 + j.
#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn gamma_f64_moments_and_ks() {
    for (j, &k) in GAMMA_SHAPES.iter().enumerate() {
        let mut rng = pcg(50 + j as u64);
        let xs: Vec<f64> = (0..N).map(|_| gamma(&mut rng, k)).collect();
        let f = gamma_failures(&format!("gamma::<f64>({k})"), k, xs);
        assert!(f.is_empty(), "gamma::<f64>({k}) failed {f:?}");
    }
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn gamma_f32_moments_and_ks() {
    for (j, &k) in GAMMA_SHAPES.iter().enumerate() {
        let mut rng = pcg(30 + j as u64);
        let shape = k as f32; // exact for these shapes
        let xs: Vec<f64> = (0..N).map(|_| f64::from(gamma(&mut rng, shape))).collect();
        let f = gamma_failures(&format!("gamma::<f32>({k})"), k, xs);
        assert!(f.is_empty(), "gamma::<f32>({k}) failed {f:?}");
    }
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn gamma_checks_reject_wrong_variates() {
    let mut rng = pcg(40);
    let base: Vec<f64> = (0..N).map(|_| gamma(&mut rng, 2.0f64)).collect();
    assert!(gamma_failures("Gamma(2)", 2.0, base.clone()).is_empty());
    // Scaled by 1.01: mean 2.02, SE √(2/n) = 0.0014, 14 SE.
    let f = gamma_failures(
        "1.01 × Gamma(2)",
        2.0,
        base.iter().map(|x| 1.01 * x).collect(),
    );
    assert!(f.contains(&"mean"), "{f:?}");
    // Gamma(2) tested as Gamma(2.05): the mean is 0.05 (35 SE) off, KS D ≈ 0.01 (crit 0.002).
    let f = gamma_failures("Gamma(2) vs 2.05", 2.05, base.clone());
    assert!(f.contains(&"mean") && f.contains(&"ks"), "{f:?}");
    // The Wilson–Hilferty proposal d·(1 + x/√(9d))³ without the rejection step: close in mean
    // and variance, but its skewness and KS distance give it away.
    let d: f64 = 2.0 - 1.0 / 3.0;
    let wh: Vec<f64> = (0..N)
        .map(|_| d * (1.0 + standard_normal_f64(&mut rng) / (9.0 * d).sqrt()).powi(3))
        .collect();
    let f = gamma_failures("Wilson–Hilferty(2)", 2.0, wh);
    assert!(!f.is_empty(), "{f:?}");
}

#[test]
fn gamma_edge_cases() {
    let mut rng = pcg(41);
    // Invalid shapes: NaN, without panicking.
    for a in [0.0f64, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(gamma(&mut rng, a).is_nan(), "{a}");
        assert!(gamma(&mut rng, a as f32).is_nan(), "{a}");
    }
    // Tiny shapes: U^{1/a} may underflow to 0, never to a negative or NaN value.
    for a in [1e-3f64, 1e-10] {
        for _ in 0..1000 {
            let x = gamma(&mut rng, a);
            assert!(x >= 0.0 && x.is_finite(), "{a}: {x}");
            let y = gamma(&mut rng, a as f32);
            assert!(y >= 0.0 && y.is_finite(), "{a}: {y}");
        }
    }
    // Huge shapes stay finite and near a (relative SD 1/√a).
    for a in [1e6f64, 1e30] {
        let x = gamma(&mut rng, a);
        assert!((x / a - 1.0).abs() < 10.0 / a.sqrt(), "{a}: {x}");
        let y = gamma(&mut rng, a as f32);
        assert!(
            (f64::from(y) / a - 1.0).abs() < 10.0 / a.sqrt() + 1e-6,
            "{a}: {y}"
        );
    }
    // A degenerate generator whose every normal is ≈ −3.3 (f64: layer 1, u = −0.9; f32: layer 1,
    // sign bit set, u = 0.8), below −1/c = −√(9d) for shape 1 (−2.45) and 1.5 (−3.24, the boost
    // of ½): every attempt is rejected at v ≤ 0, and after 64 attempts the documented fallback
    // d = a − 1/3 comes back (times U^{1/a} for the boost), instead of an endless loop.
    let (w64, w32) = (0x0CCC_CCCC_CCCC_D001u64, 0xCCCC_D081u64);
    assert!(standard_normal_f64(&mut ConstRng(w64)) < -3.2);
    assert!(standard_normal_f32(&mut ConstRng(w32)) < -2.7);
    assert_eq!(gamma(&mut ConstRng(w64), 1.0f64), 1.0 - 1.0 / 3.0);
    assert_eq!(gamma(&mut ConstRng(w32), 1.0f32), 1.0 - 1.0 / 3.0);
    let u = uniform_open_f64(&mut ConstRng(w64));
    assert_eq!(
        gamma(&mut ConstRng(w64), 0.5f64),
        (1.5 - 1.0 / 3.0) * libm::exp(libm::log(u) / 0.5)
    );
    assert!(gamma(&mut ConstRng(w32), 0.5f32).is_finite());
}

// ---- generator word consumption -----------------------------------------------------------------

/// Wraps a generator and counts the words drawn through each method.
struct Counting<R> {
    inner: R,
    u32s: u64,
    u64s: u64,
}

impl<R: rand_core::Rng> TryRng for Counting<R> {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.u32s += 1;
        Ok(self.inner.next_u32())
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.u64s += 1;
        Ok(self.inner.next_u64())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.inner.fill_bytes(dst);
        Ok(())
    }
}

#[test]
fn uniforms_draw_exactly_one_word_of_their_width() {
    let mut c = Counting {
        inner: pcg(10),
        u32s: 0,
        u64s: 0,
    };
    let _ = uniform_f32(&mut c);
    let _ = uniform_open_f32(&mut c);
    assert_eq!((c.u32s, c.u64s), (2, 0));
    let _ = uniform_f64(&mut c);
    let _ = uniform_open_f64(&mut c);
    assert_eq!((c.u32s, c.u64s), (2, 2));
}

/// Draws `N` normals through a counting wrapper; returns (words per draw, fraction of draws that
/// used exactly one word, u32 words, u64 words).
fn word_usage(f32_path: bool) -> (f64, f64, u64, u64) {
    let mut c = Counting {
        inner: pcg(11),
        u32s: 0,
        u64s: 0,
    };
    let mut single = 0u64;
    for _ in 0..N {
        let before = c.u32s + c.u64s;
        if f32_path {
            let _ = standard_normal_f32(&mut c);
        } else {
            let _ = standard_normal_f64(&mut c);
        }
        single += u64::from(c.u32s + c.u64s - before == 1);
    }
    let n = N as f64;
    (
        (c.u32s + c.u64s) as f64 / n,
        single as f64 / n,
        c.u32s,
        c.u64s,
    )
}

#[test]
fn standard_normal_common_path_uses_one_word() {
    // Per attempt, with the tables' values (n layers, acceptance √(π/2)/(n·v)):
    //   P(common path) = (1/n) Σᵢ X[i+1]/X[i]           = 0.9850809 (f64), 0.9724404 (f32),
    //   words/draw = (1 + P(wedge) + P(tail)·2/a_tail) / acceptance = 1.02203 (f64), 1.04092 (f32),
    // where a_tail = r·√(2π)·e^{r²/2}·Q(r) = 0.9377 / 0.9311 is the tail sampler's acceptance.
    // A draw uses one word with probability P(common path) (binomial SE over N draws); words per
    // draw have a standard deviation below 0.25, so 5 SE of their mean is below 0.00125.
    for (f32_path, p_single, mean_words) in [
        (false, 0.985_080_9, 1.022_03),
        (true, 0.972_440_4, 1.040_92),
    ] {
        let (words, single, u32s, u64s) = word_usage(f32_path);
        println!("f32 path {f32_path}: {words:.5} words/draw, one-word fraction {single:.6}");
        if f32_path {
            assert_eq!(u64s, 0, "the f32 normal must only call next_u32");
        } else {
            assert_eq!(u32s, 0, "the f64 normal must only call next_u64");
        }
        let se = (p_single * (1.0 - p_single) / N as f64).sqrt();
        assert!(
            (single - p_single).abs() < Z_MAX * se,
            "{single} vs {p_single}"
        );
        assert!(
            (words - mean_words).abs() < Z_MAX * 0.25 / (N as f64).sqrt(),
            "{words}"
        );
    }
}

// ---- uniforms -----------------------------------------------------------------------------------

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn uniform_f64_moments_and_ks() {
    let mut rng = pcg(12);
    assert_uniform(
        "uniform_f64",
        (0..N).map(|_| uniform_f64(&mut rng)).collect(),
        false,
    );
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn uniform_f32_moments_and_ks() {
    let mut rng = pcg(13);
    let xs = (0..N).map(|_| f64::from(uniform_f32(&mut rng))).collect();
    assert_uniform("uniform_f32", xs, false);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn uniform_open_f64_moments_and_ks() {
    let mut rng = pcg(14);
    assert_uniform(
        "uniform_open_f64",
        (0..N).map(|_| uniform_open_f64(&mut rng)).collect(),
        true,
    );
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn uniform_open_f32_moments_and_ks() {
    let mut rng = pcg(15);
    let xs = (0..N)
        .map(|_| f64::from(uniform_open_f32(&mut rng)))
        .collect();
    assert_uniform("uniform_open_f32", xs, true);
}

#[test]
fn uniform_edges_with_all_zero_and_all_one_bits() {
    let (mut zeros, mut ones) = (ConstRng(0), ConstRng(u64::MAX));
    // Half-open: exactly 0 from zero bits, the largest grid point below 1 from one bits.
    assert_eq!(uniform_f64(&mut zeros), 0.0);
    assert_eq!(uniform_f64(&mut ones), 1.0 - 2f64.powi(-53));
    assert_eq!(uniform_f32(&mut zeros), 0.0);
    assert_eq!(uniform_f32(&mut ones), 1.0 - 2f32.powi(-24));
    // Open: half a grid step away from both ends, so never 0 nor 1 and ln is finite.
    let lo64 = uniform_open_f64(&mut zeros);
    let hi64 = uniform_open_f64(&mut ones);
    assert_eq!((lo64, hi64), (2f64.powi(-53), 1.0 - 2f64.powi(-53)));
    let lo32 = uniform_open_f32(&mut zeros);
    let hi32 = uniform_open_f32(&mut ones);
    assert_eq!((lo32, hi32), (2f32.powi(-24), 1.0 - 2f32.powi(-24)));
    for u in [lo64, hi64] {
        assert!(u > 0.0 && u < 1.0 && u.ln().is_finite() && u.ln() < 0.0);
    }
    for u in [lo32, hi32] {
        assert!(u > 0.0 && u < 1.0 && u.ln().is_finite() && u.ln() < 0.0);
    }
}

// ---- the documented bit layout, word by word ----------------------------------------------------

/// Replays a fixed list of words (the low half for `next_u32`); panics when exhausted.
struct Script<'a>(&'a [u64]);

impl TryRng for Script<'_> {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.try_next_u64().map(|w| w as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let (first, rest) = self.0.split_first().expect("script exhausted");
        self.0 = rest;
        Ok(*first)
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Infallible> {
        unimplemented!()
    }
}

#[test]
fn scripted_words_follow_the_documented_bit_layout() {
    // Published r of the two ziggurats (Marsaglia & Tsang 2000), to the precision of each type.
    let r64 = 3.654_152_885_361_009_f64;
    let r32 = 3.442_619_8_f32;

    // f64, common path: layer 1 (X[1] = r, X[2] ≈ 3.449), u = 1/2 from the top 52 bits
    // (3.5 = 2·1.75: mantissa 0b11 followed by zeros) gives x = r/2 < X[2].
    let w = 0xC000_0000_0000_0000 | 1;
    assert_eq!(standard_normal_f64(&mut Script(&[w])), 0.5 * r64);
    // u = −1/2 (float 2.5 = 2·1.25: mantissa 0b01…) gives −r/2.
    let w = 0x4000_0000_0000_0000 | 1;
    assert_eq!(standard_normal_f64(&mut Script(&[w])), -0.5 * r64);

    // f64, tail: layer 0 with u = −1 (all-zero mantissa) lands at −X[0], beyond r; then the
    // tail takes u₁ = open(2⁵¹ << 12) = (2⁵¹ + ½)·2⁻⁵² ≈ ½ so ξ = −ln(u₁)/r ≈ ln 2/r, and
    // u₂ = open(0) = 2⁻⁵³ so 2η = 2·53·ln 2 ≥ ξ²: accepted, z = −(r + ξ).
    let u1 = ((1u64 << 51) as f64 + 0.5) * 2f64.powi(-52);
    let z = standard_normal_f64(&mut Script(&[0, (1 << 51) << 12, 0]));
    assert_eq!(z, -(r64 + -libm::log(u1) / r64));

    // f32, common path: layer 1, sign bit clear, u = 2²³·2⁻²⁴ = ½: x = r/2 (< X[2] ≈ 3.223).
    let w = u64::from((1u32 << 23) << 8 | 1);
    assert_eq!(standard_normal_f32(&mut Script(&[w])), 0.5 * r32);
    // The same with bit 7 set: the sign flips, nothing else changes.
    let w = u64::from((1u32 << 23) << 8 | 0x80 | 1);
    assert_eq!(standard_normal_f32(&mut Script(&[w])), -0.5 * r32);

    // f32, tail: layer 0, sign bit set, u = 1 − 2⁻²⁴ so x ≈ X[0] ≈ 3.713 > r; then u₁ =
    // open(2²² << 9) = (2²² + ½)·2⁻²³ ≈ ½, u₂ = open(0) = 2⁻²⁴: accepted, z = −(r + ξ), all in f32.
    let w0 = u64::from(0xFFFF_FF00u32 | 0x80);
    let u1 = ((1u32 << 22) as f32 + 0.5) * 2f32.powi(-23);
    let z = standard_normal_f32(&mut Script(&[w0, u64::from((1u32 << 22) << 9), 0]));
    if cfg!(feature = "micromath") {
        // micromath's ln is an approximation: only the branch and the sign are exact.
        assert!(z < -r32 && z > -(r32 + 0.25), "{z}");
    } else {
        assert_eq!(z, -(r32 + libm::logf(1.0 / u1) / r32));
    }
}

// ---- value stability ----------------------------------------------------------------------------

/// Order-sensitive 64-bit hash of a sequence of float bit patterns.
fn hash_bits(bits: impl Iterator<Item = u64>) -> u64 {
    bits.fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23)
    })
}

/// A drawing function under test, instantiated for the documented generator.
type Draw<T> = fn(&mut Pcg64) -> T;

fn first5_f64(f: Draw<f64>) -> [u64; 5] {
    let mut rng = Pcg64::new(SEED, STREAM);
    [(); 5].map(|()| f(&mut rng).to_bits())
}

fn first5_f32(f: Draw<f32>) -> [u32; 5] {
    let mut rng = Pcg64::new(SEED, STREAM);
    [(); 5].map(|()| f(&mut rng).to_bits())
}

#[test]
fn value_stability_first_five_draws() {
    // Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96), as in the doc examples.
    // Any change of bit layout, tables or arithmetic shows up here.
    let cases64: [(&str, Draw<f64>, [f64; 5]); 3] = [
        ("uniform_f64", uniform_f64, UNIFORM_F64),
        ("uniform_open_f64", uniform_open_f64, UNIFORM_OPEN_F64),
        (
            "standard_normal_f64",
            standard_normal_f64,
            STANDARD_NORMAL_F64,
        ),
    ];
    for (name, f, expected) in cases64 {
        let got = first5_f64(f);
        assert_eq!(
            got,
            expected.map(f64::to_bits),
            "{name}: {:?}",
            got.map(f64::from_bits)
        );
    }
    let cases32: [(&str, Draw<f32>, [f32; 5]); 3] = [
        ("uniform_f32", uniform_f32, UNIFORM_F32),
        ("uniform_open_f32", uniform_open_f32, UNIFORM_OPEN_F32),
        (
            "standard_normal_f32",
            standard_normal_f32,
            STANDARD_NORMAL_F32,
        ),
    ];
    for (name, f, expected) in cases32 {
        let got = first5_f32(f);
        assert_eq!(
            got,
            expected.map(f32::to_bits),
            "{name}: {:?}",
            got.map(f32::from_bits)
        );
    }
    // The batch fill produces the same values as successive draws.
    let mut rng = Pcg64::new(SEED, STREAM);
    let mut buf64 = [0.0f64; 5];
    fill_standard_normal(&mut rng, &mut buf64);
    assert_eq!(
        buf64.map(f64::to_bits),
        STANDARD_NORMAL_F64.map(f64::to_bits)
    );
    let mut rng = Pcg64::new(SEED, STREAM);
    let mut buf32 = [0.0f32; 5];
    fill_standard_normal(&mut rng, &mut buf32);
    assert_eq!(
        buf32.map(f32::to_bits),
        STANDARD_NORMAL_F32.map(f32::to_bits)
    );
}

const UNIFORM_F64: [f64; 5] = [
    0.3240067568734738,
    0.5320467707143204,
    0.08390050254741166,
    0.6322930299638969,
    0.708148594349165,
];
const UNIFORM_OPEN_F64: [f64; 5] = [
    0.3240067568734738,
    0.5320467707143205,
    0.08390050254741166,
    0.632293029963897,
    0.7081485943491651,
];
const STANDARD_NORMAL_F64: [f64; 5] = [
    -0.7065216470126595,
    0.08765744115262669,
    -1.160426726087975,
    0.1501097940801718,
    0.521478928769072,
];
const UNIFORM_F32: [f32; 5] = [0.4545936, 0.16041678, 0.55909777, 0.18368542, 0.43803442];
const UNIFORM_OPEN_F32: [f32; 5] = [0.4545936, 0.16041678, 0.5590978, 0.18368548, 0.43803447];
const STANDARD_NORMAL_F32: [f32; 5] = [0.68460387, -0.347451, -1.2630352, -0.13425787, -0.81148696];

#[test]
fn value_stability_wedge_and_tail_paths() {
    // The first five draws almost surely take the common path; this hash of 10⁵ draws also pins
    // the wedge (≈ 1.5 % / 2.7 % of draws) and tail (≈ 0.03 % / 0.06 %) branches, which go through
    // libm's exp and ln. micromath's f32 functions give different (approximate) values.
    let mut rng = Pcg64::new(SEED, STREAM);
    let h64 = hash_bits((0..100_000).map(|_| standard_normal_f64(&mut rng).to_bits()));
    let mut rng = Pcg64::new(SEED, STREAM);
    let h32 = hash_bits((0..100_000).map(|_| u64::from(standard_normal_f32(&mut rng).to_bits())));
    println!("hashes: f64 {h64:#018x}, f32 {h32:#018x}");
    assert_eq!(h64, 0x5c97_ca8a_c175_3b2f);
    if !cfg!(feature = "micromath") {
        assert_eq!(h32, 0x508f_c423_1dc1_3682);
    }
}

// ---- the checks themselves can fail -------------------------------------------------------------

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn checks_reject_wrong_normals() {
    let mut rng = pcg(16);
    let base: Vec<f64> = (0..N).map(|_| standard_normal_f64(&mut rng)).collect();
    let fails =
        |f: &dyn Fn(f64) -> f64| normal_report(base.iter().map(|&x| f(x)).collect()).failures();

    // Untouched: passes.
    assert!(fails(&|x| x).is_empty());
    // Shift by 0.01 = 10 SE of the mean.
    assert!(fails(&|x| x + 0.01).contains(&"mean"));
    // Scale by 1.01: variance 1.0201, 14 SE.
    assert!(fails(&|x| 1.01 * x).contains(&"var"));
    // x + c(x² − 1) with c = 0.005: skewness ≈ 6c = 0.03, 12 SE; mean unchanged.
    let skewed = fails(&|x| x + 0.005 * (x * x - 1.0));
    assert!(
        skewed.contains(&"skew") && !skewed.contains(&"mean"),
        "{skewed:?}"
    );
    // Scale mixture 1.1 / 0.9 (by the parity of x's 6th decimal): excess kurtosis ≈ 0.12, 24 SE.
    let mixed = fails(&|x: f64| {
        if (x * 1e6).rem_euclid(2.0) < 1.0 {
            1.1 * x
        } else {
            0.9 * x
        }
    });
    assert!(mixed.contains(&"kurt"), "{mixed:?}");
    // Rounding to a 0.05 grid leaves all four moments within their bounds (the variance grows by
    // h²/12 ≈ 2·10⁻⁴ ≈ 0.15 SE) but puts steps of ≈ φ(0)·0.05 ≈ 0.02 in the CDF: only KS fails.
    let rounded = fails(&|x| (x / 0.05).round() * 0.05);
    assert_eq!(rounded, ["ks"]);
    // A uniform with variance 1 fails kurtosis (−1.2) and KS.
    let mut rng = pcg(17);
    let unif: Vec<f64> = (0..N)
        .map(|_| (2.0 * uniform_f64(&mut rng) - 1.0) * 3f64.sqrt())
        .collect();
    let r = normal_report(unif).failures();
    assert!(r.contains(&"kurt") && r.contains(&"ks"), "{r:?}");
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn checks_reject_wrong_uniforms_and_tails() {
    let mut rng = pcg(18);
    let base: Vec<f64> = (0..N).map(|_| uniform_f64(&mut rng)).collect();
    assert!(uniform_report(base.clone()).failures().is_empty());
    // Scale by 0.99: mean 0.495, 17 SE.
    assert!(
        uniform_report(base.iter().map(|u| 0.99 * u).collect())
            .failures()
            .contains(&"mean")
    );
    // u ↦ u^1.05: CDF x^(1/1.05), KS distance max(x^0.952 − x) ≈ 0.018 (crit 0.00195).
    assert!(
        uniform_report(base.iter().map(|u| u.powf(1.05)).collect())
            .failures()
            .contains(&"ks")
    );
    // A 1.01-scaled normal has 8.6 % too many |z| > 3: 14 binomial SE over 10⁷ draws.
    let mut rng = pcg(19);
    let failed = tail_failures("1.01 × standard_normal_f64", || {
        1.01 * standard_normal_f64(&mut rng)
    });
    assert!(failed.contains(&3.0), "{failed:?}");
}

// ---- the generated tables are reproducible ------------------------------------------------------

#[test]
#[ignore = "full tier (re-runs the Python table generator): cargo test -- --ignored"]
fn ziggurat_tables_are_reproducible() {
    // Re-runs the generator and compares its output byte for byte with the committed tables:
    //   python3 tools/gen_ziggurat.py --check src/ziggurat/tables.rs
    // (regenerate with `python3 tools/gen_ziggurat.py > src/ziggurat/tables.rs`).
    let dir = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("python3")
        .current_dir(dir)
        .args(["tools/gen_ziggurat.py", "--check", "src/ziggurat/tables.rs"])
        .output();
    match out {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("python3 not found: skipping the table reproducibility check");
        }
        Err(e) => panic!("could not run python3: {e}"),
        Ok(out) => assert!(
            out.status.success(),
            "tables differ from tools/gen_ziggurat.py output:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}
