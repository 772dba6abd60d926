//! The samplers: SGLD, SGHMC, SGNHT, mSGNHT, SGMGT / SGMGT-D, HMC and SG-NPHMC.

mod hmc;
mod nose_poincare;
pub(crate) mod params;
mod sghmc;
mod sgld;
mod sgmgt;
mod sgnht;
mod stats;

pub use crate::integrator::ThermostatRule;
pub use crate::kinetic::{AdaptiveMass, MassBuffer};
pub use hmc::{Hmc, HmcParams, HmcWorkspace};
pub use nose_poincare::{SgNphmc, SgNphmcParams, SgNphmcWorkspace};
pub use sghmc::{Sghmc, SghmcParams};
pub use sgld::{Sgld, SgldParams};
pub use sgmgt::{Sgmgt, SgmgtParams};
pub use sgnht::{MSgnht, Sgnht, SgnhtParams};
pub use stats::{ChainState, Sampler, StepStats};
