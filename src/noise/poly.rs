//! Branch-free polynomial ln, sin/cos (in turns) and exp for `f32` and `f64`, written so that loops over lanes vectorise.
//!
//! Every function is straight-line arithmetic and bit manipulation (no table, no branch, no
//! float-to-int conversion), so LLVM turns a loop over an array of arguments into SIMD code.
//! Coefficients: `ln` and `sin`/`cos` for `f32` are Moshier's Cephes minimax polynomials
//! (`logf.c`, `sinf.c`), for `f64` the fdlibm/musl kernels (`e_log.c`, `k_sin.c`, `k_cos.c`);
//! `exp` is a Cephes `expf` minimax polynomial (`f32`) and the degree-13 Taylor polynomial
//! (`f64`, truncation < 0.1 ulp on |r| ≤ ln2/2). Their measured ulp errors against libm over the
//! generator's whole input domain are in `docs/rng.md` (*Vectorised normals*) and pinned by the
//! tests in `super::tests`.

// The `f64` Box–Muller is compiled and tested on every target but drawn from only on targets
// with AVX2 (elsewhere `f64` noise is the ziggurat on lane 0, `super::NormalLanes`).
#![cfg_attr(
    not(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64"))),
    allow(dead_code)
)]
// The coefficients are written as published (Cephes, fdlibm), not rounded to the digits an f32
// needs; the compiler rounds them once.
#![allow(clippy::excessive_precision)]

/// Whether this build's own target features fuse the polynomials' multiply-adds: the `std`
/// feature on a build whose target features include FMA (`-C target-cpu=native`, `x86-64-v3`).
/// All polynomials are fused also in a dispatching build's AVX2 and AVX-512 copies: the noise's
/// as `super::fused_noise` says, the kinetics' as the step's [`crate::arith::Arith`] says.
pub(crate) const NATIVE_FMA: bool = cfg!(all(feature = "std", target_feature = "fma"));

/// a·b + c: fused (rounded once) when `FUSED` and the `std` feature is on, else unfused
/// (rounded twice). The unfused form is the same on every build: rustc never contracts a·b + c
/// on its own, and a fused multiply-add needs `f32::mul_add`, which lives in `std` (`libm::fmaf`
/// is inline assembly on x86 and never vectorises). Fused is correctly rounded too, so it is
/// also the same on every CPU that runs it: one instruction where the code is compiled with
/// FMA, a library call elsewhere (never taken: `super::fused_noise` asks for it only in copies
/// compiled with FMA). Unfused, a noise fill takes about a sixth longer on Zen 4
/// (`docs/performance-notes.md`).
#[inline(always)]
pub(crate) fn mad32<const FUSED: bool>(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(feature = "std")]
    if FUSED {
        return a.mul_add(b, c);
    }
    a * b + c
}

/// a·b + c in `f64` (see [`mad32`]).
#[inline(always)]
pub(crate) fn mad64<const FUSED: bool>(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(feature = "std")]
    if FUSED {
        return a.mul_add(b, c);
    }
    a * b + c
}

/// 1.5·2²³: adding it to |x| < 2²² rounds x to the nearest integer, which then sits in the low
/// mantissa bits (the float-free rounding that keeps these loops vectorised).
const ROUND32: f32 = 12_582_912.0;
/// 1.5·2⁵² (see [`ROUND32`]).
const ROUND64: f64 = 6_755_399_441_055_744.0;

/// (round(x), round(x) as an integer) for |x| < 2²².
#[inline(always)]
fn round_int32(x: f32) -> (f32, i32) {
    let k = x + ROUND32;
    (
        k - ROUND32,
        k.to_bits().wrapping_sub(ROUND32.to_bits()) as i32,
    )
}

/// (round(x), round(x) as an integer) for |x| < 2⁵¹.
#[inline(always)]
fn round_int64(x: f64) -> (f64, i64) {
    let k = x + ROUND64;
    (
        k - ROUND64,
        k.to_bits().wrapping_sub(ROUND64.to_bits()) as i64,
    )
}

/// The bits of √½ in `f32`: subtracting them splits x into 2ᵏ·m with m ∈ [√½, √2) (musl).
const SQRT_HALF_BITS32: u32 = 0x3f35_04f3;
/// The bits of √½ in `f64`.
const SQRT_HALF_BITS64: u64 = 0x3fe6_a09e_667f_3bcd;

