//! The samplers: SGLD, SGHMC, SGNHT, mSGNHT, SGMGT / SGMGT-D, HMC and SG-NPHMC.
//!
//! Each is built the same way — `Sampler::new(params, state buffers…, &mut work)` with
//! `params` from `XParams::new(h)` and its `with_*` settings (documented defaults) and `work` of
//! the sampler's `workspace_len(n)` — and driven by [`Sampler::step`] or [`Sampler::run`].

mod hmc;
mod nose_poincare;
mod proposal;
mod run;
mod schedule;
mod sde;
mod sghmc;
mod sgld;
mod sgmgt;
mod sgnht;

pub use crate::integrator::ThermostatRule;
pub use hmc::{Hmc, HmcParams};
pub use nose_poincare::{SgNphmc, SgNphmcParams};
pub use run::{ChainState, Observer, RunError, Sampler, StepStats};
pub use schedule::StepSchedule;
pub use sghmc::{Sghmc, SghmcParams};
pub use sgld::{Sgld, SgldParams};
pub use sgmgt::{Sgmgt, SgmgtParams};
pub use sgnht::{MSgnht, Sgnht, SgnhtParams};
