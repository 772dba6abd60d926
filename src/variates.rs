//! Variates built on [`Real`]: Gamma (Marsaglia & Tsang 2000), Poisson (Knuth; Hörmann 1993) and batch normal fills.
//!
//! Generic over the float type and computed in its own arithmetic (the `f32` path never widens to
//! `f64`), from the ziggurat normals and open uniforms of [`Real`]. Users reach them through
//! [`crate::rng`]; the derivations and accuracy statements are in `docs/rng.md`.

use crate::noise::NormalLanes;
use crate::real::Real;
use rand_core::Rng;

/// A standard Gamma(`shape`, 1) draw by Marsaglia & Tsang (2000), with the boost
/// Gamma(a) = Gamma(a + 1)·U^{1/a} for `shape` < 1 (derivation in `docs/rng.md`).
///
/// Computed entirely in `T` (the `f32` path never widens to `f64`) from [`Real::standard_normal`]
/// and [`Real::uniform_open`] draws: usually one normal and one uniform (plus one uniform for
/// the boost). The rejection loop is capped at 64 attempts (failure probability < 10⁻⁸⁰ for a
/// random generator; then the approximate median `shape − 1/3` is returned).
///
/// `shape` must be finite and > 0; otherwise the result is NaN (and nothing is drawn). The
/// result is ≥ 0; it can be exactly 0 only when `U^{1/shape}` underflows for a tiny `shape`.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::gamma;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let n = 10_000;
/// let mean = (0..n).map(|_| gamma(&mut rng, 2.0f64)).sum::<f64>() / n as f64;
/// assert!((mean - 2.0).abs() < 0.08); // 5 standard errors of √(2/n) ≈ 0.014
/// assert!(gamma(&mut rng, 0.5f32) >= 0.0);
/// assert!(gamma(&mut rng, -1.0f64).is_nan());
/// ```
#[inline]
pub fn gamma<T: Real, R: Rng + ?Sized>(rng: &mut R, shape: T) -> T {
    if !(shape > T::ZERO && shape.is_finite()) {
        // NaN (0·∞); `Real` has no NaN constant.
        return T::ZERO * T::INFINITY;
    }
    if shape < T::ONE {
        // Stuart's boost: X·U^{1/a} with X ~ Gamma(a + 1) and U ~ U(0, 1) is Gamma(a).
        let x = gamma_at_least_one(rng, shape + T::ONE);
        // U^{1/a} as exp(ln(U)/a): U < 1 always, and micromath 2.1's powf is up to ~10 % off for
        // bases below 1, whereas the shim's ln is accurate there (see `crate::math`). With libm
        // the two forms differ by a few ulps (the error of exp(y) is relative, |y| ≤ 37/a).
        let u = T::uniform_open(rng);
        return x * (u.ln() / shape).exp();
    }
    gamma_at_least_one(rng, shape)
}

/// shape · (ln G₁ − ln G₂) for independent G₁, G₂ ~ Gamma(`shape`) (finite, > 0), without
/// forming an overflowing or underflowing term: for `shape` < 1 each ln G by the boost in log
/// space, shape·ln X + ln U with X ~ Gamma(shape + 1) (a tiny shape's U^{1/shape} would
/// underflow); for `shape` ≥ 1 the difference first, then the factor (shape·ln G alone would
/// overflow `f32` for shape ≳ 10³⁶, while the product stays near √(2·shape)).
#[inline]
pub(crate) fn scaled_ln_gamma_difference<T: Real, R: Rng + ?Sized>(rng: &mut R, shape: T) -> T {
    if shape < T::ONE {
        let mut term = || {
            let x = gamma_at_least_one(rng, shape + T::ONE);
            shape * x.ln() + T::uniform_open(rng).ln()
        };
        let first = term();
        first - term()
    } else {
        let first = gamma_at_least_one(rng, shape).ln();
        shape * (first - gamma_at_least_one(rng, shape).ln())
    }
}

