//! What a sampler's step takes from the calibrated wrapper (`Discount`), and the trait of the samplers that take it ([`NoiseDiscount`]).
//!
//! It sits below both the samplers and [`Calibrated`](crate::adapt::Calibrated): a plain step
//! is the discounted step with nothing discounted.

use super::run::{ChainState, StepStats};
use super::schedule::StepSize;
use super::temperature::Tempered;
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::real::Real;
use rand_core::Rng;

/// What [`Calibrated`](crate::adapt::Calibrated) hands the sampler it wraps for one step.
#[derive(Clone, Copy, Debug)]
pub struct Discount<'b, T> {
    /// The friction (SGHMC) or injected diffusion (SGNHT, mSGNHT) A the step uses: the
    /// sampler's own, or raised to the estimate's bound.
    pub friction: T,
    /// The part c of A's injected diffusion the wrapper supplies itself, shaped, through the
    /// gradient: the sampler injects √(2h(A − c)) ζ (0 ≤ c ≤ A).
    pub removed: T,
    /// Per-coordinate estimates B̂ⱼ for SGMGT-D's θ term (empty for the others).
    pub theta_estimates: &'b [T],
}

/// A sampler whose injected noise [`Calibrated`](crate::adapt::Calibrated) can discount by an
/// estimate of the gradient noise: SGHMC, SGNHT, mSGNHT (the momentum's noise) and SGMGT (the θ
/// term's). Sealed: the step it takes is the crate's own.
#[allow(private_bounds)] // the sealed pattern: the step-side supertrait is the crate's own
pub trait NoiseDiscount<T: Real>:
    ChainState<T> + StepSize<T> + Tempered<T> + DiscountedStep<T>
{
}

impl<T: Real, S: ChainState<T> + StepSize<T> + Tempered<T> + DiscountedStep<T>> NoiseDiscount<T>
    for S
{
}

/// The step side of [`NoiseDiscount`] (`pub` in a crate-private module: unnameable outside the
/// crate).
pub trait DiscountedStep<T: Real> {
    /// The estimate is taken off the momentum's injected noise (true), or enters SGMGT-D's θ
    /// term per coordinate (false).
    const MOMENTUM: bool;
    /// The friction (SGHMC) or injected diffusion (SGNHT, mSGNHT) A of the settings; 0 for
    /// SGMGT.
    fn injected_diffusion(&self) -> T;
    /// Whether the momentum's kinetic energy is ½|p|² (the friction correction needs it).
    fn unit_mass(&self) -> bool;
    /// The largest per-coordinate estimate the θ term takes (SGMGT-D: just below 1/(2σ_θ);
    /// `None`: no bound).
    fn max_theta_estimate(&self) -> Option<T> {
        None
    }
    /// One step with the discount `discount` (its documentation says what each field does).
    fn step_discounted<G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        discount: Discount<'_, T>,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError>;
}
