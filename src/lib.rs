//! Crate root of `sgmcmc`: the crate documentation, the module tree and the prelude.
#![doc = include_str!("../docs/crate.md")]
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_code)] // allowed in two audited modules, `sqrt` and `dispatch`
#![deny(missing_docs)]
#![warn(clippy::all)]

#[cfg(test)]
extern crate std;

pub mod adapt;
mod any;
mod arith;
pub mod diagnostics;
pub mod dispatch;
mod engine;
pub mod error;
pub mod gradient;
pub mod integrator;
pub mod kinetic;
mod lanes;
mod lengths;
pub mod linalg;
mod math;
mod noise;
pub mod prelude;
pub mod real;
pub mod rng;
mod rows;
pub mod sampler;
mod sqrt;
mod validate;
pub mod variance;
mod variates;
mod ziggurat;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// `docs/usage.md`'s examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/usage.md")]
pub struct UsageDoctests;

/// `docs/guide.md`'s example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../docs/guide.md")]
pub struct GuideDoctests;

/// `docs/embedded.md`'s examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/embedded.md")]
pub struct EmbeddedDoctests;

pub use any::{AnyParams, AnySampler};
pub use error::{Buffer, Error, LayoutError, LinalgError, Param, ParamError, StepError};
pub use gradient::{
    Batch, Energy, Gradient, MinibatchGradient, Model, Moments, PairedGradient, Sampling,
};
pub use kinetic::Kinetic;
pub use lengths::Lengths;
pub use real::Real;
