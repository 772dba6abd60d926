//! Stochastic gradient Langevin dynamics (SGLD; Welling & Teh 2011, as in Chen 2016, Alg. 1).

use super::run::{ChainState, Sampler, StepBody, StepStats, dispatched_step};
use super::schedule::StepSchedule;
use crate::error::{Buffer, Error, LayoutError, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::state::{check_finite, check_len, check_nonempty, check_state};
use crate::lanes::{
    FiniteGuard, NOISE_BLOCK, SCALAR_CORE, copy_into, finiteness_probe, first_non_finite, sum_map,
};
use crate::noise::NormalLanes;
use crate::real::Real;
use crate::rows::Fitted;
use rand_core::Rng;

/// [`ChainState`] (θ, no momentum) and [`StepSize`](crate::sampler::StepSize) (the schedule's
/// h_t; a set h replaces the schedule by a constant, keeping t) of a first-order sampler with
/// fields `theta`, `params.schedule` and `t`: SGLD and pSGLD.
macro_rules! first_order_state {
    ($ty:ident) => {
        impl<T: Real> ChainState<T> for $ty<'_, T> {
            fn position(&self) -> &[T] {
                self.theta
            }

            fn momentum(&self) -> &[T] {
                &[]
            }

            fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
                (self.theta, &mut [])
            }

            fn resample_momentum<R: Rng + ?Sized>(&mut self, _rng: &mut R) {}
        }

        impl<T: Real> crate::sampler::StepSize<T> for $ty<'_, T> {
            /// The step of the next step, h_t of the schedule.
            fn step_size(&self) -> T {
                self.params.schedule.at(self.t)
            }

            /// Replaces the schedule by the constant h > 0 (its step counter t is kept).
            fn set_step_size(&mut self, h: T) -> Result<(), ParamError> {
                self.params.schedule = StepSchedule::constant(h)?;
                Ok(())
            }
        }
    };
}
pub(super) use first_order_state;

/// The settings of SGLD: a constant step size h (the default) or a decaying or cyclical
/// [`StepSchedule`].
///
/// ```
/// use sgmcmc::prelude::*;
///
/// assert_eq!(SgldParams::new(0.01f64).schedule(), StepSchedule::Constant(0.01));
/// // Welling & Teh 2011's decay h_t = a (b + t)^−γ with γ = 0.55.
/// let decaying = SgldParams::with_schedule(StepSchedule::polynomial(0.1f64, 10.0, 0.55).unwrap());
/// assert!(decaying.schedule().at(100) < decaying.schedule().at(0));
/// assert!(SgldParams::new(f64::NAN).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgldParams<T> {
    schedule: StepSchedule<T>,
    temperature: T,
}

impl<T: Real> SgldParams<T> {
    /// A constant step size h (checked when the sampler is built).
    pub fn new(h: T) -> Self {
        Self::with_schedule(StepSchedule::Constant(h))
    }

    /// A step-size schedule, e.g. [`StepSchedule::polynomial`] for h_t = a (b + t)^−γ.
    pub fn with_schedule(schedule: StepSchedule<T>) -> Self {
        SgldParams {
            schedule,
            temperature: T::ONE,
        }
    }

    /// Sets the temperature T ≥ 0 of the tempered posterior e^{−U/T} (default 1; 0: SGD). See
    /// [`Tempered`](crate::sampler::Tempered).
    pub fn with_temperature(self, temperature: T) -> Self {
        SgldParams {
            temperature,
            ..self
        }
    }

    /// Checks the schedule (its variants are public, so it may have been built by hand) and
    /// T ≥ 0.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.schedule.validate()?;
        crate::sampler::check_temperature(self.temperature)?;
        Ok(())
    }

    /// The temperature T.
    pub fn temperature(&self) -> T {
        self.temperature
    }

    /// The schedule.
    pub fn schedule(&self) -> StepSchedule<T> {
        self.schedule
    }
}

