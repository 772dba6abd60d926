//! Everything needed to build and run a sampler: `use sgmcmc::prelude::*;`.

pub use crate::adapt::{Calibrated, CalibratedParams, Correction, NoiseShape};
pub use crate::any::{AnyParams, AnySampler};
pub use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
pub use crate::gradient::{Batch, Energy, Gradient, MinibatchGradient, Model, Moments, Sampling};
pub use crate::integrator::{Euler, Integrator, IntegratorChoice, Splitting};
pub use crate::kinetic::{
    DenseMass, DiagonalMass, Gaussian, IdentityMass, MassBuffer, MonomialGamma,
};
pub use crate::lengths::Lengths;
pub use crate::real::Real;
pub use crate::sampler::{
    ChainState, Checkpoint, Hmc, HmcParams, MSgnht, MassKind, Observer, RunError, Sampler, SgNphmc,
    SgNphmcParams, Sghmc, SghmcParams, Sgld, SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams,
    StepSchedule, StepSize, StepStats, ThermostatRule,
};
