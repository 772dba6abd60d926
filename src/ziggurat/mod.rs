//! Uniform and standard normal draws for `f32` and `f64`: the ziggurat of Marsaglia & Tsang (2000).
//!
//! Concrete per type: the `f64` functions draw with `next_u64`, the `f32` functions only with
//! `next_u32` and compute only in `f32` (own tables, `f32` math), so an FPU-only Cortex-M4F never
//! touches software `f64`. The layout, the tail sampler and the accuracy of each draw are derived
//! in `docs/rng.md`; users reach these through [`crate::rng`] or [`crate::Real`].

use crate::math::{exp32, exp64, ln32, ln64};
use rand_core::Rng;

mod tables;
use tables::{F32, F64, N32, N64, R32, R64, X32, X64};

// The bit layouts below (8-bit layer index for f64, 7-bit index plus a sign bit for f32) assume
// these layer counts; regenerating the tables with other counts must fail to compile.
const _: () = assert!(N64 == 256 && X64.len() == N64 + 1 && F64.len() == N64 + 1);
const _: () = assert!(N32 == 128 && X32.len() == N32 + 1 && F32.len() == N32 + 1);

/// 2⁻⁵³ (exact).
const TWO_POW_M53: f64 = 1.0 / (1u64 << 53) as f64;
/// 2⁻⁵² (exact).
const TWO_POW_M52: f64 = 1.0 / (1u64 << 52) as f64;
/// 2⁻²⁴ (exact).
const TWO_POW_M24: f32 = 1.0 / (1u32 << 24) as f32;
/// 2⁻²³ (exact).
const TWO_POW_M23: f32 = 1.0 / (1u32 << 23) as f32;

/// A uniform draw from the half-open interval \[0, 1) with 53 random bits (one `next_u64`).
///
/// The result is `k·2⁻⁵³` for `k` uniform on `0 … 2⁵³ − 1`, taken from the top 53 bits.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::uniform_f64;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let u = uniform_f64(&mut rng);
/// assert!((0.0..1.0).contains(&u));
/// ```
#[inline]
pub fn uniform_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * TWO_POW_M53
}

/// A uniform draw from the half-open interval \[0, 1) with 24 random bits, from exactly one
/// `next_u32` and in `f32` arithmetic only.
///
/// The result is `k·2⁻²⁴` for `k` uniform on `0 … 2²⁴ − 1`, taken from the top 24 bits.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::uniform_f32;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let u = uniform_f32(&mut rng);
/// assert!((0.0..1.0).contains(&u));
/// ```
#[inline]
pub fn uniform_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    (rng.next_u32() >> 8) as f32 * TWO_POW_M24
}

/// A uniform draw from the open interval (0, 1) (one `next_u64`): never 0 nor 1, so its
/// logarithm is always finite.
///
/// The result is `(k + ½)·2⁻⁵²` for `k` uniform on `0 … 2⁵² − 1` (the top 52 bits), i.e. the
/// midpoints of a 52-bit grid, between 2⁻⁵³ and 1 − 2⁻⁵³ inclusive.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::uniform_open_f64;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let u = uniform_open_f64(&mut rng);
/// assert!(u > 0.0 && u < 1.0);
/// assert!(u.ln().is_finite());
/// ```
#[inline]
pub fn uniform_open_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 12) as f64 + 0.5) * TWO_POW_M52
}

/// A uniform draw from the open interval (0, 1) (one `next_u32`, `f32` arithmetic only): never
/// 0 nor 1.
///
/// The result is `(k + ½)·2⁻²³` for `k` uniform on `0 … 2²³ − 1` (the top 23 bits), between 2⁻²⁴
/// and 1 − 2⁻²⁴ inclusive.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::uniform_open_f32;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let u = uniform_open_f32(&mut rng);
/// assert!(u > 0.0 && u < 1.0);
/// ```
#[inline]
pub fn uniform_open_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    ((rng.next_u32() >> 9) as f32 + 0.5) * TWO_POW_M23
}

