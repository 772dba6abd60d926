//! Adaptation: the wrappers that learn as a sampler runs — the mass matrix (and SG-NPHMC's thermostat mass) by Monte Carlo EM, and the gradient noise online.
//!
//! Wrap a sampler that has a diagonal or dense [`crate::kinetic::MassBuffer`] in [`Mcem`]
//! (Roychowdhury & Parthasarathy 2017): HMC-EM, SGHMC-EM, SGNHT-EM and SG-NPHMC-EM. Settings
//! are [`McemParams`]; the wrapper is itself a sampler, driven by `step` or `run`. What one step
//! does, the defaults and the measured behaviour: `docs/mcem.md`.
//!
//! [`NoiseEstimate`] keeps a running estimate of the minibatch gradient's noise covariance from
//! the per-example moments a [`crate::gradient::MinibatchGradient`] reports; the wrapper
//! wrapper [`Calibrated`] uses it to discount that noise (`docs/gradient-noise.md`).

mod calibrated;
mod mcem;
mod noise;

pub use calibrated::{Calibrated, CalibratedParams, Calibration, Correction};
pub use mcem::{EmSampler, MStepParams, Mcem, McemParams, McemScalars, NphmcEStep, SampleSize};
pub use noise::{NoiseEstimate, NoiseShape};
