//! What every sampler shares: [`Sampler`] (step, run), [`ChainState`], [`StepStats`], [`Observer`] and [`RunError`].

use crate::error::StepError;
use crate::real::Real;
use core::convert::Infallible;
use core::fmt;
use core::ops::ControlFlow;
use rand_core::Rng;

/// What one step reports.
///
/// `kinetic_temperature` is (1/n) Σᵢ pᵢ ∂K/∂pᵢ after the step (pᵀM⁻¹p / n for a Gaussian K): its
/// long-run mean is 1 when the momentum is in thermal equilibrium (Ding et al. 2014, eq. 4).
///
/// The statistics are diagnostics, computed in `T` from a state that is finite (an `Ok` step
/// guarantees that): a sum over n coordinates (Σ pᵢ∂K/∂pᵢ, Σ ξᵢ) can still overflow to ±∞
/// when the coordinates are near `T::MAX`, and then the statistic is ±∞ (or NaN for a sum of
/// +∞ and −∞ parts) while θ, p and ξ are finite. Such a value means "beyond the range of `T`",
/// never a broken state.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StepStats<T> {
    /// The step size used (h, or h_t for a decaying schedule).
    pub step_size: T,
    /// The kinetic temperature after the step; `None` for SGLD, which has no momentum.
    pub kinetic_temperature: Option<T>,
    /// The thermostat after the step: SGNHT's ξ, the mean of the ξᵢ (mSGNHT, SGMGT), or
    /// SG-NPHMC's q/Q.
    pub thermostat: Option<T>,
    /// HMC: the Metropolis–Hastings acceptance probability min(1, e^{(H₀ − H₁)/T}) at the
    /// temperature T.
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

/// Read access to a sampler's state, independent of the model.
pub trait ChainState<T: Real> {
    /// The current position θ.
    fn position(&self) -> &[T];
    /// The current momentum p (empty for SGLD).
    fn momentum(&self) -> &[T];
    /// Mutable access to θ and p (p is empty for SGLD), for reflections at a boundary or
    /// restarts. HMC and SG-NPHMC forget their cached energy and gradient, since θ may change.
    fn phase_mut(&mut self) -> (&mut [T], &mut [T]);
    /// Redraws the momentum from its marginal exp(−K) (no-op for SGLD).
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R);
}

/// A sampler's step as [`crate::dispatch`] runs it: [`Sampler::step`] is `dispatched_step`, which
/// runs `step_body` in the widest instruction set the CPU has. `step_body` must be
/// `#[inline(always)]` (with the `std` feature) so that it is compiled into each copy.
pub(crate) trait StepBody<T: Real, M: ?Sized> {
    /// The step.
    fn step_body<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError>;
}

/// [`StepBody::step_body`] of `sampler`, dispatched ([`crate::dispatch::run`]).
#[inline(always)]
pub(crate) fn dispatched_step<T, M, S, R>(
    sampler: &mut S,
    model: &mut M,
    rng: &mut R,
) -> Result<StepStats<T>, StepError>
where
    T: Real,
    M: ?Sized,
    S: StepBody<T, M>,
    R: Rng + ?Sized,
{
    crate::dispatch::run(DispatchedStep {
        sampler,
        model,
        rng,
        real: core::marker::PhantomData,
    })
}

/// The arguments of [`dispatched_step`] as a [`crate::dispatch::Kernel`].
struct DispatchedStep<'a, T, S, M: ?Sized, R: ?Sized> {
    sampler: &'a mut S,
    model: &'a mut M,
    rng: &'a mut R,
    real: core::marker::PhantomData<T>,
}

impl<T: Real, S: StepBody<T, M>, M: ?Sized, R: Rng + ?Sized> crate::dispatch::Kernel
    for DispatchedStep<'_, T, S, M, R>
{
    type Output = Result<StepStats<T>, StepError>;
    #[inline(always)]
    fn run<A: crate::arith::Arith>(self) -> Self::Output {
        self.sampler.step_body(self.model, self.rng)
    }
}

/// Stepping a chain on a model `M`: any [`Gradient`](crate::Gradient) for the
/// stochastic-gradient samplers, an [`Energy`](crate::Energy) for HMC and SG-NPHMC.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
///
/// let (mut theta, mut work) = ([3.0f64; 2], [0.0; 4]);
/// let mut sgld = Sgld::new(SgldParams::new(0.05), &mut theta, &mut work).unwrap();
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t); // N(0, I)
/// let mut rng = Pcg64::new(1, 2);
/// let mut sum = 0.0;
/// sgld.run_with(&mut model, &mut rng, 1000, |_, s, _| sum += s.position()[0]).unwrap();
/// assert!((sum / 1000.0).abs() < 1.0);
/// ```
pub trait Sampler<T: Real, M: ?Sized>: ChainState<T> {
    /// Advances the chain by one step.
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError>;