/// Attempts per ziggurat draw (main loop, and again in the tail), so that a draw does bounded
/// work whatever the generator. With a working generator an attempt fails with probability
/// below 3 % in the main loop and below 8 % in the tail (its acceptance is E[e^{−ξ²/2}] ≈
/// 1 − 1/r² for ξ ~ Exp(r), r ≥ 3.4), so all 64 fail with probability below 10⁻⁷⁰: never in
/// practice, and the draws are those of the unbounded loop. A degenerate generator (say, one
/// stuck at a constant) that exhausts them gets the last candidate, a finite value, instead of
/// a hang.
pub(crate) const MAX_ATTEMPTS: usize = 64;

/// A standard normal draw N(0, 1) in `f64` by the 256-layer ziggurat (see `docs/rng.md`).
///
/// The common path (98.5 % of draws) consumes exactly one `next_u64`: its low 8 bits pick the
/// layer and its top 52 bits give `u ∈ [−1, 1)`. Wedge and tail draws consume further `next_u64`
/// words. Only [`Rng::next_u64`] is called.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::standard_normal_f64;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let n = 10_000;
/// let mean = (0..n).map(|_| standard_normal_f64(&mut rng)).sum::<f64>() / n as f64;
/// assert!(mean.abs() < 0.05); // 5 standard errors of 1/√n = 0.01
/// ```
#[inline]
pub fn standard_normal_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let mut x = 0.0;
    for _ in 0..MAX_ATTEMPTS {
        let bits = rng.next_u64();
        // The layer index is masked to 0..=255, so both `i` and `i + 1` index the 257-entry
        // tables in bounds (the compiler proves it; no panic path).
        let i = (bits & 0xff) as usize;
        // The top 52 bits as the mantissa of a float in [2, 4); minus 3 gives u in [-1, 1) on the
        // grid k·2⁻⁵¹ (exact). Bits 8..=11 are unused.
        let u = f64::from_bits((bits >> 12) | 0x4000_0000_0000_0000) - 3.0;
        x = u * X64[i];
        if x.abs() < X64[i + 1] {
            return x;
        }
        if i == 0 {
            return tail_f64(rng, u < 0.0);
        }
        // Wedge: y uniform in (F[i], F[i+1]]; accept when under the curve.
        let y = F64[i + 1] + (F64[i] - F64[i + 1]) * uniform_f64(rng);
        if y < exp64(-0.5 * x * x) {
            return x;
        }
    }
    // Only a degenerate generator gets here (see `MAX_ATTEMPTS`): the last candidate.
    x
}

/// The normal tail `|z| > r` of the f64 ziggurat (Marsaglia 1964), with the given sign.
#[cold]
#[inline(never)]
fn tail_f64<R: Rng + ?Sized>(rng: &mut R, negative: bool) -> f64 {
    let mut z = R64;
    for _ in 0..MAX_ATTEMPTS {
        // ξ = −ln(u₁)/r and η = −ln(u₂) are Exp(r) and Exp(1); accept r + ξ when 2η ≥ ξ².
        let xi = -ln64(uniform_open_f64(rng)) / R64;
        let eta = -ln64(uniform_open_f64(rng));
        z = R64 + xi;
        if 2.0 * eta >= xi * xi {
            break;
        }
    }
    if negative { -z } else { z }
}

/// A standard normal draw N(0, 1) in `f32` by the 128-layer ziggurat (see `docs/rng.md`),
/// computed entirely in `f32` from `next_u32` words.
///
/// The common path (97.2 % of draws) consumes exactly one `next_u32`: its low 7 bits pick the
/// layer, bit 7 is the sign, and its top 24 bits give `u ∈ [0, 1)`. Wedge and tail draws consume
/// further `next_u32` words. Only [`Rng::next_u32`] is called; no `f64` operation is performed.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::standard_normal_f32;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let n = 10_000;
/// let mean = (0..n).map(|_| standard_normal_f32(&mut rng)).sum::<f32>() / n as f32;
/// assert!(mean.abs() < 0.05); // 5 standard errors of 1/√n = 0.01
/// ```
#[inline]
pub fn standard_normal_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    let mut z = 0.0f32;
    for _ in 0..MAX_ATTEMPTS {
        let bits = rng.next_u32();
        // Masked to 0..=127: `i` and `i + 1` index the 129-entry tables in bounds.
        let i = (bits & 0x7f) as usize;
        // Bit 7 moved to the f32 sign position (bit 31).
        let sign = (bits & 0x80) << 24;
        // Top 24 bits: u = k·2⁻²⁴ in [0, 1); k < 2²⁴ converts to f32 exactly.
        let u = (bits >> 8) as f32 * TWO_POW_M24;
        let x = u * X32[i];
        z = f32::from_bits(x.to_bits() ^ sign);
        if x < X32[i + 1] {
            return z;
        }
        if i == 0 {
            return f32::from_bits(tail_f32(rng).to_bits() ^ sign);
        }
        // Wedge: y uniform in (F[i], F[i+1]]; accept when under the curve.
        let y = F32[i + 1] + (F32[i] - F32[i + 1]) * uniform_f32(rng);
        if y < exp32(-0.5 * x * x) {
            return z;
        }
    }
    // Only a degenerate generator gets here (see `MAX_ATTEMPTS`): the last candidate.
    z
}

