//! The temperature T of a tempered posterior e^{−U/T}: the [`Tempered`] trait every sampler implements, and its check.
//!
//! Every sampler of the crate draws from e^{−U(θ)/T} at its temperature T (1 by default, the
//! posterior itself). A cold posterior (T < 1; Wenzel et al. 2020) sharpens the posterior; T = 0
//! turns the injected noise off, so that a sampler becomes its optimiser (SGLD: SGD; SGHMC: SGD
//! with momentum), which is the exploration stage of cyclical SG-MCMC (Zhang et al. 2020, §3;
//! [`run_scheduled`](super::run_scheduled)). Each update scales its injected noise by √T and its
//! thermostat targets by T; the derivations are in `docs/temperature.md`.
//!
//! ```
//! use rand_pcg::Pcg64;
//! use sgmcmc::prelude::*;
//! let (mut theta, mut work) = ([0.0f64; 2], [0.0; 4]);
//! let params = SgldParams::new(0.01).with_temperature(0.5);
//! let mut sgld = Sgld::new(params, &mut theta, &mut work).unwrap();
//! assert_eq!(sgld.temperature(), 0.5);
//! sgld.set_temperature(0.0).unwrap(); // SGD
//! assert!(sgld.set_temperature(-1.0).is_err());
//! let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
//! sgld.run(&mut model, &mut Pcg64::new(1, 1), 10, &mut ()).unwrap();
//! ```

use crate::error::{Param, ParamError};
use crate::real::Real;
use crate::validate::non_negative;

/// A sampler whose stationary law is the tempered posterior e^{−U/T}, at a temperature T that
/// may change between steps. Every sampler of the crate implements it.
pub trait Tempered<T> {
    /// The temperature T of the next step.
    fn temperature(&self) -> T;

    /// Sets the temperature of the following steps: T ≥ 0 and finite (HMC and SG-NPHMC:
    /// T > 0), checked with the sampler's other settings as its constructor checks them (e.g.
    /// SGHMC's B̂ ≤ A·T); on an error nothing changes ([`Param::Temperature`], or the setting
    /// the new T makes invalid).
    fn set_temperature(&mut self, temperature: T) -> Result<(), ParamError>;
}

/// T if finite and ≥ 0.
#[inline]
pub(crate) fn check_temperature<T: Real>(temperature: T) -> Result<T, ParamError> {
    non_negative(temperature, Param::Temperature)
}

/// T if finite and > 0 (the samplers with a Metropolis–Hastings test or a Nosé–Poincaré
/// thermostat, which divide by T).
#[inline]
pub(crate) fn check_positive_temperature<T: Real>(temperature: T) -> Result<T, ParamError> {
    crate::validate::positive(temperature, Param::Temperature)
}

/// [`Tempered`] for a sampler whose `Copy` parameters hold T in `temperature` and check
/// themselves with `validate`: the new T is checked with the other settings, and stored only if
/// they pass.
macro_rules! temperature_from_params {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> $crate::sampler::Tempered<T> for $ty {
            fn temperature(&self) -> T {
                self.params.temperature
            }

            /// Sets T after checking the settings with it (the parameters' `validate`).
            fn set_temperature(&mut self, temperature: T) -> Result<(), $crate::error::ParamError> {
                let mut params = self.params;
                params.temperature = temperature;
                params.validate()?;
                self.params = params;
                Ok(())
            }
        }
    };
}
pub(crate) use temperature_from_params;
