//! Numerical integrators: Euler, symmetric splitting (A–B–O–B–A) and leapfrog.
//!
//! The SDE samplers (SGHMC, SGNHT, mSGNHT) share the Euler and splitting schemes: each scheme is
//! written once, over the sub-steps of the dynamics, and a sampler supplies only its friction
//! piece (`Friction`: a constant, a scalar thermostat or one thermostat per coordinate) and its
//! noise scale. HMC's leapfrog lives beside them.

mod euler;
mod leapfrog;
mod pieces;
mod splitting;

pub(crate) use euler::euler_step;
pub(crate) use leapfrog::leapfrog;
pub(crate) use pieces::{Friction, Phase, check_finite, check_len, check_state};
pub use pieces::{Integrator, Workspace};
pub(crate) use splitting::splitting_step;
