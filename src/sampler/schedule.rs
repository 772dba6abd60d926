//! Step-size schedules — constant, the polynomial decay h_t = a (b + t)^−γ of SGLD, the cyclical cosine of Zhang et al. 2020 — and the driver that runs any sampler on one.
//!
//! SGLD takes a schedule in its parameters ([`SgldParams::with_schedule`](super::SgldParams::with_schedule));
//! every sampler runs on one through [`run_scheduled`], which sets h_t before each step
//! ([`StepSize::set_step_size`]). [`run_cyclical`] is cyclical SG-MCMC itself (Zhang et al.
//! 2020, Alg. 1): the schedule's h_t, and the injected noise off in each cycle's exploration
//! stage.

use super::run::{Observer, RunError, Sampler, drive};
use super::temperature::Tempered;
use crate::error::{Param, ParamError, StepError};
use crate::real::Real;
use crate::validate::{finite, positive};
use core::ops::ControlFlow;
use rand_core::Rng;

/// A step size per iteration t = 0, 1, 2, …
///
/// Welling & Teh's SGLD (2011; Chen 2016, Alg. 1) uses a decreasing sequence h_t with Σ h_t = ∞ and
/// Σ h_t² < ∞, in practice h_t = a (b + t)^−γ with γ ∈ (0.5, 1]; γ ∈ (0, 0.5] is accepted too
/// (a slower decay that keeps more mixing at the cost of a bias that vanishes more slowly).
///
/// ```
/// use sgmcmc::sampler::StepSchedule;
/// let s = StepSchedule::polynomial(0.1, 1.0, 0.55).unwrap();
/// assert_eq!(s.at(0), 0.1);
/// assert!(s.at(100) < s.at(10));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum StepSchedule<T> {
    /// h_t = h.
    Constant(T),
    /// h_t = a (b + t)^−γ.
    Polynomial {
        /// Scale a > 0.
        a: T,
        /// Offset b > 0.
        b: T,
        /// Exponent γ ∈ (0, 1].
        gamma: T,
    },
    /// The cyclical cosine of Zhang et al. 2020 (eq. 1): h_t = (h₀/2)(cos(π r_t) + 1) with
    /// r_t = (t mod L)/L, restarting at h₀ every L steps; the first fraction β of each cycle is
    /// its exploration stage ([`StepSchedule::sampling`]).
    Cyclical {
        /// The largest step h₀ > 0, at the start of every cycle.
        h0: T,
        /// Steps per cycle L ≥ 1 (the paper's ⌈K/M⌉ for K steps in M cycles).
        cycle: u64,
        /// The exploration fraction β ∈ \[0, 1) of each cycle.
        exploration: T,
    },
}

impl<T: Real> StepSchedule<T> {
    /// A constant step h > 0.
    pub fn constant(h: T) -> Result<Self, ParamError> {
        Ok(StepSchedule::Constant(positive(h, Param::StepSize)?))
    }

    /// The polynomial decay a (b + t)^−γ with a > 0, b > 0 and 0 < γ ≤ 1, whose first step
    /// h₀ = a b^−γ (the largest) must be finite and positive in `T`: a large a over a tiny b
    /// overflows it to ∞, a tiny a over a large b underflows it to 0 (a frozen chain), and both
    /// are [`Param::DecayScale`].
    pub fn polynomial(a: T, b: T, gamma: T) -> Result<Self, ParamError> {
        let a = positive(a, Param::DecayScale)?;
        let b = positive(b, Param::DecayOffset)?;
        let gamma = finite(gamma, Param::DecayExponent)?;
        if !(gamma > T::ZERO && gamma <= T::ONE) {
            return Err(ParamError::OutOfRange(Param::DecayExponent));
        }
        let schedule = StepSchedule::Polynomial { a, b, gamma };
        let first = schedule.at(0);
        if !(first.is_finite() && first > T::ZERO) {
            return Err(ParamError::OutOfRange(Param::DecayScale));
        }
        Ok(schedule)
    }