/// Marsaglia & Tsang's Gamma(a) for a ≥ 1 (checked by [`gamma`]), at most 64 attempts.
#[inline]
fn gamma_at_least_one<T: Real, R: Rng + ?Sized>(rng: &mut R, shape: T) -> T {
    // Constants from f32 literals, so the f32 path has no f64 detour: 3 and 9 are exact and 1/3
    // is computed in T. 0.0331 (Marsaglia & Tsang's squeeze constant) rounds up to 0.033100002 in
    // f32, which only makes the squeeze — a shortcut that must never accept what the exact test
    // would reject — marginally more conservative.
    let d = shape - T::ONE / T::from_f32(3.0);
    let c = T::ONE / (T::from_f32(9.0) * d).sqrt();
    let squeeze = T::from_f32(0.0331);
    for _ in 0..64 {
        let x = T::standard_normal(rng);
        let v = T::ONE + c * x;
        if v <= T::ZERO {
            continue;
        }
        let v = v * v * v;
        let u = T::uniform_open(rng);
        let x2 = x * x;
        if u < T::ONE - squeeze * x2 * x2 {
            return d * v;
        }
        if u.ln() < T::HALF * x2 + d * (T::ONE - v + v.ln()) {
            return d * v;
        }
    }
    // Only a degenerate generator gets here (probability < 0.0485⁶⁴ ≈ 10⁻⁸⁴): the
    // Wilson–Hilferty median a − 1/3, so the function always terminates with a finite value.
    d
}

/// A Poisson(`lambda`) draw: Knuth's multiplication method for λ < 10, Hörmann's PTRS
/// transformed rejection for λ ≥ 10 (derivation in `docs/rng.md`).
///
/// Computed entirely in `T` from [`Real::uniform_open`] draws: λ + 1 uniforms on average for
/// λ < 10, 2.65 at λ = 10 falling to 2.25 for large λ (two per attempt). Both loops are capped
/// (256 factors, 64 attempts; reaching either has probability < 10⁻³⁸ for a random generator),
/// so the function always terminates.
///
/// `lambda` ≤ 0, NaN or +∞ returns 0 and draws nothing.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::poisson;
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let n = 10_000;
/// let mean = (0..n).map(|_| poisson(&mut rng, 3.0f64) as f64).sum::<f64>() / n as f64;
/// assert!((mean - 3.0).abs() < 0.09); // 5 standard errors of √(3/n) ≈ 0.017
/// assert!(poisson(&mut rng, 50.0f32) > 0);
/// assert_eq!(poisson(&mut rng, -1.0f64), 0);
/// ```
#[inline]
pub fn poisson<T: Real, R: Rng + ?Sized>(rng: &mut R, lambda: T) -> u64 {
    if !(lambda > T::ZERO && lambda.is_finite()) {
        return 0;
    }
    if lambda < T::from_f32(10.0) {
        poisson_knuth(rng, lambda)
    } else {
        poisson_ptrs(rng, lambda)
    }
}

/// Knuth's multiplication method for 0 < λ < 10 (checked by [`poisson`]), at most 256 factors.
#[inline]
fn poisson_knuth<T: Real, R: Rng + ?Sized>(rng: &mut R, lambda: T) -> u64 {
    let limit = (-lambda).exp();
    let mut q = T::uniform_open(rng);
    for k in 0..256u64 {
        if q <= limit {
            return k;
        }
        q *= T::uniform_open(rng);
    }
    256
}

/// ln k! for k = 0 … 9 (exact values rounded once to f64).
const LN_FACTORIAL: [f64; 10] = [
    0.0,
    0.0,
    core::f64::consts::LN_2,
    1.791_759_469_228_055,
    3.178_053_830_347_945_6,
    4.787_491_742_782_046,
    6.579_251_212_010_101,
    8.525_161_361_065_415,
    10.604_602_902_745_25,
    12.801_827_480_081_469,
];

/// ln P(k) = −λ + k ln λ − ln k! of Poisson(λ), for λ ≥ 10 (`docs/rng.md`: Stirling's series in a
/// cancellation-free form for k ≥ 10, a table below).
#[inline]
fn poisson_ln_pmf<T: Real>(k: u64, lambda: T) -> T {
    let kt = T::from_u64(k);
    if k < 10
        && let Some(&lf) = LN_FACTORIAL.get(k as usize)
    {
        return -lambda + kt * lambda.ln() - T::from_f64(lf);
    }
    let inv = T::ONE / kt;
    let inv2 = inv * inv;
    // 1/(12k) − 1/(360k³) + 1/(1260k⁵)
    let series = inv
        * (T::from_f64(1.0 / 12.0)
            - inv2 * (T::from_f64(1.0 / 360.0) - inv2 * T::from_f64(1.0 / 1260.0)));
    let half_ln_2pi = T::from_f64(0.918_938_533_204_672_8);
    // (k − λ) + k ln(λ/k): with t = (λ − k)/(λ + k), ln(λ/k) = 2 atanh t = 2(t + t³/3 + t⁵/5 + …),
    // and the sum is −(λ − k)·t + 2k t³ (1/3 + t²/5 + …) without cancellation and without a
    // logarithm (so micromath's ln error does not get multiplied by k). For |t| < 1/8 the terms
    // up to t¹⁹ leave a truncation below 2k·8⁻²¹/21 < k·10⁻²⁰; λ − k is then exact (Sterbenz).
    let diff = lambda - kt;
    let t = diff / (lambda + kt);
    let main = if t.abs() < T::from_f32(0.125) {
        let t2 = t * t;
        let mut s = T::from_f64(1.0 / 19.0);
        for c in ATANH_COEFFS {
            s = s * t2 + T::from_f64(c);
        }
        -diff * t + T::TWO * kt * t * t2 * s
    } else {
        (kt - lambda) + kt * (lambda / kt).ln()
    };
    main - half_ln_2pi - T::HALF * kt.ln() - series
}

