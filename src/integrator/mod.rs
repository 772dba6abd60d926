//! Numerical integrators: Euler, symmetric splitting (A–B–O–B–A) and leapfrog.
//!
//! The SDE samplers (SGHMC, SGNHT, mSGNHT) share the Euler and splitting schemes: each scheme is
//! written once, over the sub-steps of the dynamics, and a sampler supplies only its friction
//! piece (`Friction`: a constant, a scalar thermostat or one thermostat per coordinate) and its
//! noise scale. The generalized-kinetics samplers (SGMGT, SGMGT-D) use the same two schemes over
//! general pieces (`GeneralPieces`: a kinetic energy K, a thermostat potential F and first-order
//! Langevin terms), in `euler_step_general` and `splitting_step_general`. HMC's leapfrog lives
//! beside them, and so does the generalized leapfrog of SG-NPHMC's stochastic Nosé–Poincaré
//! dynamics (`generalized_leapfrog`).

mod euler;
mod generalized_leapfrog;
mod leapfrog;
mod mass_sde;
mod pieces;
mod splitting;

pub(crate) use euler::{euler_step, euler_step_general};
pub(crate) use generalized_leapfrog::{
    NpConstants, NpScalars, generalized_leapfrog_step, kinetic2_mass, nose_poincare_energy,
};
pub(crate) use leapfrog::leapfrog;
pub use mass_sde::ThermostatRule;
pub(crate) use mass_sde::{MassFriction, mass_euler_step, mass_splitting_step};
pub(crate) use pieces::{
    Friction, GeneralPieces, Phase, check_finite, check_len, check_mass, check_state,
    checked_gradient, theta_noise_factors,
};
pub use pieces::{Integrator, Workspace};
pub(crate) use splitting::{splitting_step, splitting_step_general};
