//! Hamiltonian (hybrid) Monte Carlo with Metropolis–Hastings (Neal 2011; Roychowdhury & Parthasarathy 2017, Alg. 1).

use super::MassKind;
use super::proposal::Proposal;
use super::run::{ChainState, Sampler, StepBody, StepStats, dispatched_step};
use super::shell::mass_adaptive;
use crate::arith::Plain;
use crate::error::{Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::{Energy, Gradient};
use crate::integrator::leapfrog;
use crate::integrator::sde::{KineticSteps, KineticStepsVisitor};
use crate::kinetic::MassBuffer;
use crate::lanes::first_non_finite;
use crate::real::Real;
use crate::validate::positive;
use rand_core::Rng;

/// The settings of HMC, checked when the sampler is built ([`HmcParams::validate`]).
///
/// | setting | meaning | default |
/// | --- | --- | --- |
/// | h | leapfrog step size (ε in the papers) | (required) |
/// | L | leapfrog steps per proposal, L ≥ 1 | 10 (ours) |
///
/// ```
/// use sgmcmc::prelude::*;
///
/// let params = HmcParams::new(0.1f64);
/// assert_eq!((params.step_size(), params.steps()), (0.1, 10));
/// assert_eq!(params.with_leapfrog_steps(20).steps(), 20);
/// assert!(params.with_leapfrog_steps(0).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HmcParams<T> {
    step_size: T,
    steps: u32,
    temperature: T,
}

impl<T: Real> HmcParams<T> {
    /// Step size h with the defaults of the table.
    pub fn new(step_size: T) -> Self {
        HmcParams {
            step_size,
            steps: 10,
            temperature: T::ONE,
        }
    }

    /// Sets L ≥ 1 leapfrog steps per proposal.
    pub fn with_leapfrog_steps(self, steps: u32) -> Self {
        HmcParams { steps, ..self }
    }

    /// Checks h > 0 (finite) and L ≥ 1.
    pub fn validate(&self) -> Result<(), ParamError> {
        positive(self.step_size, Param::StepSize)?;
        crate::sampler::check_positive_temperature(self.temperature)?;
        check_steps(self.steps)
    }

    /// Sets the temperature T > 0 of the tempered posterior e^{−U/T} (default 1): p is drawn
    /// from N(0, T·M) and a proposal is accepted with probability min(1, e^{−ΔH/T}). See
    /// [`Tempered`](crate::sampler::Tempered).
    pub fn with_temperature(self, temperature: T) -> Self {
        HmcParams {
            temperature,
            ..self
        }
    }

    /// T
    pub fn temperature(&self) -> T {
        self.temperature
    }

    /// h
    pub fn step_size(&self) -> T {
        self.step_size
    }
    /// L
    pub fn steps(&self) -> u32 {
        self.steps
    }
}

/// L ≥ 1, or [`Param::LeapfrogSteps`].
pub(crate) fn check_steps(steps: u32) -> Result<(), ParamError> {
    if steps == 0 {
        Err(ParamError::OutOfRange(Param::LeapfrogSteps))
    } else {
        Ok(())
    }
}

/// HMC: draw p ~ N(0, M); run L leapfrog steps of size h on H(θ, p) = U(θ) + ½pᵀM⁻¹p; accept
/// the end point with probability min(1, e^{H₀ − H₁}). Exact for any h: the leapfrog's error
/// lowers the acceptance rate, it does not bias the chain.
///
/// A proposal whose energy, end position or end momentum is not finite is rejected (a
/// divergence; θ, p and the cached gradient are restored). A proposal whose gradient
/// becomes non-finite is abandoned: θ, p and the cached gradient are restored bit for bit and
/// [`StepError::NonFiniteGradient`] is returned; stepping again is safe. The mass is the
/// identity unless [`Hmc::set_mass`] gives one (diagonal or dense, adaptable in place for
/// HMC-EM).
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// let (mut theta, mut p, mut work) = ([1.0f64; 2], [0.0; 2], [0.0; 8]);
/// let mut model = Model::new(
///     |t: &[f64], g: &mut [f64]| g.copy_from_slice(t),
///     |t: &[f64]| 0.5 * t.iter().map(|x| x * x).sum::<f64>(),
/// );
/// let mut hmc = Hmc::new(HmcParams::new(0.2), &mut theta, &mut p, &mut work).unwrap();
/// let mut rng = Pcg64::new(1, 1);
/// let s = hmc.step(&mut model, &mut rng).unwrap();
/// assert!(s.acceptance.unwrap() > 0.5);
/// ```
#[derive(Debug)]
pub struct Hmc<'a, T, M = MassBuffer<'a, T>> {
    params: HmcParams<T>,
    shell: Proposal<'a, T, M>,
}