    /// Runs `steps` steps, handing every completed one to `observer` (`&mut ()` for none).
    ///
    /// Returns `Ok(ControlFlow::Continue(()))` when all `steps` completed, and
    /// `Ok(ControlFlow::Break(b))` when the observer stopped the run with `b` after a step (the
    /// observer knows which). Stops at the first error, which says how many steps completed
    /// before it.
    fn run<R, O>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u64,
        observer: &mut O,
    ) -> Result<ControlFlow<O::Stop>, RunError>
    where
        Self: Sized,
        R: Rng + ?Sized,
        O: Observer<Self, T> + ?Sized,
    {
        drive(self, steps, observer, |_, sampler| sampler.step(model, rng))
    }

    /// [`Sampler::run`] with a closure `f(step, sampler, stats)` as the observer. The closure
    /// returns `()`, or a [`ControlFlow`] to be able to stop the run.
    #[allow(private_bounds)]
    fn run_with<R, F, Out>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u64,
        mut f: F,
    ) -> Result<ControlFlow<Out::Stop>, RunError>
    where
        Self: Sized,
        R: Rng + ?Sized,
        F: FnMut(u64, &mut Self, &StepStats<T>) -> Out,
        Out: ObserverReturn,
    {
        self.run(model, rng, steps, &mut f)
    }
}

/// The loop of [`Sampler::run`] and [`crate::sampler::run_scheduled`]: `steps` calls of
/// `step(index, sampler)`, each completed one handed to `observer`, stopping at the observer's
/// `Break` or the first error (with the steps completed before it).
pub(crate) fn drive<S, T, O>(
    sampler: &mut S,
    steps: u64,
    observer: &mut O,
    mut step: impl FnMut(u64, &mut S) -> Result<StepStats<T>, StepError>,
) -> Result<ControlFlow<O::Stop>, RunError>
where
    T: Real,
    O: Observer<S, T> + ?Sized,
{
    for index in 0..steps {
        let stats = step(index, sampler).map_err(|error| RunError {
            completed: index,
            error,
        })?;
        if let ControlFlow::Break(stop) = observer.observe(index, sampler, &stats) {
            return Ok(ControlFlow::Break(stop));
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// Sees every completed step of [`Sampler::run`]: its index (from 0), the sampler (to read θ,
/// or to change it through [`ChainState::phase_mut`]) and the step's statistics; and can stop
/// the run, e.g. once an estimate is good enough or when its own output fails.
///
/// Implemented for `()` (observe nothing) and for every closure
/// `FnMut(u64, &mut S, &StepStats<T>)` that returns `()` (never stops) or a
/// [`ControlFlow<B>`] (`Break(b)` stops the run, which returns `Ok(Break(b))`).
///
/// ```
/// use core::ops::ControlFlow;
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
///
/// let (mut theta, mut work) = ([3.0f64; 2], [0.0; 4]);
/// let mut sgld = Sgld::new(SgldParams::new(0.05), &mut theta, &mut work).unwrap();
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t); // N(0, I)
/// // Stop once θ₀ has crossed 0, and say at which step.
/// let stopped = sgld
///     .run_with(&mut model, &mut Pcg64::new(1, 2), 10_000, |step, s, _| {
///         if s.position()[0] < 0.0 { ControlFlow::Break(step) } else { ControlFlow::Continue(()) }
///     })
///     .unwrap();
/// assert!(matches!(stopped, ControlFlow::Break(step) if step < 10_000));
/// ```
pub trait Observer<S: ?Sized, T> {
    /// What the observer stops a run with ([`Infallible`] for one that never does).
    type Stop;
    /// Called after step `step` completed; `Break` ends the run there.
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<T>,
    ) -> ControlFlow<Self::Stop>;
}

/// What an observing closure may return: `()` (go on) or a [`ControlFlow`]. (`pub` in a
/// crate-private module: a bound users meet but never name.)
pub trait ObserverReturn {
    /// The value a `Break` carries ([`Infallible`] for `()`).
    type Stop;
    /// As a [`ControlFlow`].
    fn into_flow(self) -> ControlFlow<Self::Stop>;
}

impl ObserverReturn for () {
    type Stop = Infallible;
    #[inline(always)]
    fn into_flow(self) -> ControlFlow<Infallible> {
        ControlFlow::Continue(())
    }
}

impl<B> ObserverReturn for ControlFlow<B> {
    type Stop = B;
    #[inline(always)]
    fn into_flow(self) -> ControlFlow<B> {
        self
    }
}

impl<S: ?Sized, T> Observer<S, T> for () {
    type Stop = Infallible;
    #[inline(always)]
    fn observe(
        &mut self,
        _step: u64,
        _sampler: &mut S,
        _stats: &StepStats<T>,
    ) -> ControlFlow<Infallible> {
        ControlFlow::Continue(())
    }
}

#[allow(private_bounds)]
impl<S: ?Sized, T, F, Out> Observer<S, T> for F
where
    F: FnMut(u64, &mut S, &StepStats<T>) -> Out,
    Out: ObserverReturn,
{
    type Stop = Out::Stop;
    #[inline(always)]
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<T>,
    ) -> ControlFlow<Out::Stop> {
        self(step, sampler, stats).into_flow()
    }
}

/// A [`Sampler::run`] that stopped: the error, and how many steps completed before it (the
/// observer saw exactly those).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RunError {
    /// Steps completed before the failing one.
    pub completed: u64,
    /// Why step `completed` failed.
    pub error: StepError,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {} failed: {}", self.completed, self.error)
    }
}

impl core::error::Error for RunError {}
