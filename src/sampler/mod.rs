//! The samplers: SGLD, SGHMC, SGNHT, mSGNHT and HMC.

mod hmc;
pub(crate) mod params;
mod sghmc;
mod sgld;
mod sgnht;
mod stats;

pub use hmc::{Hmc, HmcParams, HmcWorkspace};
pub use sghmc::{Sghmc, SghmcParams};
pub use sgld::{Sgld, SgldParams};
pub use sgnht::{MSgnht, Sgnht, SgnhtParams};
pub use stats::{ChainState, Sampler, StepStats};
