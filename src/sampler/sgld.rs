//! Stochastic gradient Langevin dynamics (SGLD), Welling & Teh 2011 as presented in 002, Alg. 1.

use super::stats::{ChainState, Sampler, StepStats};
use crate::adapt::StepSchedule;
use crate::error::{Buffer, LayoutError, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::Workspace;
use crate::integrator::checked_gradient;
use crate::integrator::{check_finite, check_len, check_state};
use crate::lanes::{LANES, finiteness_probe, reduce, zip3};
use crate::real::Real;
use crate::rng::fill_standard_normal;
use rand_core::Rng;

/// Parameters of SGLD: the step-size schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgldParams<T> {
    schedule: StepSchedule<T>,
}

impl<T: Real> SgldParams<T> {
    /// A constant step h > 0.
    pub fn new(h: T) -> Result<Self, ParamError> {
        Ok(SgldParams {
            schedule: StepSchedule::constant(h)?,
        })
    }

    /// A step-size schedule, e.g. [`StepSchedule::polynomial`] for h_t = a (b + t)^−γ.
    pub fn with_schedule(schedule: StepSchedule<T>) -> Result<Self, ParamError> {
        // Re-validate: the enum's variants are public, so a schedule may have been built by hand.
        let schedule = match schedule {
            StepSchedule::Constant(h) => StepSchedule::constant(h)?,
            StepSchedule::Polynomial { a, b, gamma } => StepSchedule::polynomial(a, b, gamma)?,
        };
        Ok(SgldParams { schedule })
    }

    /// The schedule.
    pub fn schedule(&self) -> StepSchedule<T> {
        self.schedule
    }
}

/// SGLD: first-order Langevin dynamics dθ = −∇Ũ(θ) dt + √2 dW, discretised by Euler–Maruyama:
///
/// ```text
/// θ ← θ − h_t ∇Ũ(θ) + √(2 h_t) ζ,   ζ ~ N(0, I)
/// ```
///
/// (002, Alg. 1; Welling & Teh 2011). With a decreasing h_t the bias of the discretisation
/// vanishes; with a constant h it is O(h) in the stationary distribution.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::{ChainState, Workspace, sampler::{Sampler, Sgld, SgldParams}};
/// let (mut theta, mut grad, mut scratch) = ([3.0f64; 4], [0.0; 4], [0.0; 4]);
/// let mut sgld = Sgld::new(
///     SgldParams::new(0.05).unwrap(),
///     &mut theta,
///     Workspace::new(&mut grad, &mut scratch),
/// ).unwrap();
/// let mut rng = Pcg64::new(1, 2);
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t); // N(0, I)
/// for _ in 0..1000 {
///     sgld.step(&mut model, &mut rng).unwrap();
/// }
/// assert!(sgld.position().iter().all(|x| x.abs() < 5.0));
/// ```
#[derive(Debug)]
pub struct Sgld<'a, T> {
    params: SgldParams<T>,
    theta: &'a mut [T],
    grad: &'a mut [T],
    noise: &'a mut [T],
    t: u64,
}

impl<'a, T: Real> Sgld<'a, T> {
    /// Borrows θ (the initial position, must be finite) and the workspace; all of one length ≥ 1.
    pub fn new(
        params: SgldParams<T>,
        theta: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let n = theta.len();
        if n == 0 {
            return Err(LayoutError::Empty);
        }
        check_len(Buffer::Gradient, n, work.gradient.len())?;
        check_len(Buffer::Scratch, n, work.scratch.len())?;
        check_finite(Buffer::Theta, theta)?;
        Ok(Sgld {
            params,
            theta,
            grad: work.gradient,
            noise: work.scratch,
            t: 0,
        })
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
        let h = self.params.schedule.at(self.t);
        checked_gradient(model, self.theta, self.grad)?;
        fill_standard_normal(rng, self.noise);
        let sd = (T::TWO * h).sqrt();
        let mut guard = [T::ZERO; LANES];
        zip3(self.theta, self.grad, self.noise, |j, t, g, z| {
            *t += sd * z - h * g;
            guard[j] += finiteness_probe(*t);
        });
        self.t += 1;
        if reduce(guard) != T::ZERO {
            check_state(self.theta, &[], None)?;
        }
        Ok(StepStats::new(h))
    }
}

impl<T: Real> ChainState<T> for Sgld<'_, T> {
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
