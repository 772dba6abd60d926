//! Everything needed to build and run a sampler: `use sgmcmc::prelude::*;`.

pub use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
pub use crate::gradient::{Energy, Gradient, Model};
pub use crate::integrator::Integrator;
pub use crate::kinetic::{Gaussian, MassBuffer, MonomialGamma};
pub use crate::real::Real;
pub use crate::sampler::{
    ChainState, Hmc, HmcParams, MSgnht, Observer, RunError, Sampler, SgNphmc, SgNphmcParams, Sghmc,
    SghmcParams, Sgld, SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams, StepSchedule, StepStats,
    ThermostatRule,
};