/// SGLD: first-order Langevin dynamics dθ = −∇Ũ(θ) dt + √(2T) dW, by Euler–Maruyama:
///
/// ```text
/// θ ← θ − h_t ∇Ũ(θ) + √(2 h_t T) ζ,   ζ ~ N(0, I)
/// ```
///
/// (T the temperature, 1 by default: the stationary law is e^{−U/T}.)
///
/// With a decreasing h_t the bias of the discretisation vanishes; with a constant h it is O(h)
/// in the stationary distribution.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// let (mut theta, mut work) = ([3.0f64; 4], [0.0; 8]);
/// let mut sgld = Sgld::new(SgldParams::new(0.05), &mut theta, &mut work).unwrap();
/// let mut rng = Pcg64::new(1, 2);
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t); // N(0, I)
/// sgld.run(&mut model, &mut rng, 1000, &mut ()).unwrap();
/// assert!(sgld.position().iter().all(|x| x.abs() < 5.0));
/// ```
#[derive(Debug)]
pub struct Sgld<'a, T> {
    params: SgldParams<T>,
    theta: &'a mut [T],
    grad: &'a mut [T],
    /// θ before the current step, saved as the pass loads it, to undo a step whose result is
    /// not finite.
    saved_theta: &'a mut [T],
    t: u64,
    /// √(2hT), remembered from the last step.
    noise_sd: crate::integrator::state::Memo<T>,
}

impl<'a, T: Real> Sgld<'a, T> {
    /// Borrows θ (finite, length n ≥ 1) and the workspace (`workspace_len(n)` = 2n entries).
    pub fn new(
        params: SgldParams<T>,
        theta: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        params.validate()?;
        let n = theta.len();
        check_nonempty(n)?;
        check_len(Buffer::Workspace, Self::workspace_len(n), work.len())?;
        check_finite(Buffer::Theta, theta)?;
        let (grad, saved_theta) = work.split_at_mut(n);
        Ok(Sgld {
            params,
            theta,
            grad,
            saved_theta,
            t: 0,
            noise_sd: crate::integrator::state::Memo::new(),
        })
    }

