//! Step-size adaptation by dual averaging (Hoffman & Gelman 2014, §3.2.1): an HMC warm-up that drives the mean acceptance probability to a target.

use crate::error::{Param, ParamError};
use crate::real::Real;
use crate::sampler::{Observer, StepSize, StepStats};
use core::ops::ControlFlow;

/// Dual averaging of the log step size during a warm-up (Hoffman & Gelman 2014, §3.2.1, eq. 6,
/// Stan's defaults).
///
/// After each proposal with acceptance probability αₜ:
///
/// ```text
/// H̄ₜ = (1 − 1/(t + t₀)) H̄ₜ₋₁ + (δ − αₜ)/(t + t₀)
/// log hₜ = μ − √t/γ · H̄ₜ                         (the step size of the next warm-up proposal)
/// log h̄ₜ = t^{−κ} log hₜ + (1 − t^{−κ}) log h̄ₜ₋₁   (the step size to sample with afterwards)
/// ```
///
/// with μ = log(10 h₀), target δ (default 0.8; 0.65 is the paper's optimum for HMC), γ = 0.05,
/// t₀ = 10, κ = 0.75. It is an [`Observer`]: run the warm-up with it, which sets each next step
/// size through [`StepSize`], then sample with [`DualAveraging::final_step_size`]. A NaN
/// acceptance counts as 0 (a divergent proposal, as in Stan).
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::adapt::DualAveraging;
/// use sgmcmc::prelude::*;
///
/// let mut model = Model::new(
///     |t: &[f64], g: &mut [f64]| g.copy_from_slice(t),
///     |t: &[f64]| 0.5 * t.iter().map(|x| x * x).sum::<f64>(),
/// );
/// let (mut theta, mut p, mut work) = ([1.0f64; 10], [0.0; 10], [0.0; 40]);
/// let params = HmcParams::new(1.0).with_leapfrog_steps(10);
/// let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
/// let mut rng = Pcg64::new(1, 2);
/// let mut tuner = DualAveraging::new(1.0).unwrap().with_target(0.65).unwrap();
/// hmc.run(&mut model, &mut rng, 500, &mut tuner).unwrap();
/// hmc.set_step_size(tuner.final_step_size()).unwrap();
/// assert!(tuner.final_step_size() > 0.2 && tuner.final_step_size() < 1.5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DualAveraging<T> {
    target: T,
    gamma: T,
    offset: T,
    decay: T,
    /// μ = log(10 h₀).
    mu: T,
    /// H̄ₜ.
    error: T,
    /// log hₜ and log h̄ₜ.
    log_step: T,
    log_step_average: T,
    /// t.
    count: u64,
}

/// Why a [`DualAveraging`] warm-up stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum AdaptationStop {
    /// The sampler reports no acceptance probability (only HMC does).
    NoAcceptance,
    /// The sampler refused the adapted step size.
    StepSize(ParamError),
    /// [`crate::adapt::WindowedAdaptation`]: the sampler refused the estimated inverse mass (a
    /// mass that is not a run-time diagonal [`MassBuffer`](crate::kinetic::MassBuffer), or a
    /// dimension that differs from the workspace's).
    Mass(crate::error::LinalgError),
}

impl<T: Real> DualAveraging<T> {
    /// Starts from the step size `initial` (finite, > 0): μ = log(10 · initial), Stan's defaults
    /// otherwise.
    pub fn new(initial: T) -> Result<Self, ParamError> {
        check(Param::StepSize, initial, initial > T::ZERO)?;
        let log_step = initial.ln();
        Ok(DualAveraging {
            target: T::from_f64(0.8),
            gamma: T::from_f64(0.05),
            offset: T::from_f64(10.0),
            decay: T::from_f64(0.75),
            mu: T::from_f64(10.0).ln() + log_step,
            error: T::ZERO,
            log_step,
            log_step_average: T::ZERO,
            count: 0,
        })
    }

    /// The target mean acceptance probability δ ∈ (0, 1).
    pub fn with_target(self, target: T) -> Result<Self, ParamError> {
        check(
            Param::TargetAcceptance,
            target,
            target > T::ZERO && target < T::ONE,
        )?;
        Ok(DualAveraging { target, ..self })
    }

    /// The shrinkage γ > 0 towards μ, the offset t₀ ≥ 0 that damps the first iterations, and
    /// the decay κ ∈ (0.5, 1] of the averaging weights (Hoffman & Gelman 2014, eq. 6).
    pub fn with_schedule(self, gamma: T, offset: T, decay: T) -> Result<Self, ParamError> {
        check(Param::AdaptationRate, gamma, gamma > T::ZERO)?;
        check(Param::AdaptationOffset, offset, offset >= T::ZERO)?;
        check(
            Param::AdaptationDecay,
            decay,
            decay > T::HALF && decay <= T::ONE,
        )?;
        Ok(DualAveraging {
            gamma,
            offset,
            decay,
            ..self
        })
    }

    /// Records one proposal's acceptance probability and returns the next warm-up step size.
    pub fn update(&mut self, acceptance: T) -> T {
        let alpha = if acceptance.is_finite() {
            acceptance.max(T::ZERO).min(T::ONE)
        } else {
            T::ZERO
        };
        self.count = self.count.saturating_add(1);
        let t = T::from_u64(self.count);
        let eta = T::ONE / (t + self.offset);
        self.error = (T::ONE - eta) * self.error + eta * (self.target - alpha);
        // (Clamped to the float's range: a long run of rejections cannot make h overflow to ∞
        // or vanish to 0, which the sampler would refuse.)
        let bound = T::MAX.ln() - T::ONE;
        self.log_step = (self.mu - t.sqrt() / self.gamma * self.error)
            .min(bound)
            .max(-bound);
        let w = t.powf(-self.decay);
        self.log_step_average = w * self.log_step + (T::ONE - w) * self.log_step_average;
        self.step_size()
    }

    /// The step size of the next warm-up proposal, hₜ.
    pub fn step_size(&self) -> T {
        self.log_step.exp()
    }

    /// The step size to sample with after the warm-up, h̄ₜ (hₜ's start before any update).
    pub fn final_step_size(&self) -> T {
        if self.count == 0 {
            self.step_size()
        } else {
            self.log_step_average.exp()
        }
    }

    /// Proposals recorded.
    pub fn count(&self) -> u64 {
        self.count
    }
}

fn check<T: Real>(param: Param, value: T, in_range: bool) -> Result<(), ParamError> {
    if !value.is_finite() {
        Err(ParamError::NonFinite(param))
    } else if !in_range {
        Err(ParamError::OutOfRange(param))
    } else {
        Ok(())
    }
}

/// The warm-up: each step's acceptance updates the average, and the sampler takes the next
/// step size.
impl<S: StepSize<T> + ?Sized, T: Real> Observer<S, T> for DualAveraging<T> {
    type Stop = AdaptationStop;
    fn observe(
        &mut self,
        _step: u64,
        sampler: &mut S,
        stats: &StepStats<T>,
    ) -> ControlFlow<AdaptationStop> {
        let Some(acceptance) = stats.acceptance else {
            return ControlFlow::Break(AdaptationStop::NoAcceptance);
        };
        // The update is committed only once the sampler took its h: a refused h leaves the
        // adaptation as it was (the state contract).
        let mut updated = *self;
        let next = updated.update(acceptance);
        match sampler.set_step_size(next) {
            Ok(()) => {
                *self = updated;
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(AdaptationStop::StepSize(e)),
        }
    }
}