    /// The cyclical cosine of Zhang et al. 2020 with the largest step h₀ > 0, `cycle` ≥ 1 steps per
    /// cycle and exploration fraction β ∈ \[0, 1): errors [`Param::StepSize`],
    /// [`Param::CycleLength`], [`Param::ExplorationFraction`]. The smallest step, at the end of a
    /// cycle, is (h₀/2)(1 − cos(π/L)) ≈ h₀π²/(4L²); if it is not a positive number in `T` (an
    /// f32 h₀ = 10⁻³⁰ with L = 10⁶) the error is [`Param::CycleLength`].
    ///
    /// ```
    /// use sgmcmc::sampler::StepSchedule;
    /// let s = StepSchedule::cyclical(0.1f64, 100, 0.8).unwrap();
    /// assert_eq!(s.at(0), 0.1);
    /// assert!((s.at(50) - 0.05).abs() < 1e-12); // half way down the cosine
    /// assert_eq!(s.at(100), 0.1); // the next cycle
    /// assert!(!s.sampling(79) && s.sampling(80));
    /// ```
    pub fn cyclical(h0: T, cycle: u64, exploration: T) -> Result<Self, ParamError> {
        let h0 = positive(h0, Param::StepSize)?;
        if cycle == 0 {
            return Err(ParamError::OutOfRange(Param::CycleLength));
        }
        let exploration = finite(exploration, Param::ExplorationFraction)?;
        if !(exploration >= T::ZERO && exploration < T::ONE) {
            return Err(ParamError::OutOfRange(Param::ExplorationFraction));
        }
        let schedule = StepSchedule::Cyclical {
            h0,
            cycle,
            exploration,
        };
        let smallest = schedule.at(cycle - 1);
        if !(smallest.is_finite() && smallest > T::ZERO) {
            return Err(ParamError::OutOfRange(Param::CycleLength));
        }
        Ok(schedule)
    }

    /// Checks a schedule built by hand (its variants are public) as its constructor would.
    pub fn validate(&self) -> Result<(), ParamError> {
        match *self {
            StepSchedule::Constant(h) => StepSchedule::constant(h).map(|_| ()),
            StepSchedule::Polynomial { a, b, gamma } => {
                StepSchedule::polynomial(a, b, gamma).map(|_| ())
            }
            StepSchedule::Cyclical {
                h0,
                cycle,
                exploration,
            } => StepSchedule::cyclical(h0, cycle, exploration).map(|_| ()),
        }
    }

    /// Whether iteration `t` is in a sampling stage: always, but in a cyclical schedule's
    /// exploration stage r_t < β (Zhang et al. 2020, §2: draws are collected only in the
    /// sampling stage, the last 1 − β of each cycle, where the step is small).
    pub fn sampling(&self, t: u64) -> bool {
        match *self {
            StepSchedule::Cyclical {
                cycle, exploration, ..
            } => Self::phase(t, cycle) >= exploration,
            _ => true,
        }
    }

    /// r_t = (t mod L)/L.
    fn phase(t: u64, cycle: u64) -> T {
        let cycle = cycle.max(1);
        T::from_u64(t % cycle) / T::from_u64(cycle)
    }

    /// The step at iteration `t`: finite and > 0 for a validated schedule (h_t ≤ h₀), though a
    /// tiny h₀ may underflow to 0 after very many steps (h₀ = 10⁻³⁰ with γ = 1 in `f32` reaches
    /// the smallest normal number near t = 10⁸ and 0 near t = 10¹⁵), and from there on SGLD's
    /// steps no longer move θ.
    #[inline]
    pub fn at(&self, t: u64) -> T {
        match *self {
            StepSchedule::Constant(h) => h,
            StepSchedule::Polynomial { a, b, gamma } => a * (b + T::from_u64(t)).powf(-gamma),
            StepSchedule::Cyclical { h0, cycle, .. } => {
                h0 / T::TWO * (cos_pi(Self::phase(t, cycle)) + T::ONE)
            }
        }
    }
}