/// The positive normal tail `z > r` of the f32 ziggurat (Marsaglia 1964), in f32 only.
#[cold]
#[inline(never)]
fn tail_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    let mut z = R32;
    for _ in 0..MAX_ATTEMPTS {
        // ξ = ln(1/u₁)/r and η = ln(1/u₂) are Exp(r) and Exp(1); accept r + ξ when 2η ≥ ξ².
        // The logarithm is taken of 1/u ∈ (1, 2²⁴], not of u: micromath 2.1's `ln` evaluates
        // arguments below 1 through its 8 %-accurate fast reciprocal (absolute errors up to
        // 0.12), which made the tail visibly too heavy; above 1 it is accurate to ~6·10⁻⁵. The
        // exact f32 division costs one rounding (relative 6·10⁻⁸) and only runs in the tail.
        let xi = ln32(1.0 / uniform_open_f32(rng)) / R32;
        let eta = ln32(1.0 / uniform_open_f32(rng));
        z = R32 + xi;
        if 2.0 * eta >= xi * xi {
            break;
        }
    }
    z
}

#[cfg(test)]
mod tests {
    use super::tables::{V32, V64};
    use super::*;

    /// A generator stuck at one word; counts the words drawn.
    struct Stuck(u64, usize);
    impl rand_core::TryRng for Stuck {
        type Error = core::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            self.1 += 1;
            Ok(self.0 as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            self.1 += 1;
            Ok(self.0)
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
            dst.fill(self.0 as u8);
            Ok(())
        }
    }

    /// A stuck generator cannot hang a draw: every word pattern returns a finite value, and
    /// some patterns (always in a wedge or the tail, always rejected) do exhaust the attempts,
    /// so the bound is what ends them (an unbounded loop would hang this test).
    #[test]
    fn stuck_generators_terminate() {
        let mut most = [0usize; 2];
        let words = [
            0,
            u64::MAX,
            0x8000_0000_0000_0000,
            0x5555_5555_5555_5555,
            0xff,
            0x7f,
            0x80,
            0xffff_ffff_0000_0000,
        ];
        for w in words {
            for layer in 0..=255u64 {
                let word = (w & !0xff) | layer;
                let (mut g64, mut g32) = (Stuck(word, 0), Stuck(word, 0));
                assert!(standard_normal_f64(&mut g64).is_finite(), "{word:#x}");
                assert!(standard_normal_f32(&mut g32).is_finite(), "{word:#x}");
                most = [most[0].max(g64.1), most[1].max(g32.1)];
            }
        }
        assert!(
            most[0] >= MAX_ATTEMPTS && most[1] >= MAX_ATTEMPTS,
            "{most:?}"
        );
    }

    /// √(π/2) ∫ tail: ∫ᵣ^∞ exp(−x²/2) dx = √(π/2)·erfc(r/√2).
    fn tail_area(r: f64) -> f64 {
        libm::sqrt(core::f64::consts::FRAC_PI_2) * libm::erfc(r / core::f64::consts::SQRT_2)
    }

    #[test]
    fn table_shapes_and_ends() {
        assert_eq!(X64.len(), N64 + 1);
        assert_eq!(F64.len(), N64 + 1);
        assert_eq!(X32.len(), N32 + 1);
        assert_eq!(F32.len(), N32 + 1);
        // The index masks in the samplers must match the layer counts.
        assert_eq!(N64, 0xff + 1);
        assert_eq!(N32, 0x7f + 1);
        assert_eq!(X64[1], R64);
        assert_eq!(X32[1], R32);
        assert_eq!(X64[N64], 0.0);
        assert_eq!(X32[N32], 0.0);
        assert_eq!(F64[N64], 1.0);
        assert_eq!(F32[N32], 1.0);
    }