/// ln x for a positive normal `f32` (Cephes `logf`: x = 2ᵏ·m, m ∈ [√½, √2), a degree-9
/// minimax polynomial in f = m − 1, and ln 2 split in two). Not for 0, subnormals, ∞ or NaN:
/// the Box–Muller radius only ever passes numbers in [2⁻³², 1].
#[inline(always)]
pub(crate) fn ln32<const F: bool>(x: f32) -> f32 {
    let ix = x.to_bits().wrapping_sub(SQRT_HALF_BITS32);
    let k = (ix as i32 >> 23) as f32;
    let m = f32::from_bits((ix & 0x007f_ffff).wrapping_add(SQRT_HALF_BITS32));
    let f = m - 1.0;
    let z = f * f;
    // The degree-8 polynomial by Estrin's scheme (pairs, then powers f², f⁴, f⁸), whose
    // dependency chain is four multiply-adds deep instead of Horner's nine: the Box–Muller round
    // is latency-bound, and this is its longest chain.
    let z2 = z * z;
    let p01 = mad32::<F>(-2.499_999_399_3e-1, f, 3.333_333_117_4e-1);
    let p23 = mad32::<F>(-1.666_805_766_5e-1, f, 2.000_071_476_5e-1);
    let p45 = mad32::<F>(-1.242_014_084_6e-1, f, 1.424_932_278_7e-1);
    let p67 = mad32::<F>(-1.151_461_031e-1, f, 1.167_699_874e-1);
    let q03 = mad32::<F>(p23, z, p01);
    let q47 = mad32::<F>(p67, z, p45);
    let q48 = mad32::<F>(7.037_683_6e-2, z2, q47);
    let mut y = mad32::<F>(q48, z2, q03);
    y *= f * z;
    y = mad32::<F>(k, -2.121_944_4e-4, y);
    y = mad32::<F>(-0.5, z, y);
    mad32::<F>(k, 0.693_359_375, f + y)
}

/// ln x for a positive normal `f64` (fdlibm `e_log.c` as in musl: s = f/(2 + f) and a
/// degree-14 even polynomial in s). Same domain as [`ln32`].
#[inline(always)]
pub(crate) fn ln64<const F: bool>(x: f64) -> f64 {
    const LG1: f64 = 6.666_666_666_666_735e-1;
    const LG2: f64 = 3.999_999_999_940_942e-1;
    const LG3: f64 = 2.857_142_874_366_239e-1;
    const LG4: f64 = 2.222_219_843_214_978_4e-1;
    const LG5: f64 = 1.818_357_216_161_805e-1;
    const LG6: f64 = 1.531_383_769_920_937_3e-1;
    const LG7: f64 = 1.479_819_860_511_658_6e-1;
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let ix = x.to_bits().wrapping_sub(SQRT_HALF_BITS64);
    // k is a small integer (|k| ≤ 1075): through i32, whose conversion vectorises.
    let k = ((ix as i64 >> 52) as i32) as f64;
    let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff).wrapping_add(SQRT_HALF_BITS64));
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * mad64::<F>(w, mad64::<F>(w, LG6, LG4), LG2);
    let t2 = z * mad64::<F>(w, mad64::<F>(w, mad64::<F>(w, LG7, LG5), LG3), LG1);
    let r = t2 + t1;
    let lo = mad64::<F>(k, LN2_LO, s * (hfsq + r));
    mad64::<F>(k, LN2_HI, (lo - hfsq) + f)
}

/// 2π in `f32` and `f64`.
const TAU32: f32 = core::f32::consts::TAU;
const TAU64: f64 = core::f64::consts::TAU;

/// (sin 2πt, cos 2πt) for t ∈ [0, 1): t = q/4 + f with f ∈ [−1/8, 1/8] exactly, the Cephes
/// `sinf`/`cosf` polynomials at x = 2πf ∈ [−π/4, π/4], and the quadrant q applied by swapping
/// and sign bits.
#[inline(always)]
pub(crate) fn sincos_turns32<const F: bool>(t: f32) -> (f32, f32) {
    let (qf, q) = round_int32(t * 4.0);
    // Exact: t and q/4 are multiples of 2⁻²⁴ and |f| ≤ 1/8.
    let f = mad32::<F>(qf, -0.25, t);
    let x = f * TAU32;
    let z = x * x;
    let mut ps = -1.951_529_589_1e-4;
    ps = mad32::<F>(ps, z, 8.332_160_873_6e-3);
    ps = mad32::<F>(ps, z, -1.666_665_461_1e-1);
    let s = mad32::<F>(x * z, ps, x);
    let mut pc = 2.443_315_711_809_948e-5;
    pc = mad32::<F>(pc, z, -1.388_731_625_493_765e-3);
    pc = mad32::<F>(pc, z, 4.166_664_568_298_827e-2);
    let c = mad32::<F>(z * z, pc, mad32::<F>(-0.5, z, 1.0));
    quadrant32(q as u32, s, c)
}