impl<'a, T: Real> Hmc<'a, T> {
    /// Borrows θ (finite), p and the workspace (`workspace_len(n)` = 4n entries); θ and p of one
    /// length n ≥ 1. The mass is the identity, replaceable at run time ([`Hmc::set_mass`]) or
    /// fixed to one shape at compile time ([`Hmc::with_mass`]).
    pub fn new(
        params: HmcParams<T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        params.validate()?;
        let shell = Proposal::new(theta, momentum, work, false)?;
        Ok(Hmc { params, shell })
    }

    /// The workspace length for n coordinates: 4n (∇U, and copies of θ, ∇U and p).
    pub const fn workspace_len(n: usize) -> usize {
        Proposal::<T>::workspace_len(n)
    }
}

impl<'a, T: Real, M: MassKind<T>> Hmc<'a, T, M> {
    /// Uses the mass `mass` (with the default run-time [`MassBuffer`]: identity, diagonal or
    /// dense), replaceable between proposals through
    /// [`AdaptiveMass`](crate::kinetic::AdaptiveMass). [`LayoutError::LengthMismatch`] on a
    /// dimension mismatch, with the mass unchanged.
    pub fn set_mass(&mut self, mass: M) -> Result<(), LayoutError> {
        self.shell.set_mass(mass)
    }

    /// The same sampler with the mass `mass` of another kind: a shape fixed at
    /// compile time, whose proposal links that shape's code alone, or a [`MassBuffer`]. On a
    /// dimension mismatch the sampler is dropped (its buffers are free again).
    pub fn with_mass<M2: MassKind<T>>(self, mass: M2) -> Result<Hmc<'a, T, M2>, LayoutError> {
        Ok(Hmc {
            params: self.params,
            shell: self.shell.with_mass(mass)?,
        })
    }

    /// The parameters.
    pub fn params(&self) -> HmcParams<T> {
        self.params
    }

    /// Sets the number of leapfrog steps L ≥ 1 of the next proposals (HMC-EM's LP_S);
    /// [`ParamError::OutOfRange`] for 0, with L unchanged.
    pub fn set_leapfrog_steps(&mut self, steps: u32) -> Result<(), ParamError> {
        check_steps(steps)?;
        self.params.steps = steps;
        Ok(())
    }

    /// ∇U at the current θ, if cached (after a successful step).
    pub fn cached_gradient(&self) -> Option<&[T]> {
        self.shell.energy.map(|_| &*self.shell.grad)
    }
}

/// L leapfrog steps under a mass's kinetics piece.
struct Leapfrog<'s, T, G: ?Sized> {
    theta: &'s mut [T],
    p: &'s mut [T],
    grad: &'s mut [T],
    eps: T,
    steps: u32,
    model: &'s mut G,
}

impl<T: Real, G: Gradient<T> + ?Sized> KineticStepsVisitor<T> for Leapfrog<'_, T, G> {
    type Output = Result<(), StepError>;
    #[cfg_attr(feature = "std", inline(always))]
    fn visit<K: KineticSteps<T>>(self, mut kinetics: K) -> Self::Output {
        leapfrog(
            self.theta,
            self.p,
            self.grad,
            &mut kinetics,
            self.eps,
            self.steps,
            self.model,
        )
    }
}

impl<T: Real, K: MassKind<T>, M: Energy<T> + ?Sized> Sampler<T, M> for Hmc<'_, T, K> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        dispatched_step(self, model, rng)
    }
}

