//! The samplers: SGLD, pSGLD, SGHMC, SGNHT, mSGNHT, SGMGT / SGMGT-D, HMC and SG-NPHMC.
//!
//! Each is built the same way — e.g. `Sghmc::new(params, θ, p, &mut work)` with `params` from
//! `SghmcParams::new(h)` and its `with_*` settings (documented defaults, checked when the sampler
//! is built) and `work` a slice of [`crate::Lengths`]`::sghmc(n).work` entries — and driven by
//! [`Sampler::step`] or [`Sampler::run`]. HMC, SGHMC, SGNHT and SG-NPHMC take a mass afterwards
//! with `set_mass` ([`crate::kinetic::MassBuffer`]); SGMGT takes its kinetics in its parameters.
//! Every sampler (and the MCEM wrapper) can be checkpointed and resumed bit for bit
//! ([`Checkpoint`]).

mod checkpoint;
mod discount;
mod hmc;
mod nose_poincare;
mod proposal;
mod psgld;
mod run;
mod schedule;
mod sghmc;
mod sgld;
mod sgmgt;
mod sgnht;
pub(crate) mod shell;
mod temperature;

pub use checkpoint::Checkpoint;
pub(crate) use checkpoint::{
    Rollback, SavedState, put_scalars, read_parts, real_from_word, scalars_at, statistic_from_word,
    write_parts,
};
#[doc(hidden)] // the opaque `Checkpoint::State` of the samplers: kept, not read
pub use checkpoint::{SCALARS_WORDS, Scalars};
pub(crate) use discount::Discount;
#[doc(hidden)] // a sealed bound of `Calibrated`: which samplers it wraps
pub use discount::NoiseDiscount;
pub use hmc::{Hmc, HmcParams};
pub use nose_poincare::{SgNphmc, SgNphmcParams};
pub use psgld::{Psgld, PsgldParams};
pub use run::{ChainState, Observer, RunError, Sampler, StepStats};
pub use schedule::{StepSchedule, StepSize, run_cyclical, run_scheduled};
pub use sghmc::{Sghmc, SghmcParams};
pub use sgld::{Sgld, SgldParams};
pub use sgmgt::{Sgmgt, SgmgtParams};
pub use sgnht::{MSgnht, Sgnht, SgnhtParams};
#[doc(hidden)] // a sealed bound of `with_mass`: which mass types it takes
pub use shell::MassKind;
pub use temperature::Tempered;
pub(crate) use temperature::{
    check_positive_temperature, check_temperature, temperature_from_params,
};