/// (sin, cos) of (q quarter turns + the angle whose sine and cosine are `s`, `c`).
#[inline(always)]
fn quadrant32(q: u32, s: f32, c: f32) -> (f32, f32) {
    let swap = (q & 1).wrapping_neg(); // all ones for odd quadrants
    let (sb, cb) = (s.to_bits(), c.to_bits());
    let sin = (sb & !swap) | (cb & swap);
    let cos = (cb & !swap) | (sb & swap);
    // sin is negative in quadrants 2, 3; cos in quadrants 1, 2.
    let sin = sin ^ ((q & 2) << 30);
    let cos = cos ^ ((q.wrapping_add(1) & 2) << 30);
    (f32::from_bits(sin), f32::from_bits(cos))
}

/// (sin 2πt, cos 2πt) for t ∈ [0, 1) in `f64` (fdlibm's `__kernel_sin`/`__kernel_cos`
/// polynomials at x = 2πf, f ∈ [−1/8, 1/8]; see [`sincos_turns32`]).
#[inline(always)]
pub(crate) fn sincos_turns64<const F: bool>(t: f64) -> (f64, f64) {
    const S1: f64 = -1.666_666_666_666_663_2e-1;
    const S2: f64 = 8.333_333_333_322_49e-3;
    const S3: f64 = -1.984_126_982_985_795e-4;
    const S4: f64 = 2.755_731_370_707_006_8e-6;
    const S5: f64 = -2.505_076_025_340_686_3e-8;
    const S6: f64 = 1.589_690_995_211_55e-10;
    const C1: f64 = 4.166_666_666_666_66e-2;
    const C2: f64 = -1.388_888_888_887_411e-3;
    const C3: f64 = 2.480_158_728_947_673e-5;
    const C4: f64 = -2.755_731_435_139_066_3e-7;
    const C5: f64 = 2.087_572_321_298_175e-9;
    const C6: f64 = -1.135_964_755_778_819_5e-11;
    let (qf, q) = round_int64(t * 4.0);
    let f = mad64::<F>(qf, -0.25, t);
    let x = f * TAU64;
    let z = x * x;
    let ps = mad64::<F>(
        z,
        mad64::<F>(
            z,
            mad64::<F>(z, mad64::<F>(z, mad64::<F>(z, S6, S5), S4), S3),
            S2,
        ),
        S1,
    );
    let s = mad64::<F>(x * z, ps, x);
    let pc = mad64::<F>(
        z,
        mad64::<F>(
            z,
            mad64::<F>(z, mad64::<F>(z, mad64::<F>(z, C6, C5), C4), C3),
            C2,
        ),
        C1,
    );
    // cos x = w + ((1 − w) − hz + z²·pc) with w = 1 − z/2 (fdlibm's split keeps the last bit).
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let c = w + (((1.0 - w) - hz) + z * z * pc);
    quadrant64(q as u64, s, c)
}

/// [`quadrant32`] for `f64`.
#[inline(always)]
fn quadrant64(q: u64, s: f64, c: f64) -> (f64, f64) {
    let swap = (q & 1).wrapping_neg();
    let (sb, cb) = (s.to_bits(), c.to_bits());
    let sin = (sb & !swap) | (cb & swap);
    let cos = (cb & !swap) | (sb & swap);
    let sin = sin ^ ((q & 2) << 62);
    let cos = cos ^ ((q.wrapping_add(1) & 2) << 62);
    (f64::from_bits(sin), f64::from_bits(cos))
}