    #[test]
    fn tables_are_strictly_monotone() {
        assert!(X64.windows(2).all(|w| w[0] > w[1]));
        assert!(F64.windows(2).all(|w| w[0] < w[1]));
        assert!(X32.windows(2).all(|w| w[0] > w[1]));
        assert!(F32.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn f_is_the_density_at_x() {
        for (&x, &f) in X64.iter().zip(F64.iter()) {
            let exact = libm::exp(-0.5 * x * x);
            assert!((f - exact).abs() <= 2e-15 * exact, "{x}: {f} vs {exact}");
        }
        // F32 is rounded from the exact x, X32 is rounded too: relative error ≤ x·|δx| + ulp.
        for (&x, &f) in X32.iter().zip(F32.iter()) {
            let exact = libm::exp(-0.5 * f64::from(x) * f64::from(x));
            assert!(
                (f64::from(f) - exact).abs() <= 1e-6 * exact,
                "{x}: {f} vs {exact}"
            );
        }
    }

    #[test]
    fn r_reproduces_the_area_v() {
        // v = r f(r) + ∫ᵣ^∞ f, with libm's erfc (independent of the generator's series).
        let v64 = R64 * libm::exp(-0.5 * R64 * R64) + tail_area(R64);
        assert!((v64 / V64 - 1.0).abs() < 1e-14, "{v64} vs {V64}");
        let r = f64::from(R32);
        let v32 = r * libm::exp(-0.5 * r * r) + tail_area(r);
        assert!((v32 / f64::from(V32) - 1.0).abs() < 1e-6, "{v32} vs {V32}");
        // The published values (Marsaglia & Tsang 2000), to the digits they give.
        assert!((R64 - 3.654_152_885_361_009).abs() < 1e-14);
        assert!((V64 - 0.004_928_673_233_99).abs() < 1e-13);
        assert!((f64::from(R32) - 3.442_619_855_899).abs() < 1e-6);
        assert!((f64::from(V32) - 9.912_563_035_262_17e-3).abs() < 1e-9);
    }

    #[test]
    fn every_layer_has_area_v() {
        // Base strip: X[0]·f(r) = v; layer i ≥ 1: X[i]·(F[i+1] − F[i]) = v.
        assert!((X64[0] * F64[1] / V64 - 1.0).abs() < 1e-15);
        for i in 1..N64 {
            let area = X64[i] * (F64[i + 1] - F64[i]);
            assert!((area / V64 - 1.0).abs() < 1e-13, "f64 layer {i}: {area}");
        }
        let v = f64::from(V32);
        assert!((f64::from(X32[0]) * f64::from(F32[1]) / v - 1.0).abs() < 1e-7);
        for i in 1..N32 {
            let area = f64::from(X32[i]) * (f64::from(F32[i + 1]) - f64::from(F32[i]));
            assert!((area / v - 1.0).abs() < 1e-5, "f32 layer {i}: {area}");
        }
    }

    #[test]
    fn top_layer_closes_at_the_mode() {
        // The recursion x_{i+1} = f⁻¹(f(x_i) + v/x_i) from the last stored edge reaches f = 1.
        let top = F64[N64 - 1] + V64 / X64[N64 - 1];
        assert!((top - 1.0).abs() < 1e-13, "{top}");
        let top = f64::from(F32[N32 - 1]) + f64::from(V32) / f64::from(X32[N32 - 1]);
        assert!((top - 1.0).abs() < 1e-6, "{top}");
    }

    #[test]
    fn recursion_reproduces_the_stored_edges() {
        // Re-run the layer recursion in f64 from r; the error grows slowly towards the top.
        let mut x = R64;
        for (i, &edge) in X64.iter().enumerate().take(N64 - 1).skip(1) {
            assert!((x / edge - 1.0).abs() < 1e-12, "layer {i}: {x} vs {edge}");
            let y = libm::exp(-0.5 * x * x) + V64 / x;
            x = libm::sqrt(-2.0 * libm::log(y));
        }
    }
}