/// cos(πr) for r ∈ [0, 1], in `T` alone: the Taylor series of cos y to y²⁰ on y = πx,
/// x = min(r, 1 − r) ≤ ½ (cos(π(1 − x)) = −cos(πx)), whose truncation error is below
/// (π/2)²²/22! ≈ 2·10⁻¹⁷. Not libm's `cosf`, which computes in `f64` and would link software
/// double-precision routines into an f32 build for a Cortex-M4F.
fn cos_pi<T: Real>(r: T) -> T {
    let (x, sign) = if r > T::HALF {
        (T::ONE - r, -T::ONE)
    } else {
        (r, T::ONE)
    };
    let y = T::from_f64(core::f64::consts::PI) * x;
    let y2 = y * y;
    // (−1)ᵏ/(2k)! for k = 10 down to 1, by Horner in y², written out: each constant is then
    // converted to `T` at compile time (a loop over an f64 array, kept as a loop at
    // opt-level "s", linked the soft-float `__aeabi_d2f` into the Cortex-M f32 builds).
    let k = T::from_f64;
    let c = k(4.110317623312165e-19);
    let c = c * y2 + k(-1.5619206968586225e-16);
    let c = c * y2 + k(4.779477332387385e-14);
    let c = c * y2 + k(-1.1470745597729725e-11);
    let c = c * y2 + k(2.08767569878681e-9);
    let c = c * y2 + k(-2.755731922398589e-7);
    let c = c * y2 + k(2.48015873015873e-5);
    let c = c * y2 + k(-1.388888888888889e-3);
    let c = c * y2 + k(4.1666666666666664e-2);
    let c = c * y2 + k(-0.5);
    sign * (c * y2 + T::ONE)
}

/// A sampler whose step size may change between steps, so that it can run on a
/// [`StepSchedule`] ([`run_scheduled`]). Every sampler of the crate implements it.
pub trait StepSize<T> {
    /// The step size h of the next step.
    fn step_size(&self) -> T;

    /// Sets the step size of the following steps. The sampler's settings are checked with the
    /// new h as its constructor checks them; on an error nothing changes.
    fn set_step_size(&mut self, h: T) -> Result<(), ParamError>;
}

/// [`StepSize`] for a sampler whose `Copy` parameters hold h in `$field` and check
/// themselves with `validate`: the new h is checked with the other settings, and stored only
/// if they pass.
macro_rules! step_size_from_params {
    ($sampler:ident, $params:ident, $field:ident) => {
        $crate::sampler::schedule::step_size_from_params!(
            [T: $crate::real::Real] $sampler<'_, T>, $params, $field
        );
    };
    ([$($generics:tt)*] $ty:ty, $params:ident, $field:ident) => {
        impl<$($generics)*> $crate::sampler::StepSize<T> for $ty {
            fn step_size(&self) -> T {
                self.params.$field
            }

            /// Sets h after checking the settings with it (the parameters' `validate`).
            fn set_step_size(&mut self, h: T) -> Result<(), $crate::error::ParamError> {
                let params = $params {
                    $field: h,
                    ..self.params
                };
                params.validate()?;
                self.params = params;
                Ok(())
            }
        }
    };
}
pub(crate) use step_size_from_params;

/// Runs `steps` steps of `sampler` on `schedule`, iterations `first`, `first + 1`, …: before
/// each step the sampler's step size is set to h_t ([`StepSize::set_step_size`]); every
/// completed step goes to `observer` with its index within this call (t − `first`), and
/// [`StepSchedule::sampling`] tells an observer which steps to keep. Resuming a chain is a
/// second call with `first` advanced by the steps already run. Returns what [`Sampler::run`]
/// returns: `Break(b)` when the observer stopped the run. Stops at the first error, a
/// [`RunError`] whose error is [`StepError::StepSize`] when the sampler refused the schedule's
/// h_t (iteration `first` + [`RunError::completed`]); the sampler's step size is then that of
/// the last step attempted.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// use sgmcmc::sampler::run_scheduled;
/// let (mut theta, mut p, mut xi, mut work) = ([1.0f64; 3], [0.0; 3], [0.0], [0.0; 6]);
/// let params = SgnhtParams::new(0.1);
/// let mut sgnht = Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
/// let schedule = StepSchedule::cyclical(0.1, 50, 0.5).unwrap();
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
/// let mut kept = 0;
/// let mut keep = |step: u64, _: &mut Sgnht<f64>, _: &StepStats<f64>| {
///     kept += u32::from(schedule.sampling(step));
/// };
/// run_scheduled(&mut sgnht, &schedule, 0, &mut model, &mut Pcg64::new(1, 1), 200, &mut keep)
///     .unwrap();
/// assert_eq!(kept, 100); // the second half of each of four cycles
/// ```
pub fn run_scheduled<T, M, S, R, O>(
    sampler: &mut S,
    schedule: &StepSchedule<T>,
    first: u64,
    model: &mut M,
    rng: &mut R,
    steps: u64,
    observer: &mut O,
) -> Result<ControlFlow<O::Stop>, RunError>
where
    T: Real,
    M: ?Sized,
    S: Sampler<T, M> + StepSize<T>,
    R: Rng + ?Sized,
    O: Observer<S, T> + ?Sized,
{
    drive(sampler, steps, observer, |step, sampler| {
        let iteration = first.saturating_add(step);
        sampler
            .set_step_size(schedule.at(iteration))
            .map_err(StepError::StepSize)?;
        sampler.step(model, rng)
    })
}