/// eˣ in `f32`, branch-free: x = n·ln2 + r with |r| ≤ ln2/2, Cephes' degree-7 `expf`
/// polynomial, and 2ⁿ applied as two exact powers of two so that results near the overflow and
/// underflow thresholds (including subnormals) come out right. +∞ for x > 88.72, 0 below
/// −103.97, NaN for NaN.
#[inline(always)]
pub(crate) fn exp32<const F: bool>(x: f32) -> f32 {
    // Clamped so that n stays within [−150, 129]; the clamp's ends give 0 and +∞ exactly.
    let xc = x.clamp(-104.0, 89.0);
    let (nf, n) = round_int32(xc * core::f32::consts::LOG2_E);
    let r = mad32::<F>(nf, -0.693_359_375, xc);
    let r = mad32::<F>(nf, 2.121_944_4e-4, r);
    let mut p = 1.987_569_15e-4;
    p = mad32::<F>(p, r, 1.398_199_950_7e-3);
    p = mad32::<F>(p, r, 8.333_451_907_3e-3);
    p = mad32::<F>(p, r, 4.166_579_589_4e-2);
    p = mad32::<F>(p, r, 1.666_666_545_9e-1);
    p = mad32::<F>(p, r, 5.000_000_120_1e-1);
    let y = mad32::<F>(p, r * r, r) + 1.0;
    let half = n >> 1;
    let s1 = f32::from_bits(((half + 127) as u32) << 23);
    let s2 = f32::from_bits(((n - half + 127) as u32) << 23);
    let e = y * s1 * s2;
    if x.is_nan() { x } else { e }
}

/// eˣ in `f64` (see [`exp32`]): the degree-13 Taylor polynomial on |r| ≤ ln2/2 (truncation
/// below 4·10⁻¹⁸), ln 2 in two parts. +∞ above 709.78, 0 below −745.2, NaN for NaN.
#[inline(always)]
pub(crate) fn exp64<const F: bool>(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let xc = x.clamp(-746.0, 710.0);
    let (nf, n) = round_int64(xc * core::f64::consts::LOG2_E);
    let r = mad64::<F>(nf, -LN2_HI, xc);
    let r = mad64::<F>(nf, -LN2_LO, r);
    // 1/k! for k = 13 … 2, Horner from the top.
    const INV_FACT: [f64; 12] = [
        1.0 / 6_227_020_800.0,
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
    ];
    let mut p = INV_FACT[0];
    for c in &INV_FACT[1..] {
        p = mad64::<F>(p, r, *c);
    }
    let y = mad64::<F>(p, r * r, r) + 1.0;
    let half = n >> 1;
    let s1 = f64::from_bits(((half + 1023) as u64) << 52);
    let s2 = f64::from_bits(((n - half + 1023) as u64) << 52);
    let e = y * s1 * s2;
    if x.is_nan() { x } else { e }
}

/// tanh x in `f32`, branch-free: for |x| < 0.625 Cephes `tanhf`'s odd polynomial
/// |x| + |x|³·P(x²), above it (1 − y)/(1 + y) with y = e^{−2|x|} by [`exp32`] (no cancellation
/// there, as y ≤ 0.29), both computed and one selected; the sign restored from x's bit. ±1 for
/// ±∞, NaN for NaN.
#[inline(always)]
pub(crate) fn tanh32<const F: bool>(x: f32) -> f32 {
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    let z = a * a;
    let mut p = -5.704_988_727_45e-3;
    p = mad32::<F>(p, z, 2.063_908_879_54e-2);
    p = mad32::<F>(p, z, -5.373_971_555_31e-2);
    p = mad32::<F>(p, z, 1.333_144_220_36e-1);
    p = mad32::<F>(p, z, -3.333_328_194_22e-1);
    let small = mad32::<F>(p * z, a, a);
    let y = exp32::<F>(-2.0 * a);
    let large = (1.0 - y) / (1.0 + y);
    let t = if a < 0.625 { small } else { large };
    f32::from_bits(t.to_bits() | (x.to_bits() & 0x8000_0000))
}

/// tanh x in `f64` (see [`tanh32`]): below 0.625 Cephes `tanh`'s rational form
/// |x| + |x|·z·P(z)/Q(z), z = x², above it (1 − y)/(1 + y) with y = e^{−2|x|} by [`exp64`].
#[inline(always)]
pub(crate) fn tanh64<const F: bool>(x: f64) -> f64 {
    let a = f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff);
    let z = a * a;
    let p = mad64::<F>(
        mad64::<F>(-9.643_991_794_250_522e-1, z, -9.928_772_310_019_186e1),
        z,
        -1.614_687_684_417_084_5e3,
    );
    let q = mad64::<F>(
        mad64::<F>(z + 1.128_116_784_916_329_3e2, z, 2.235_488_390_601_005_8e3),
        z,
        4.844_063_053_251_255e3,
    );
    let small = mad64::<F>(a * z, p / q, a);
    let y = exp64::<F>(-2.0 * a);
    let large = (1.0 - y) / (1.0 + y);
    let t = if a < 0.625 { small } else { large };
    f64::from_bits(t.to_bits() | (x.to_bits() & 0x8000_0000_0000_0000))
}