impl<T: Real, K: MassKind<T>, M: Energy<T> + ?Sized> StepBody<T, M> for Hmc<'_, T, K> {
    #[cfg_attr(feature = "std", inline(always))]
    fn step_body<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let s = &mut self.shell;
        // The cache as before the call, for an abandoned step (a failed step must not leave a
        // freshly cached U behind: with a stochastic U it would change the next step).
        let cached = s.energy;
        let u0 = s.ensure_energy(model)?;
        s.save();
        let HmcParams {
            step_size,
            steps,
            temperature,
        } = self.params;
        s.draw_momentum(rng, temperature);
        let h0 = u0 + s.kinetic();
        let run = Leapfrog {
            theta: &mut *s.theta,
            p: &mut *s.p,
            grad: &mut *s.grad,
            eps: step_size,
            steps,
            model,
        };
        // (`Plain` in every copy: the leapfrog's Gaussian kinetics compute no polynomial, so
        // the copy's rounding, `real::Arith`, changes nothing here.)
        if let Err(e) = s.mass.visit::<Plain, _>(run) {
            s.restore();
            s.energy = cached;
            return Err(e);
        }
        // A proposal that left the finite numbers (θ or p overflowed, e.g. a huge step over a
        // flat region, where the energy may stay finite) is a divergence: rejected, and p is
        // restored too, since the end momentum is not finite either (the state contract: an
        // `Ok` leaves a finite state).
        let diverged = first_non_finite(s.theta).is_some() || first_non_finite(s.p).is_some();
        let u1 = if diverged {
            T::INFINITY
        } else {
            model.energy(s.theta)
        };
        let kinetic = s.kinetic();
        // −ΔH/T, the tempered log acceptance ratio (x/1 = x exactly).
        let log_ratio = (h0 - (u1 + kinetic)) / temperature;
        // A non-finite energy (a divergence) compares false and is rejected.
        let acceptance = if log_ratio.is_finite() {
            log_ratio.min(T::ZERO).exp()
        } else {
            T::ZERO
        };
        let accepted = T::uniform(rng) < acceptance;
        if accepted {
            s.energy = Some(u1);
        } else if diverged {
            s.restore();
            // p before the step is finite but for an initial p that was not (accepted by `new`,
            // never used: HMC redraws it); an `Ok` leaves a finite state, so that p becomes 0.
            s.p.iter_mut()
                .filter(|x| !x.is_finite())
                .for_each(|x| *x = T::ZERO);
        } else {
            s.restore_position();
        }
        // The kinetic temperature of p as the step leaves it (the proposal's end momentum, but
        // for a divergence, whose p was restored).
        let kinetic = if diverged { s.kinetic() } else { kinetic };
        let mut stats = StepStats::new(step_size);
        stats.kinetic_temperature = Some(T::TWO * kinetic / s.dim());
        stats.acceptance = Some(acceptance);
        stats.accepted = Some(accepted);
        Ok(stats)
    }
}

impl<T: Real, M: MassKind<T>> ChainState<T> for Hmc<'_, T, M> {
    fn position(&self) -> &[T] {
        self.shell.theta
    }

    fn momentum(&self) -> &[T] {
        self.shell.p
    }

    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        self.shell.energy = None;
        (self.shell.theta, self.shell.p)
    }

    /// p ~ N(0, T·M).
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.shell.draw_momentum(rng, self.params.temperature);
    }
}

mass_adaptive!(['a, T: Real, M: MassKind<T>] Hmc<'a, T, M>, shell.mass);
super::temperature_from_params!([T: Real, M: MassKind<T>] Hmc<'_, T, M>);

/// θ, p, the cached ∇U and U, and L, which HMC-EM's E-step sets to LP_S: a failed MCEM step
/// puts the caller's back (issue 33, F7).
impl<T: Real, M: MassKind<T>> super::Rollback<T> for Hmc<'_, T, M> {
    fn save_state(&self, saved: &mut super::SavedState<'_, T>) {
        self.shell.save_state(saved);
        saved.leapfrog_steps = self.params.steps;
    }
    fn restore_state(&mut self, saved: &super::SavedState<'_, T>) {
        self.shell.restore_state(saved);
        // (Saved from the settings, which hold L ≥ 1.)
        self.params.steps = saved.leapfrog_steps;
    }
}

/// θ, the cached ∇U and p; the cached U.
impl<T: Real, M: MassKind<T>> crate::sampler::Checkpoint<T> for Hmc<'_, T, M> {
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.shell.checkpoint_len()
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        self.shell.save_checkpoint(out)
    }
    /// (p may be non-finite: HMC redraws it before using it.)
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        self.shell.restore_checkpoint(state, data, false)
    }
}

super::schedule::step_size_from_params!(
    [T: Real, M: MassKind<T>] Hmc<'_, T, M>,
    HmcParams,
    step_size
);