/// 1/17, 1/15, …, 1/3: the Horner coefficients of (atanh t − t)/t³ after the leading 1/19.
const ATANH_COEFFS: [f64; 8] = [
    1.0 / 17.0,
    1.0 / 15.0,
    1.0 / 13.0,
    1.0 / 11.0,
    1.0 / 9.0,
    1.0 / 7.0,
    1.0 / 5.0,
    1.0 / 3.0,
];

/// ⌊x⌋ as `u64` for x ≥ 0 (0 for x < 1 or NaN; saturating at `u64::MAX`), computed exactly in
/// `T` by subtracting powers of two from the top (each subtraction is exact because the
/// remainder lies in [2ʲ, 2ʲ⁺¹) when 2ʲ is subtracted). About 2·log₂ x steps. +∞ saturates.
#[inline]
fn floor_to_u64<T: Real>(x: T) -> u64 {
    if !(x >= T::ONE && x.is_finite()) {
        return if x > T::ONE { u64::MAX } else { 0 };
    }
    let mut p = T::ONE;
    let mut bit = 0u32;
    while bit < 63 && p + p <= x {
        p += p;
        bit += 1;
    }
    let mut rest = x;
    let mut k = 0u64;
    for b in (0..=bit).rev() {
        if rest >= p {
            rest -= p;
            k |= 1u64 << b;
        }
        p *= T::HALF;
    }
    if rest >= T::ONE {
        // Only when x ≥ 2⁶⁴: saturate.
        return u64::MAX;
    }
    k
}

/// Hörmann's PTRS for λ ≥ 10 (checked by [`poisson`]), at most 64 attempts.
#[inline]
fn poisson_ptrs<T: Real, R: Rng + ?Sized>(rng: &mut R, lambda: T) -> u64 {
    let b = T::from_f32(0.931) + T::from_f32(2.53) * lambda.sqrt();
    let a = T::from_f32(-0.059) + T::from_f32(0.02483) * b;
    let inv_alpha = T::from_f32(1.1239) + T::from_f32(1.1328) / (b - T::from_f32(3.4));
    let v_r = T::from_f32(0.9277) - T::from_f32(3.6224) / (b - T::TWO);
    let ln_inv_alpha = inv_alpha.ln();
    let shift = lambda + T::from_f32(0.43);
    for _ in 0..64 {
        let u = T::uniform_open(rng) - T::HALF;
        let v = T::uniform_open(rng);
        let us = T::HALF - u.abs();
        let x = (T::TWO * a / us + b) * u + shift;
        if !(x >= T::ZERO && x.is_finite()) {
            // k < 0 (or a NaN / ∞ that cannot occur with open uniforms): reject.
            continue;
        }
        let k = floor_to_u64(x);
        if us >= T::from_f32(0.07) && v <= v_r {
            return k;
        }
        if us < T::from_f32(0.013) && v > us {
            continue;
        }
        if v.ln() + ln_inv_alpha - (a / (us * us) + b).ln() <= poisson_ln_pmf(k, lambda) {
            return k;
        }
    }
    // Only a degenerate generator gets here (probability < 10⁻³⁸): the mode ⌊λ⌋.
    floor_to_u64(lambda)
}

/// Fills `out` with independent standard normal draws of type `T` (the batch path).
///
/// Each element is one [`Real::standard_normal`] draw, in order, so filling a slice of length
/// `m` produces exactly the same values (and leaves the generator in the same state) as `m`
/// successive calls of [`crate::rng::standard_normal_f64`] or
/// [`crate::rng::standard_normal_f32`]. An empty slice draws
/// nothing.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::rng::{fill_standard_normal, standard_normal_f32};
///
/// let seed = (0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let mut rng = Pcg64::new(seed.0, seed.1);
/// let mut noise = [0.0f32; 8];
/// fill_standard_normal(&mut rng, &mut noise);
///
/// let mut again = Pcg64::new(seed.0, seed.1);
/// assert!(noise.iter().all(|&z| z == standard_normal_f32(&mut again)));
/// ```
#[inline]
pub fn fill_standard_normal<T: Real, R: Rng + ?Sized>(rng: &mut R, out: &mut [T]) {
    for z in out.iter_mut() {
        *z = T::standard_normal(rng);
    }
}