/// Cyclical SG-MCMC (cSG-MCMC; Zhang et al. 2020, Alg. 1): [`run_scheduled`] on `schedule`,
/// with the sampler's temperature set to 0 — the injected noise off, so that SGLD is SGD and
/// SGHMC is SGD with momentum — in each cycle's exploration stage
/// ([`StepSchedule::sampling`] false), and to its own temperature T in the sampling stage. On
/// any other schedule every step samples, and this is `run_scheduled`. The sampler's
/// temperature is T again when the call returns, whatever it returns. A sampler that refuses
/// T = 0 (HMC and SG-NPHMC, which divide by T) stops the run at the first exploration step, a
/// [`RunError`] whose error is [`StepError::StepSize`] naming
/// [`Param::Temperature`](crate::error::Param::Temperature).
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// use sgmcmc::sampler::run_cyclical;
/// let (mut theta, mut work) = ([1.0f64; 2], [0.0; 4]);
/// let mut sgld = Sgld::new(SgldParams::new(0.1), &mut theta, &mut work).unwrap();
/// let schedule = StepSchedule::cyclical(0.1, 50, 0.5).unwrap();
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
/// let mut temperatures = [0.0; 2];
/// let mut seen = |step: u64, s: &mut Sgld<f64>, _: &StepStats<f64>| {
///     temperatures[usize::from(schedule.sampling(step))] = s.temperature();
/// };
/// run_cyclical(&mut sgld, &schedule, 0, &mut model, &mut Pcg64::new(1, 1), 100, &mut seen)
///     .unwrap();
/// assert_eq!(temperatures, [0.0, 1.0]); // noise off while exploring, on while sampling
/// assert_eq!(sgld.temperature(), 1.0);
/// ```
pub fn run_cyclical<T, M, S, R, O>(
    sampler: &mut S,
    schedule: &StepSchedule<T>,
    first: u64,
    model: &mut M,
    rng: &mut R,
    steps: u64,
    observer: &mut O,
) -> Result<ControlFlow<O::Stop>, RunError>
where
    T: Real,
    M: ?Sized,
    S: Sampler<T, M> + StepSize<T> + Tempered<T>,
    R: Rng + ?Sized,
    O: Observer<S, T> + ?Sized,
{
    let temperature = sampler.temperature();
    let result = drive(sampler, steps, observer, |step, sampler| {
        let iteration = first.saturating_add(step);
        sampler
            .set_step_size(schedule.at(iteration))
            .map_err(StepError::StepSize)?;
        let stage = if schedule.sampling(iteration) {
            temperature
        } else {
            T::ZERO
        };
        if sampler.temperature() != stage {
            sampler
                .set_temperature(stage)
                .map_err(StepError::StepSize)?;
        }
        sampler.step(model, rng)
    });
    // T was accepted with the settings before the call, and neither h nor T enters the other
    // checks of T (they hold at every h the sampler accepted), so this cannot be refused; the
    // result is ignored rather than unwrapped (no panic path).
    let _ = sampler.set_temperature(temperature);
    result
}
