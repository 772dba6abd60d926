//! Crate root of `sgmcmc`: documentation, feature list and re-exports only.
#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::all)]

pub mod adapt;
pub mod error;
pub mod gradient;
pub mod integrator;
pub mod kinetic;
mod lanes;
pub mod linalg;
pub mod real;
pub mod rng;
pub mod sampler;

pub use error::{Buffer, LayoutError, LinalgError, Param, ParamError, StepError};
pub use gradient::{Energy, Gradient, Model};
pub use integrator::{Integrator, Workspace};
pub use kinetic::Kinetic;
pub use real::Real;
pub use sampler::{ChainState, Sampler, StepStats};