/// Fills `out` with independent standard normal draws from the multi-lane generator: the
/// vectorised Box–Muller (`f64` without AVX2: the ziggurat on one lane; see
/// [`crate::rng::NormalLanes`] and `docs/rng.md`).
///
/// Draws two `next_u64` from `rng` per call, whatever the
/// length — none for an empty slice — and is a pure function of them: the same RNG state gives
/// the same numbers on every build of the same class (`docs/rng.md`, *Determinism*; the `std`
/// feature on a build with FMA in its target features changes the last bits). Runs in the widest
/// copy the CPU supports ([`crate::dispatch`]). Unlike [`crate::rng::fill_standard_normal`] the values are not those
/// of successive single draws. Accuracy and tail reach: `docs/rng.md`.
#[inline]
pub fn fill_lane_normals<T: Real, R: Rng + ?Sized>(rng: &mut R, out: &mut [T]) {
    crate::dispatch::run(Normals {
        rng,
        out,
        per_step: false,
    })
}

/// [`fill_lane_normals`], undispatched (for the samplers' steps, which are).
#[cfg_attr(feature = "std", inline(always))]
#[cfg_attr(not(feature = "std"), inline)]
fn lane_normals<T: Real, R: Rng + ?Sized>(rng: &mut R, out: &mut [T]) {
    if !out.is_empty() {
        T::NormalLanes::keyed(rng).fill(out);
    }
}

/// The arguments of [`fill_lane_normals`] or [`fill_step_normals`] as a
/// [`crate::dispatch::Kernel`].
struct Normals<'a, T, R: ?Sized> {
    rng: &'a mut R,
    out: &'a mut [T],
    per_step: bool,
}

impl<T: Real, R: Rng + ?Sized> crate::dispatch::Kernel for Normals<'_, T, R> {
    type Output = ();
    #[inline(always)]
    fn run<A: crate::arith::Arith>(self) {
        if self.per_step {
            step_normals(self.rng, self.out)
        } else {
            lane_normals(self.rng, self.out)
        }
    }
}

/// Fills `out` with standard normals as this build's samplers draw them: [`fill_lane_normals`]
/// on a vector target, [`fill_standard_normal`] (one ziggurat normal per entry, nothing keyed)
/// on a scalar core ([`crate::rng::SCALAR_CORE`]; `docs/rng.md`, *Determinism*).
///
/// A step of SGHMC, SGNHT or mSGNHT of dimension n draws exactly these n normals for its kick
/// (after its gradient, before anything else), and a momentum redraw of n coordinates draws
/// them too: from two clones of one generator, a sampler and this function see the same noise.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// use sgmcmc::rng::fill_step_normals;
///
/// let params = SghmcParams::new(0.1).with_integrator(Integrator::Euler);
/// let (mut theta, mut p, mut work) = ([0.0f32; 3], [0.0f32; 3], [0.0f32; 6]);
/// let mut sghmc = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
/// let mut model = |_: &[f32], g: &mut [f32]| g.fill(0.0); // flat: p ← (1 − Ah)p + √(2Ah) z
/// sghmc.step(&mut model, &mut Pcg64::new(7, 8)).unwrap();
/// let mut z = [0.0f32; 3];
/// fill_step_normals(&mut Pcg64::new(7, 8), &mut z);
/// let sd = (2.0f32 * 1.0 * 0.1).sqrt();
/// for (p, z) in sghmc.momentum().iter().zip(z) {
///     assert_eq!(*p, sd * z);
/// }
/// ```
#[inline]
pub fn fill_step_normals<T: Real, R: Rng + ?Sized>(rng: &mut R, out: &mut [T]) {
    crate::dispatch::run(Normals {
        rng,
        out,
        per_step: true,
    })
}

/// [`fill_step_normals`], undispatched (for the samplers' steps, which are).
#[cfg_attr(feature = "std", inline(always))]
#[cfg_attr(not(feature = "std"), inline)]
pub(crate) fn step_normals<T: Real, R: Rng + ?Sized>(rng: &mut R, out: &mut [T]) {
    if crate::lanes::SCALAR_CORE {
        fill_standard_normal(rng, out);
    } else {
        lane_normals(rng, out);
    }
}
