//! A step copy's multiply-add rounding, handed down as a type: [`Plain`] or [`Fused`].
//!
//! Whether a copy of a step fuses the multiply-adds of the polynomials
//! ([`Real::exp_poly`](crate::Real::exp_poly), [`Real::tanh_poly`](crate::Real::tanh_poly),
//! [`Real::ln_poly`](crate::Real::ln_poly)): a type that the dispatched step hands down to its
//! kinetics, since a `#[target_feature]` copy cannot ask at compile time which features it was
//! compiled for (`crate::dispatch`). Public in a private module: nameable only in the crate. On
//! the ground floor of the crate, so that `dispatch`, `noise` and `real` all import it without a
//! cycle.

/// A copy's multiply-add rounding.
pub trait Arith: Copy + core::fmt::Debug + Default {
    /// The polynomials fuse their multiply-adds (as they always do when the build's own
    /// features include FMA, [`NATIVE_FMA`](crate::noise::poly::NATIVE_FMA)).
    const FUSED: bool;
}
/// The build's own rounding: fused only where its target features include FMA.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain;
impl Arith for Plain {
    const FUSED: bool = false;
}
/// Fused: the dispatched AVX2 and AVX-512 copies, whose CPUs all have FMA.
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(not(all(feature = "std", target_arch = "x86_64")), allow(dead_code))]
pub struct Fused;
impl Arith for Fused {
    const FUSED: bool = true;
}
