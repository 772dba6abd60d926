//! Adaptation: the wrappers that learn as a sampler runs — the mass matrix (and SG-NPHMC's thermostat mass) by Monte Carlo EM, the gradient noise online, HMC's step size by dual averaging, and a diagonal mass from the gradients' scale.
//!
//! Wrap a sampler that has a diagonal or dense [`crate::kinetic::MassBuffer`] in [`Mcem`]
//! (Roychowdhury & Parthasarathy 2017): HMC-EM, SGHMC-EM, SGNHT-EM and SG-NPHMC-EM. Settings
//! are [`McemParams`]; the wrapper is itself a sampler, driven by `step` or `run`. What one step
//! does, the defaults and the measured behaviour: `docs/mcem.md`.
//!
//! [`NoiseEstimate`] keeps a running estimate of the minibatch gradient's noise covariance from
//! the per-example moments a [`crate::gradient::MinibatchGradient`] reports; the
//! wrapper [`Calibrated`] uses it to discount that noise (`docs/gradient-noise.md`).
//!
//! [`DualAveraging`] tunes HMC's step size during a warm-up to a target acceptance
//! (Hoffman & Gelman 2014); [`WindowedAdaptation`] adds Stan's windowed diagonal-mass estimate
//! to it. [`GradientScale`] learns scale-adapted SGHMC's diagonal mass from
//! the gradients of the burn-in (Springenberg et al. 2016).

/// [`ChainState`](crate::sampler::ChainState) for a wrapper whose chain is that of the sampler
/// in its `sampler` field (MCEM and the calibrated wrapper).
macro_rules! chain_state_of_wrapped {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> $crate::sampler::ChainState<T> for $ty {
            fn position(&self) -> &[T] {
                self.sampler.position()
            }
            fn momentum(&self) -> &[T] {
                self.sampler.momentum()
            }
            fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
                self.sampler.phase_mut()
            }
            fn resample_momentum<R: rand_core::Rng + ?Sized>(&mut self, rng: &mut R) {
                self.sampler.resample_momentum(rng)
            }
        }
    };
}

mod calibrated;
mod dual_averaging;
mod mcem;
mod noise;
mod scale;
mod windowed;

pub use calibrated::{
    CALIBRATED_SCALARS_WORDS, Calibrated, CalibratedParams, CalibratedScalars, Calibration,
    Correction,
};
pub use dual_averaging::{AdaptationStop, DualAveraging};
#[doc(hidden)] // a sealed bound of `Mcem`: which samplers it wraps
pub use mcem::EmSampler;
pub use mcem::{MCEM_SCALARS_WORDS, McemScalars};
pub use mcem::{Mcem, McemParams, NphmcEStep, SampleSize};
pub use noise::{NoiseEstimate, NoiseShape};
pub use scale::GradientScale;
pub use windowed::WindowedAdaptation;
#[doc(hidden)] // the opaque `Checkpoint::State` of `WindowedAdaptation`: kept, not read
pub use windowed::WindowedScalars;
