//! The float trait [`Real`], implemented for `f32` and `f64`: arithmetic, math through the shim, and draws.
//!
//! Every sampler is written once, generic over `T: Real`. The two implementations differ only in
//! the math shim functions they call (`src/math.rs`: libm, or micromath for `f32`) and in their
//! random-number paths (the `f32` ziggurat has its own tables and never computes in `f64`).

use crate::arith::{Arith, Plain};
use crate::noise::NormalLanes;
use crate::noise::poly::NATIVE_FMA;
use crate::{math, noise, ziggurat};
use core::fmt::{Debug, Display};
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use rand_core::Rng;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A floating-point type the samplers run in: `f32` or `f64` (sealed).
///
/// All samplers are written once, generic over `T: Real`; the two implementations differ only in
/// the math shim they call and in their random-number paths (f32 has its own ziggurat tables and
/// never computes in f64).
pub trait Real:
    'static
    + Copy
    + Default
    + PartialOrd
    + Debug
    + Display
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Send
    + Sync
    + sealed::Sealed
    + 'static
{
    /// 0
    const ZERO: Self;
    /// 1
    const ONE: Self;
    /// 2
    const TWO: Self;
    /// 1/2
    const HALF: Self;
    /// Machine epsilon.
    const EPSILON: Self;
    /// +∞
    const INFINITY: Self;
    /// Largest finite value.
    const MAX: Self;

    /// Converts an `f64` (rounding to nearest for `f32`). Used on parameters and constants, never
    /// inside a per-coordinate loop.
    fn from_f64(x: f64) -> Self;
    /// Converts an `f32` exactly (f32 → f64 is exact; f32 → f32 is the identity).
    fn from_f32(x: f32) -> Self;
    /// Converts a count (rounding to nearest for large counts).
    fn from_usize(n: usize) -> Self;
    /// Converts an iteration counter (rounding to nearest for large counts; no f64 detour for f32).
    fn from_u64(n: u64) -> Self;
    /// Widens to `f64` (exact for both types); for reporting, not for the kernels.
    fn to_f64(self) -> f64;
    /// The bit pattern (an `f32`'s in the low 32 bits): an exact, integer-only equality key.
    fn to_bits_u64(self) -> u64;

    /// eˣ through the math shim.
    fn exp(self) -> Self;
    /// Natural logarithm through the math shim.
    fn ln(self) -> Self;
    /// Square root through the math shim.
    fn sqrt(self) -> Self;
    /// xʸ through the math shim.
    fn powf(self, y: Self) -> Self;
    /// |x|
    fn abs(self) -> Self;
    /// `true` when the value is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// The larger of two values (NaN-ignoring, as `f64::max`).
    fn max(self, other: Self) -> Self;
    /// The smaller of two values (NaN-ignoring, as `f64::min`).
    fn min(self, other: Self) -> Self;

    /// One standard normal draw, through this type's own ziggurat ([`crate::rng`]); the samplers'
    /// per-coordinate noise comes from [`crate::rng::fill_lane_normals`]'s lanes instead.
    fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> Self;
    /// One uniform draw from the half-open interval \[0, 1).
    fn uniform<R: Rng + ?Sized>(rng: &mut R) -> Self;
    /// One uniform draw from the open interval (0, 1): never 0, so its logarithm is finite.
    fn uniform_open<R: Rng + ?Sized>(rng: &mut R) -> Self;
    /// The multi-lane generator of the samplers' noise ([`crate::rng::fill_lane_normals`]).
    #[doc(hidden)]
    type NormalLanes: NormalLanes<Self>;
    /// eˣ by a branch-free polynomial that vectorises inside the per-coordinate loops (the
    /// splitting integrator's friction flows), about 1 ulp; independent of the math shim. On a
    /// scalar core ([`crate::rng::SCALAR_CORE`]), libm's `exp`: nothing to vectorise there, and
    /// without an FPU for the type (a Cortex-M0, a Cortex-M4F's `f64`) its few library-call
    /// operations cost less (the same function on every scalar core, so that they all draw
    /// one chain).
    fn exp_poly(self) -> Self;
    /// tanh x, branch-free on top of [`exp_poly`](Self::exp_poly) (so it vectorises too), within
    /// 2 ulp of libm's (`docs/rng.md`); independent of the math shim. On a scalar core, libm's
    /// `tanh`.
    fn tanh_poly(self) -> Self;
    /// ln x for a positive normal x by a branch-free polynomial that vectorises (the Box–Muller
    /// radius's logarithm: Cephes `logf` for `f32`, fdlibm's `e_log.c` for `f64`, `docs/rng.md`);
    /// independent of the math shim. For 0, subnormals, ∞ and NaN the result is unspecified (never a panic).
    /// On a scalar core, libm's `log`.
    fn ln_poly(self) -> Self;
    /// [`exp_poly`](Self::exp_poly) with the multiply-adds fused also when `A` says so.
    #[doc(hidden)]
    #[allow(private_bounds)]
    fn exp_in<A: Arith>(self) -> Self;
    /// [`tanh_poly`](Self::tanh_poly) with the multiply-adds fused also when `A` says so.
    #[doc(hidden)]
    #[allow(private_bounds)]
    fn tanh_in<A: Arith>(self) -> Self;
    /// [`ln_poly`](Self::ln_poly) with the multiply-adds fused also when `A` says so.
    #[doc(hidden)]
    #[allow(private_bounds)]
    fn ln_in<A: Arith>(self) -> Self;
    /// The smallest positive normal number.
    const MIN_POSITIVE: Self;
    /// eˣ − 1, accurate also near 0 (libm's, whatever the shim).
    fn expm1(self) -> Self;
    /// sinh x (libm's, whatever the shim).
    fn sinh(self) -> Self;
    /// asinh x (libm's, whatever the shim).
    fn asinh(self) -> Self;
}

