//! Everything needed to build and run a sampler: `use sgmcmc::prelude::*;`.
//!
//! (Re-exports only, listed as links: each item is documented at its own path.)

#[doc(no_inline)]
pub use crate::Lengths;
#[doc(no_inline)]
pub use crate::adapt::{Calibrated, CalibratedParams, Correction, NoiseShape};
#[doc(no_inline)]
pub use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
#[doc(no_inline)]
pub use crate::gradient::{Batch, Energy, Gradient, MinibatchGradient, Model, Moments, Sampling};
#[doc(no_inline)]
pub use crate::integrator::{Euler, Integrator, Splitting, ThermostatRule};
#[doc(no_inline)]
pub use crate::kinetic::{
    DenseMass, DiagonalMass, Gaussian, IdentityMass, MassBuffer, MonomialGamma,
};
#[doc(no_inline)]
pub use crate::real::Real;
#[doc(no_inline)]
pub use crate::sampler::{
    ChainState, Checkpoint, Hmc, HmcParams, MSgnht, Observer, RunError, Sampler, SgNphmc,
    SgNphmcParams, Sghmc, SghmcParams, Sgld, SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams,
    StepSchedule, StepSize, StepStats, Tempered,
};
#[doc(no_inline)]
pub use crate::sampler::{Psgld, PsgldParams};
#[doc(no_inline)]
pub use crate::{AnyParams, AnySampler};
#[doc(hidden)] // the sealed bounds, for code generic over a sampler's integrator or mass
pub use crate::{integrator::IntegratorChoice, sampler::MassKind};