    /// The workspace length for n coordinates: 2n (the gradient, and θ before the step, which
    /// undoes a step whose result is not finite).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(2)
    }

    /// The number of steps taken (the t of the schedule).
    pub fn iteration(&self) -> u64 {
        self.t
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> Sampler<T, G> for Sgld<'_, T> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        dispatched_step(self, model, rng)
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> StepBody<T, G> for Sgld<'_, T> {
    #[cfg_attr(feature = "std", inline(always))]
    fn step_body<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let h = self.params.schedule.at(self.t);
        // Checked block by block below, while each block is in L1 (as `lanes::sweep` does).
        model.gradient(self.theta, self.grad);
        // √(2hT): at T = 1 the product is 2h exactly, the chain of an untempered SGLD.
        let sd = self.noise_sd.sqrt(T::TWO * h * self.params.temperature);
        if SCALAR_CORE {
            return self.step_scalar(h, sd, rng);
        }
        let mut guard = T::ZERO;
        let (mut first, mut bad_gradient) = (0, None);
        // The normals in blocks that stay in L1 (`NOISE_BLOCK` is a multiple of the generator's
        // round, so the blocks continue one stream), not in a pass over the workspace.
        let mut normals = T::NormalLanes::keyed(rng);
        let mut block = [T::ZERO; NOISE_BLOCK];
        // Whole blocks by `as_chunks` (a division by a constant; `chunks` asks for a division
        // by a run-time chunk size, whose divide-by-zero panic a size-optimised build keeps),
        // then the shorter tail.
        let (theta_blocks, theta_tail) = self.theta.as_chunks_mut::<NOISE_BLOCK>();
        let (grad_blocks, grad_tail) = self.grad.as_chunks::<NOISE_BLOCK>();
        let (saved_blocks, saved_tail) = self.saved_theta.as_chunks_mut::<NOISE_BLOCK>();
        let blocks = theta_blocks
            .iter_mut()
            .zip(grad_blocks)
            .zip(saved_blocks.iter_mut())
            .map(|((t, g), s)| ((&mut t[..], &g[..]), &mut s[..]))
            .chain(core::iter::once(((theta_tail, grad_tail), saved_tail)));
        for ((theta, grad), saved) in blocks {
            if bad_gradient.is_none() {
                bad_gradient = first_non_finite(grad).map(|k| first + k);
            }
            first += theta.len();
            // Whole rounds, as in `lanes::sweep`: the same values, stored by whole vectors.
            let whole = theta.len().next_multiple_of(T::NormalLanes::GRAIN);
            normals.fill(block.fitted_mut(..whole));
            let z = block.fitted(..theta.len());
            // A plain zipped loop: the slices cannot alias, so the loop vectoriser takes it
            // at the build's full vector width (through `zip3`'s 8-lane chunks the SLP
            // vectoriser produced half-width and scalar code here).
            // The old θ is saved as it is loaded (the state contract's rollback below).
            let all = theta
                .iter_mut()
                .zip(grad.iter())
                .zip(z.iter())
                .zip(saved.iter_mut());
            for (((t, g), z), s) in all {
                *s = *t;
                *t += sd * *z - h * *g;
            }
            guard += sum_map(theta, finiteness_probe);
        }
        if let Some(index) = bad_gradient {
            copy_into(self.theta, self.saved_theta);
            return Err(StepError::NonFiniteGradient { index });
        }
        if guard != T::ZERO
            && let Err(e) = check_state(self.theta, &[], &[])
        {
            copy_into(self.theta, self.saved_theta);
            return Err(e);
        }
        self.t += 1;
        Ok(StepStats::new(h))
    }
}

impl<T: Real> Sgld<'_, T> {
    /// The update on a scalar core (`lanes::SCALAR_CORE`): one plain loop, each normal drawn
    /// from `rng` by the ziggurat where it is used, the new θ checked as it passes
    /// ([`FiniteGuard`]). A non-finite gradient entry makes its θ non-finite (h > 0, the noise
    /// finite), so the gradient, still intact, is scanned only after a failed guard; either
    /// failure undoes the step from the saved θ.
    #[inline(always)]
    fn step_scalar<R: Rng + ?Sized>(
        &mut self,
        h: T,
        sd: T,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let mut guard = FiniteGuard::new();
        let all = self
            .theta
            .iter_mut()
            .zip(self.grad.iter())
            .zip(self.saved_theta.iter_mut());
        for ((t, g), s) in all {
            *s = *t;
            *t += sd * T::standard_normal(rng) - h * *g;
            guard.add(*t);
        }
        if !guard.finite() {
            let error = match first_non_finite(self.grad) {
                Some(index) => Err(StepError::NonFiniteGradient { index }),
                None => check_state(self.theta, &[], &[]),
            };
            if error.is_err() {
                copy_into(self.theta, self.saved_theta);
                return error.map(|()| StepStats::new(h));
            }
        }
        self.t += 1;
        Ok(StepStats::new(h))
    }
}

first_order_state!(Sgld);
crate::sampler::temperature_from_params!([T: Real] Sgld<'_, T>);

/// θ; the schedule's step counter t.
impl<T: Real> crate::sampler::Checkpoint<T> for Sgld<'_, T> {
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.theta.len()
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        crate::sampler::write_parts(out, &[self.theta])?;
        Ok(crate::sampler::Scalars {
            steps: self.t,
            ..Default::default()
        })
    }
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let [theta] = crate::sampler::read_parts(data, [self.theta.len()], 1)?;
        copy_into(self.theta, theta);
        self.t = state.steps;
        Ok(())
    }
}
