//! [`StepStats`]: what every sampler's `step` reports, and the [`Sampler`] trait they share.

use crate::error::StepError;
use crate::real::Real;
use rand_core::Rng;

/// Per-step statistics.
///
/// `kinetic_temperature` is pᵀM⁻¹p / n after the step (pᵀp / n for the identity mass): its
/// long-run mean is 1 when the momentum is in thermal equilibrium (Ding et al. 2014, eq. 4).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StepStats<T> {
    /// The step size used (h, or h_t for a decaying schedule).
    pub step_size: T,
    /// pᵀM⁻¹p / n after the step; `None` for SGLD, which has no momentum.
    pub kinetic_temperature: Option<T>,
    /// The mean thermostat value ξ̄ after the step (SGNHT: ξ; mSGNHT: the average of the ξᵢ).
    pub thermostat: Option<T>,
    /// HMC: the Metropolis–Hastings acceptance probability min(1, e^{H₀ − H₁}).
    pub acceptance: Option<T>,
    /// HMC: whether the proposal was accepted.
    pub accepted: Option<bool>,
}

impl<T: Real> StepStats<T> {
    pub(crate) fn new(step_size: T) -> Self {
        StepStats {
            step_size,
            kinetic_temperature: None,
            thermostat: None,
            acceptance: None,
            accepted: None,
        }
    }
}

/// Stepping, shared by all samplers so host code can drive any of them generically.
///
/// `M` is the model type: any [`Gradient`](crate::Gradient) for the stochastic-gradient samplers,
/// an [`Energy`](crate::Energy) for HMC.
pub trait Sampler<T: Real, M: ?Sized>: ChainState<T> {
    /// Advances the chain by one step.
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError>;
}

/// Read access to a sampler's state (independent of the model type).
pub trait ChainState<T: Real> {
    /// The current position θ.
    fn position(&self) -> &[T];
    /// The current momentum p (empty for SGLD).
    fn momentum(&self) -> &[T];
    /// Mutable access to θ and p (p is empty for SGLD), for resets, reflections at a boundary
    /// or restarts. HMC forgets its cached energy and gradient, since θ may change.
    fn phase_mut(&mut self) -> (&mut [T], &mut [T]);
    /// Redraws the momentum from its marginal N(0, M) (no-op for SGLD).
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R);
}
