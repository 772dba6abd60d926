//! The one math shim: `exp`, `ln`, `sqrt` and `powf` for `f32` and `f64`, from libm or micromath.
//!
//! This is the only module that names `libm` or `micromath`; [`crate::Real`] and the ziggurat call
//! it, so linking `std` into a test binary can never silently change the numbers (`std`'s
//! inherent `f32::exp` would otherwise shadow a trait method of the same name). `f64` always uses
//! libm; `f32` uses libm by default and micromath's approximations with the `micromath` feature
//! (`sqrt` stays the IEEE one, libm's or the SSE instruction: micromath's is up to 6 % off,
//! which would bias every noise scale √(2Ah)).
//! The f32 functions never widen to f64, so a Cortex-M4F runs them on its single-precision FPU.

#[inline(always)]
pub(crate) fn exp64(x: f64) -> f64 {
    libm::exp(x)
}
#[inline(always)]
pub(crate) fn ln64(x: f64) -> f64 {
    libm::log(x)
}
/// IEEE 754 √x: the SSE2 instruction on x86-64 (vectorisable, unlike libm's inline assembly
/// there), libm elsewhere; the same value either way (`crate::sqrt`).
#[inline(always)]
pub(crate) fn sqrt64(x: f64) -> f64 {
    crate::sqrt::sqrt64(x)
}
#[inline(always)]
pub(crate) fn pow64(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

#[cfg(not(feature = "micromath"))]
mod f32_backend {
    // Without micromath the shim's f32 exp and ln are libm's, the accurate scalar ones.
    pub(crate) use super::scalar::{exp32, ln32};
    /// IEEE 754 √x (see `sqrt64`).
    #[inline(always)]
    pub(crate) fn sqrt32(x: f32) -> f32 {
        crate::sqrt::sqrt32(x)
    }
    #[inline(always)]
    pub(crate) fn pow32(x: f32, y: f32) -> f32 {
        libm::powf(x, y)
    }
}

#[cfg(feature = "micromath")]
mod f32_backend {
    // Fully qualified calls: with `std` linked (tests), `x.exp()` would resolve to the inherent
    // std method and silently bypass micromath.
    use micromath::F32Ext;
    #[inline(always)]
    pub(crate) fn exp32(x: f32) -> f32 {
        F32Ext::exp(x)
    }
    /// micromath 2.1's `ln` goes through a fast reciprocal that is only ~8 % accurate for
    /// x < 1 (ln 0.9 comes out −0.182 instead of −0.105); ln x = −ln(1/x) keeps it on the
    /// accurate branch (≈ 6·10⁻⁵ absolute error).
    #[inline(always)]
    pub(crate) fn ln32(x: f32) -> f32 {
        if x < 1.0 {
            -F32Ext::ln(1.0 / x)
        } else {
            F32Ext::ln(x)
        }
    }
    /// sqrt stays the IEEE one (correctly rounded) even here: micromath's is off by up to ~6 %
    /// (+2.8 % at 0.1, +6.1 % at 0.5 and 2), which would scale every injected noise √(2Ah) and
    /// make SGLD and SGHMC sample about 6 % too hot.
    #[inline(always)]
    pub(crate) fn sqrt32(x: f32) -> f32 {
        crate::sqrt::sqrt32(x)
    }
    /// micromath 2.1's `powf` inherits the ln problem above (pow(0.9, 1.5) = 0.761 instead of
    /// 0.854), so xʸ = exp(y ln x) through the corrected `ln32` for x > 0; x = 0 and negative or
    /// non-finite bases keep micromath's own handling.
    #[inline(always)]
    pub(crate) fn pow32(x: f32, y: f32) -> f32 {
        if x > 0.0 && x.is_finite() {
            exp32(y * ln32(x))
        } else {
            F32Ext::powf(x, y)
        }
    }
}

pub(crate) use f32_backend::{exp32, ln32, pow32, sqrt32};

/// The accurate scalar exp, ln and tanh of libm, whatever the shim (micromath's are
/// approximations): what the kernels' polynomial forms ([`crate::Real::exp_poly`], …) become on
/// a scalar core, which has nothing to vectorise; without an FPU for the type each of a
/// branch-free polynomial's operations is a library call and libm's short, range-reduced forms
/// cost a fraction of it (on a Cortex-M4F's `f64`, the degree-13 exp polynomial alone is ~26
/// software double operations).
pub(crate) mod scalar {
    #[inline(always)]
    pub(crate) fn exp32(x: f32) -> f32 {
        libm::expf(x)
    }
    #[inline(always)]
    pub(crate) fn ln32(x: f32) -> f32 {
        libm::logf(x)
    }
    #[inline(always)]
    pub(crate) fn tanh32(x: f32) -> f32 {
        libm::tanhf(x)
    }
    #[inline(always)]
    pub(crate) fn tanh64(x: f64) -> f64 {
        libm::tanh(x)
    }
    // f64 is libm's in every build: the shim's own.
    pub(crate) use super::{exp64, ln64};
}

/// eˣ − 1, sinh x and asinh x of libm (accurate near 0, no overflow before the result does),
/// whatever the shim: micromath has none of them.
pub(crate) mod hyperbolic {
    #[inline(always)]
    pub(crate) fn expm1_32(x: f32) -> f32 {
        libm::expm1f(x)
    }
    #[inline(always)]
    pub(crate) fn sinh32(x: f32) -> f32 {
        libm::sinhf(x)
    }
    #[inline(always)]
    pub(crate) fn asinh32(x: f32) -> f32 {
        libm::asinhf(x)
    }
    #[inline(always)]
    pub(crate) fn expm1_64(x: f64) -> f64 {
        libm::expm1(x)
    }
    #[inline(always)]
    pub(crate) fn sinh64(x: f64) -> f64 {
        libm::sinh(x)
    }
    #[inline(always)]
    pub(crate) fn asinh64(x: f64) -> f64 {
        libm::asinh(x)
    }
}