macro_rules! impl_real {
    ($t:ty, $exp:path, $ln:path, $sqrt:path, $pow:path, $normal:path, $unif:path, $open:path,
     $fill:ty, $exp_poly:ident, $tanh_poly:ident, $ln_poly:ident,
     $exp_scalar:path, $tanh_scalar:path, $ln_scalar:path,
     $expm1:path, $sinh:path, $asinh:path) => {
        impl Real for $t {
            type NormalLanes = $fill;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const TWO: Self = 2.0;
            const HALF: Self = 0.5;
            const EPSILON: Self = <$t>::EPSILON;
            const INFINITY: Self = <$t>::INFINITY;
            const MAX: Self = <$t>::MAX;
            const MIN_POSITIVE: Self = <$t>::MIN_POSITIVE;

            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn from_f32(x: f32) -> Self {
                x as $t
            }
            #[inline(always)]
            fn from_usize(n: usize) -> Self {
                n as $t
            }
            #[inline(always)]
            fn from_u64(n: u64) -> Self {
                n as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_bits_u64(self) -> u64 {
                u64::from(self.to_bits())
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $ln(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $sqrt(self)
            }
            #[inline(always)]
            fn powf(self, y: Self) -> Self {
                $pow(self, y)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                if crate::engine::SCALAR_CORE {
                    // The exponent's bits, an integer test: on a core without an FPU for `$t`
                    // a float comparison is a library call.
                    <$t>::abs(self).to_bits() < <$t>::INFINITY.to_bits()
                } else {
                    <$t>::is_finite(self)
                }
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            #[inline(always)]
            fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> Self {
                $normal(rng)
            }
            #[inline(always)]
            fn uniform<R: Rng + ?Sized>(rng: &mut R) -> Self {
                $unif(rng)
            }
            #[inline(always)]
            fn uniform_open<R: Rng + ?Sized>(rng: &mut R) -> Self {
                $open(rng)
            }
            #[inline(always)]
            fn exp_poly(self) -> Self {
                self.exp_in::<Plain>()
            }
            #[inline(always)]
            fn tanh_poly(self) -> Self {
                self.tanh_in::<Plain>()
            }
            #[inline(always)]
            fn ln_poly(self) -> Self {
                self.ln_in::<Plain>()
            }
            #[inline(always)]
            fn exp_in<A: Arith>(self) -> Self {
                if !crate::engine::VECTOR_TARGET {
                    $exp_scalar(self)
                } else if A::FUSED || NATIVE_FMA {
                    noise::poly::$exp_poly::<true>(self)
                } else {
                    noise::poly::$exp_poly::<false>(self)
                }
            }
            #[inline(always)]
            fn tanh_in<A: Arith>(self) -> Self {
                if !crate::engine::VECTOR_TARGET {
                    $tanh_scalar(self)
                } else if A::FUSED || NATIVE_FMA {
                    noise::poly::$tanh_poly::<true>(self)
                } else {
                    noise::poly::$tanh_poly::<false>(self)
                }
            }
            #[inline(always)]
            fn ln_in<A: Arith>(self) -> Self {
                if !crate::engine::VECTOR_TARGET {
                    $ln_scalar(self)
                } else if A::FUSED || NATIVE_FMA {
                    noise::poly::$ln_poly::<true>(self)
                } else {
                    noise::poly::$ln_poly::<false>(self)
                }
            }
            #[inline(always)]
            fn expm1(self) -> Self {
                $expm1(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                $sinh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                $asinh(self)
            }
        }
    };
}

impl_real!(
    f32,
    math::exp32,
    math::ln32,
    math::sqrt32,
    math::pow32,
    ziggurat::standard_normal_f32,
    ziggurat::uniform_f32,
    ziggurat::uniform_open_f32,
    noise::Xoshiro128x16,
    exp32,
    tanh32,
    ln32,
    math::scalar::exp32,
    math::scalar::tanh32,
    math::scalar::ln32,
    math::hyperbolic::expm1_32,
    math::hyperbolic::sinh32,
    math::hyperbolic::asinh32
);
impl_real!(
    f64,
    math::exp64,
    math::ln64,
    math::sqrt64,
    math::pow64,
    ziggurat::standard_normal_f64,
    ziggurat::uniform_f64,
    ziggurat::uniform_open_f64,
    noise::Xoshiro256x8,
    exp64,
    tanh64,
    ln64,
    math::scalar::exp64,
    math::scalar::tanh64,
    math::scalar::ln64,
    math::hyperbolic::expm1_64,
    math::hyperbolic::sinh64,
    math::hyperbolic::asinh64
);

#[cfg(test)]
mod tests {
    use super::Real;

    #[test]
    fn shim_matches_reference_values() {
        assert!((Real::exp(1.0f64) - core::f64::consts::E).abs() < 1e-15);
        assert!((Real::ln(core::f64::consts::E) - 1.0f64).abs() < 1e-15);
        assert!((Real::sqrt(2.0f64) - core::f64::consts::SQRT_2).abs() < 1e-15);
        // micromath's exp and ln are approximations (~10⁻⁴–10⁻³); libm's are within an ulp or
        // two. sqrt is libm's under every feature.
        let tol = if cfg!(feature = "micromath") {
            2e-3
        } else {
            1e-6
        };
        assert!((Real::exp(1.0f32) - core::f32::consts::E).abs() < tol * 3.0);
        for x in [0.1f32, 0.5, 2.0, 1e4] {
            assert_eq!(Real::sqrt(x), libm::sqrtf(x), "sqrt({x})");
        }
        // Both branches of ln, including x < 1 (see the shim's note on micromath).
        for x in [
            0.001f32,
            0.1,
            0.5,
            0.9,
            1.5,
            core::f32::consts::E,
            10.0,
            1000.0,
        ] {
            let exact = libm::log(x as f64) as f32;
            let err = (Real::ln(x) - exact).abs();
            assert!(err < tol * exact.abs().max(1.0), "ln({x}): error {err}");
        }
        // powf on both sides of 1 (micromath's own powf is 7–17 % off below 1).
        for (x, y) in [
            (0.9f32, 1.5f32),
            (0.1, 0.5),
            (0.5, 2.0),
            (2.0, 0.25),
            (7.0, 1.5),
        ] {
            let exact = libm::pow(x as f64, y as f64) as f32;
            let err = (Real::powf(x, y) - exact).abs() / exact;
            assert!(err < 3.0 * tol, "powf({x}, {y}): relative error {err}");
        }
    }
}
