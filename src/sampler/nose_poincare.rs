//! SG-NPHMC: stochastic-gradient Nosé–Poincaré HMC (Roychowdhury & Parthasarathy 2017, §3.4, Alg. 4).

use super::hmc::check_steps;
use super::proposal::Proposal;
use super::run::{ChainState, Sampler, StepBody, StepStats, dispatched_step};
use crate::error::{Buffer, Error, LayoutError, LinalgError, Param, ParamError, StepError};
use crate::gradient::Energy;
use crate::integrator::{
    NpConstants, NpScalars, generalized_leapfrog_step, kinetic2_mass, nose_poincare_energy,
};
use crate::kinetic::{MassBuffer, MassShape};
use crate::lanes::first_non_finite;
use crate::real::Real;
use crate::validate::{non_negative, positive};
use rand_core::Rng;

/// The settings of SG-NPHMC, checked when the sampler is built ([`SgNphmcParams::validate`]).
///
/// | setting | meaning | default |
/// | --- | --- | --- |
/// | h | step size (ε in the paper) | (required) |
/// | Q | mass of the thermostat s | 1 |
/// | A | noise estimate of the minibatch log-likelihood value, on q | 0 |
/// | B | noise estimate of the minibatch gradient, on p | 0 |
/// | L | generalized-leapfrog steps per sample | 10 (ours) |
///
/// A = B = 0 with an exact gradient and value is the deterministic Nosé–Poincaré dynamics. B
/// plays the role of SGHMC's B̂ = ½hV for a gradient noise of variance V per coordinate: p
/// receives h·N(0, V) = N(0, 2Bh) per step, which the friction −(B/√s) M⁻¹p compensates (exactly
/// at s = 1).
///
/// ```
/// use sgmcmc::prelude::*;
///
/// let params = SgNphmcParams::new(0.05f64);
/// assert_eq!((params.thermostat_mass(), params.energy_noise(), params.gradient_noise()), (1.0, 0.0, 0.0));
/// assert_eq!(params.steps(), 10);
/// let noisy = params.with_gradient_noise(0.2).with_energy_noise(0.1).with_leapfrog_steps(5);
/// assert!(noisy.validate().is_ok());
/// assert!(params.with_thermostat_mass(0.0).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgNphmcParams<T> {
    step_size: T,
    thermostat_mass: T,
    energy_noise: T,
    gradient_noise: T,
    steps: u32,
    temperature: T,
}

impl<T: Real> SgNphmcParams<T> {
    /// Step size h with the defaults of the table.
    pub fn new(step_size: T) -> Self {
        SgNphmcParams {
            step_size,
            thermostat_mass: T::ONE,
            energy_noise: T::ZERO,
            gradient_noise: T::ZERO,
            steps: 10,
            temperature: T::ONE,
        }
    }

    /// Sets the thermostat mass Q > 0.
    pub fn with_thermostat_mass(self, thermostat_mass: T) -> Self {
        SgNphmcParams {
            thermostat_mass,
            ..self
        }
    }

    /// Sets the noise estimate A ≥ 0 of the minibatch log-likelihood value.
    pub fn with_energy_noise(self, energy_noise: T) -> Self {
        SgNphmcParams {
            energy_noise,
            ..self
        }
    }

    /// Sets the noise estimate B ≥ 0 of the minibatch gradient.
    pub fn with_gradient_noise(self, gradient_noise: T) -> Self {
        SgNphmcParams {
            gradient_noise,
            ..self
        }
    }

    /// Sets L ≥ 1 generalized-leapfrog steps per sample.
    pub fn with_leapfrog_steps(self, steps: u32) -> Self {
        SgNphmcParams { steps, ..self }
    }

    /// Checks h > 0, Q > 0, A ≥ 0, B ≥ 0 (all finite) and L ≥ 1.
    pub fn validate(&self) -> Result<(), ParamError> {
        positive(self.step_size, Param::StepSize)?;
        positive(self.thermostat_mass, Param::ThermostatMass)?;
        non_negative(self.energy_noise, Param::EnergyNoise)?;
        non_negative(self.gradient_noise, Param::GradientNoise)?;
        crate::sampler::check_positive_temperature(self.temperature)?;
        check_steps(self.steps)
    }

    /// Sets the temperature T > 0 of the tempered posterior e^{−U/T} (default 1): the
    /// Nosé–Poincaré term g ln s becomes gT ln s (Bond, Laird & Leimkuhler 1999: the canonical
    /// law at kT), p and q are drawn from N(0, T·M) and N(0, T·Q), and the noise frictions A
    /// and B act as A/T and B/T (`docs/temperature.md`). See
    /// [`Tempered`](crate::sampler::Tempered).
    pub fn with_temperature(self, temperature: T) -> Self {
        SgNphmcParams {
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
    /// Q
    pub fn thermostat_mass(&self) -> T {
        self.thermostat_mass
    }
    /// A
    pub fn energy_noise(&self) -> T {
        self.energy_noise
    }
    /// B
    pub fn gradient_noise(&self) -> T {
        self.gradient_noise
    }
    /// L
    pub fn steps(&self) -> u32 {
        self.steps
    }
}

/// SG-NPHMC (Roychowdhury & Parthasarathy 2017, §3.4, Alg. 4): stochastic-gradient
/// Nosé–Poincaré dynamics integrated by the generalized leapfrog, with p and q redrawn before
/// every block of L steps.
///
/// Each [`step`](Sampler::step) is one sample of Alg. 4: draw p ~ N(0, M), q ~ N(0, Q), reset
/// s = 1 and set H₀ so that H_NP = 0 (Bond, Leimkuhler & Laird 1999 choose H₀ the same way), then
/// L generalized-leapfrog steps. On the level set H_NP = 0 the dynamics in the physical
/// variables (θ, p/s, q) are Nosé–Hoover's, which (with A = B = 0 and g = D) leave
/// exp(−U(θ) − ½(p/s)ᵀM⁻¹(p/s) − q²/(2Q)) invariant: θ is sampled from exp(−U) up to the
/// integrator's O(h²) error. [`integrate`](SgNphmc::integrate) runs the leapfrog without the
/// redraw; [`block`](SgNphmc::block) is one Alg. 4 block with any number of steps. The scheme, its
/// derivation from H_NP and where it departs from the printed eq. 7 are in
/// `docs/sgnphmc-generalized-leapfrog.md`; why SG-NPHMC-EM redraws by default, unlike the printed
/// Alg. 5, is in `docs/sgnphmc-em-e-step.md` ([`crate::adapt::NphmcEStep`]).
///
/// The model is an [`Energy`]: every leapfrog step evaluates one (stochastic) gradient ∇Ũ and
/// one value Ũ at the new θ, both cached between steps. [`StepStats::thermostat`] reports q/Q
/// after the step (the Nosé–Hoover friction it is equivalent to) and `kinetic_temperature` the
/// physical (p/s)ᵀM⁻¹(p/s)/D. The mass is the identity unless [`SgNphmc::set_mass`] gives one.
///
/// # Errors
///
/// A non-finite gradient ([`StepError::NonFiniteGradient`]) or value
/// ([`StepError::NonFiniteEnergy`]), or a thermostat update without an admissible solution
/// ([`StepError::ThermostatBreakdown`]), abandons the whole step: θ, p, s, q, H₀ and the cached
/// gradient are restored bit for bit. So is a step that leaves θ, p or q non-finite, which
/// returns [`StepError::NonFiniteState`] (naming [`Buffer::ThermostatMomentum`] for q).
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
/// let params = SgNphmcParams::new(0.05).with_leapfrog_steps(20);
/// let mut smp = SgNphmc::new(params, &mut theta, &mut p, &mut work).unwrap();
/// let mut rng = Pcg64::new(1, 1);
/// smp.step(&mut model, &mut rng).unwrap();
/// // H_NP = 0 at the start of the block, and the leapfrog keeps it near 0.
/// assert!(smp.hamiltonian().unwrap().abs() < 1e-2);
/// ```
#[derive(Debug)]
pub struct SgNphmc<'a, T> {
    params: SgNphmcParams<T>,
    shell: Proposal<'a, T>,
    s: T,
    q: T,
    /// H₀, once set (cleared when θ or p are changed from outside).
    h0: Option<T>,
}

/// θ, p, the cached ∇U and U, s, q and H₀.
impl<T: Real> super::Rollback<T> for SgNphmc<'_, T> {
    fn save_state(&self, saved: &mut super::SavedState<'_, T>) {
        self.shell.save_state(saved);
        saved.scalars[0] = Some(self.s);
        saved.scalars[1] = Some(self.q);
        saved.scalars[2] = self.h0;
    }

    fn restore_state(&mut self, saved: &super::SavedState<'_, T>) {
        self.shell.restore_state(saved);
        if let (Some(s), Some(q)) = (saved.scalars[0], saved.scalars[1]) {
            self.s = s;
            self.q = q;
        }
        self.h0 = saved.scalars[2];
    }
}

impl<'a, T: Real> SgNphmc<'a, T> {
    /// Borrows θ and p (finite, one length n ≥ 1) and the workspace (`workspace_len(n)` = 4n
    /// entries). The thermostat starts at s = 1, q = 0; the mass is the identity.
    pub fn new(
        params: SgNphmcParams<T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        params.validate()?;
        let shell = Proposal::new(theta, momentum, work, true)?;
        Ok(SgNphmc {
            params,
            shell,
            s: T::ONE,
            q: T::ZERO,
            h0: None,
        })
    }

    /// The workspace length for n coordinates: 4n.
    pub const fn workspace_len(n: usize) -> usize {
        Proposal::<T>::workspace_len(n)
    }

    /// Uses the mass `mass` (identity, diagonal, or dense when B = 0), changeable in place
    /// through [`AdaptiveMass`](crate::kinetic::AdaptiveMass) (SG-NPHMC-EM). A dense mass with
    /// B > 0 is [`LayoutError::UnsupportedMass`]: the implicit friction of the first half kick
    /// would be a d × d solve per step. On an error the sampler keeps its mass.
    pub fn set_mass(&mut self, mass: MassBuffer<'a, T>) -> Result<(), LayoutError> {
        if mass.mass().shape() == MassShape::Dense && self.params.gradient_noise > T::ZERO {
            return Err(LayoutError::UnsupportedMass);
        }
        self.shell.set_mass(mass)?;
        self.h0 = None;
        Ok(())
    }

    /// The parameters.
    pub fn params(&self) -> SgNphmcParams<T> {
        self.params
    }

    /// Sets the thermostat mass Q (finite, > 0; else [`ParamError`] for
    /// [`Param::ThermostatMass`] and Q unchanged). H₀ is reset so that H_NP = 0 at the next
    /// step or integrate (SG-NPHMC-EM learns Q, Alg. 5).
    pub fn set_thermostat_mass(&mut self, q_mass: T) -> Result<(), ParamError> {
        self.params.thermostat_mass = positive(q_mass, Param::ThermostatMass)?;
        self.h0 = None;
        Ok(())
    }

    /// Forgets H₀, so the next [`integrate`](SgNphmc::integrate) sets it to make H_NP = 0 at
    /// the current state (what every [`step`](Sampler::step) does after its redraw).
    pub fn reset_energy_level(&mut self) {
        self.h0 = None;
    }

    /// ∇Ũ at the current θ, if cached.
    pub fn cached_gradient(&self) -> Option<&[T]> {
        self.shell.energy.map(|_| &*self.shell.grad)
    }

    /// The thermostat s (> 0); p/s is the physical momentum.
    pub fn thermostat(&self) -> T {
        self.s
    }

    /// The thermostat momentum q.
    pub fn thermostat_momentum(&self) -> T {
        self.q
    }

    /// H₀, if set (it is set at the start of every [`step`](Sampler::step), and by
    /// [`integrate`](SgNphmc::integrate) if unset).
    pub fn h0(&self) -> Option<T> {
        self.h0
    }

    /// H_NP (eq. 6) at the current state, with the cached Ũ(θ); `None` before the first step or
    /// integrate (no Ũ or H₀ yet) or after [`phase_mut`](ChainState::phase_mut).
    pub fn hamiltonian(&self) -> Option<T> {
        let (u, h0) = (self.shell.energy?, self.h0?);
        Some(nose_poincare_energy(
            self.shell.p,
            self.shell.mass.mass(),
            NpScalars {
                s: self.s,
                q: self.q,
                u,
            },
            &self.constants(h0),
        ))
    }

    fn constants(&self, h0: T) -> NpConstants<T> {
        let prm = self.params;
        // At temperature T: g = D·T and the frictions A/T, B/T (each exact at T = 1).
        let temperature = prm.temperature;
        NpConstants {
            eps: prm.step_size,
            q_mass: prm.thermostat_mass,
            a: prm.energy_noise / temperature,
            b: prm.gradient_noise / temperature,
            g: self.shell.dim() * temperature,
            h0,
        }
    }

    /// Draws p ~ N(0, T·M) and q ~ N(0, T·Q) and resets s = 1 (H₀ is then stale).
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let temperature = self.params.temperature;
        self.shell.draw_momentum(rng, temperature);
        self.q = (self.params.thermostat_mass * temperature).sqrt() * T::standard_normal(rng);
        self.s = T::ONE;
        self.h0 = None;
    }

    /// pᵀM⁻¹p.
    fn kinetic2(&self) -> T {
        kinetic2_mass(self.shell.p, self.shell.mass.mass())
    }

    /// The H₀ that makes H_NP = 0 at the current state.
    fn zero_level(&self, u: T) -> T {
        let q_mass = self.params.thermostat_mass;
        u + self.kinetic2() / (T::TWO * self.s * self.s)
            + self.q * self.q / (T::TWO * q_mass)
            + self.shell.dim() * self.params.temperature * self.s.ln()
    }

    /// Runs `steps` generalized-leapfrog steps from the current state without redrawing p or q
    /// (`steps` = 0 only evaluates Ũ, ∇Ũ and H₀ if they are not known). If H₀ is unset it is
    /// first set so that H_NP = 0. On error the state is restored as for
    /// [`step`](Sampler::step).
    pub fn integrate<M: Energy<T> + ?Sized>(
        &mut self,
        model: &mut M,
        steps: u32,
    ) -> Result<(), StepError> {
        // Everything as before the call, the caches included (a failed call must not leave a
        // freshly cached U behind: with a stochastic U it would change the next step).
        let saved = (self.s, self.q, self.h0, self.shell.energy);
        let u = self.shell.ensure_energy(model)?;
        if self.h0.is_none() {
            self.h0 = Some(self.zero_level(u));
        }
        self.shell.save();
        self.leapfrog_or_restore(model, steps, saved)
    }

    /// One Alg. 4 block of `steps` leapfrog steps (what [`step`](Sampler::step) does with
    /// `steps` = L): draw p ~ N(0, M), q ~ N(0, Q), reset s = 1, set H₀ so that H_NP = 0, then
    /// `steps` generalized-leapfrog steps. It is also the default E-step of SG-NPHMC-EM.
    /// Errors as for [`step`](Sampler::step), with the pre-draw state restored.
    pub fn block<M: Energy<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError> {
        crate::dispatch::run(Block {
            sampler: self,
            model,
            rng,
            steps,
        })
    }

    /// [`block`](Self::block), undispatched.
    #[cfg_attr(feature = "std", inline(always))]
    fn block_body<M: Energy<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError> {
        let saved = (self.s, self.q, self.h0, self.shell.energy);
        let u = self.shell.ensure_energy(model)?;
        self.shell.save();
        self.draw(rng);
        self.h0 = Some(self.zero_level(u));
        self.leapfrog_or_restore(model, steps, saved)?;
        Ok(self.stats())
    }

    /// The statistics of the current state: (p/s)ᵀM⁻¹(p/s)/D and q/Q.
    fn stats(&self) -> StepStats<T> {
        let mut stats = StepStats::new(self.params.step_size);
        stats.kinetic_temperature = Some(self.kinetic2() / (self.s * self.s * self.shell.dim()));
        stats.thermostat = Some(self.q / self.params.thermostat_mass);
        stats
    }

    #[allow(clippy::type_complexity)]
    fn restore(&mut self, (s, q, h0, energy): (T, T, Option<T>, Option<T>)) {
        self.shell.restore();
        self.s = s;
        self.q = q;
        self.h0 = h0;
        self.shell.energy = energy;
    }

    /// `steps` leapfrog steps with the current H₀ (set) and cached Ũ (known).
    fn leapfrog<M: Energy<T> + ?Sized>(
        &mut self,
        model: &mut M,
        steps: u32,
    ) -> Result<(), StepError> {
        let (Some(h0), Some(u)) = (self.h0, self.shell.energy) else {
            return Ok(());
        };
        let c = self.constants(h0);
        let mut x = NpScalars {
            s: self.s,
            q: self.q,
            u,
        };
        let shell = &mut self.shell;
        let (mass, inv_mass_p) = shell.mass.split();
        for _ in 0..steps {
            generalized_leapfrog_step(
                shell.theta,
                shell.p,
                shell.grad,
                mass,
                inv_mass_p,
                &mut x,
                &c,
                model,
            )?;
        }
        self.s = x.s;
        self.q = x.q;
        self.shell.energy = Some(x.u);
        Ok(())
    }

    /// `steps` leapfrog steps; on any error, or a state that left the finite numbers, the state
    /// before the call (`saved`, with the shell's saved copies) is restored bit for bit.
    #[allow(clippy::type_complexity)]
    fn leapfrog_or_restore<M: Energy<T> + ?Sized>(
        &mut self,
        model: &mut M,
        steps: u32,
        saved: (T, T, Option<T>, Option<T>),
    ) -> Result<(), StepError> {
        let result = self
            .leapfrog(model, steps)
            .and_then(|()| self.check_state());
        if result.is_err() {
            self.restore(saved);
        }
        result
    }

    /// The first non-finite part of the state after a step: θ, p, then the thermostat
    /// momentum q and the thermostat s (s > 0 and finite is kept by the update itself).
    fn check_state(&self) -> Result<(), StepError> {
        let bad = |buffer, a: &[T]| {
            first_non_finite(a).map(|index| StepError::NonFiniteState { buffer, index })
        };
        if let Some(e) =
            bad(Buffer::Theta, self.shell.theta).or_else(|| bad(Buffer::Momentum, self.shell.p))
        {
            return Err(e);
        }
        if !(self.q.is_finite() && self.s.is_finite()) {
            return Err(StepError::NonFiniteState {
                buffer: Buffer::ThermostatMomentum,
                index: 0,
            });
        }
        Ok(())
    }
}

impl<T: Real, M: Energy<T> + ?Sized> Sampler<T, M> for SgNphmc<'_, T> {
    /// One sample of Alg. 4 ([`SgNphmc::block`] with L from the parameters).
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        dispatched_step(self, model, rng)
    }
}

impl<T: Real, M: Energy<T> + ?Sized> StepBody<T, M> for SgNphmc<'_, T> {
    #[inline(always)]
    fn step_body<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        self.block_body(model, rng, self.params.steps)
    }
}

impl<T: Real> ChainState<T> for SgNphmc<'_, T> {
    fn position(&self) -> &[T] {
        self.shell.theta
    }

    /// The (virtual) momentum p; the physical momentum is p/s ([`SgNphmc::thermostat`]).
    fn momentum(&self) -> &[T] {
        self.shell.p
    }

    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        self.shell.energy = None;
        self.h0 = None;
        (self.shell.theta, self.shell.p)
    }

    /// Draws p ~ N(0, T·M), q ~ N(0, T·Q) and resets s = 1; H₀ is reset at the next step.
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.draw(rng);
    }
}

impl<T: Real> crate::kinetic::AdaptiveMass<T> for SgNphmc<'_, T> {
    fn mass(&self) -> crate::kinetic::Mass<'_, T> {
        self.shell.mass.mass()
    }
    /// Replaces M⁻¹; H₀ is reset so that H_NP = 0 at the next step or integrate (H_NP depends on
    /// M).
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        self.shell.mass.set_inverse_mass(inv_mass)?;
        self.h0 = None;
        Ok(())
    }
}

/// θ, the cached ∇U and p; s, q, H₀ and the cached U.
impl<T: Real> crate::sampler::Checkpoint<T> for SgNphmc<'_, T> {
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.shell.checkpoint_len()
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        let (s, q, h0, q_mass) = (self.s, self.q, self.h0, self.params.thermostat_mass);
        Ok(crate::sampler::Scalars {
            thermostat: Some(s),
            thermostat_momentum: Some(q),
            energy_level: h0,
            thermostat_mass: Some(q_mass),
            ..self.shell.save_checkpoint(out)?
        })
    }
    /// (s and Q must be finite and > 0, q finite.)
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let (Some(s), Some(q)) = (state.thermostat, state.thermostat_momentum) else {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: 0,
            });
        };
        let q_mass = state.thermostat_mass.unwrap_or(self.params.thermostat_mass);
        if !(s.is_finite() && q_mass.is_finite()) || s <= T::ZERO || q_mass <= T::ZERO {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: 0,
            });
        }
        self.shell.restore_checkpoint(state, data, true)?;
        self.params.thermostat_mass = q_mass;
        self.s = s;
        self.q = q;
        self.h0 = state.energy_level;
        Ok(())
    }
}

super::schedule::step_size_from_params!(SgNphmc, SgNphmcParams, step_size);

/// [`SgNphmc::block`]'s arguments as a [`crate::dispatch::Kernel`].
struct Block<'s, 'a, T, M: ?Sized, R: ?Sized> {
    sampler: &'s mut SgNphmc<'a, T>,
    model: &'s mut M,
    rng: &'s mut R,
    steps: u32,
}

impl<T: Real, M: Energy<T> + ?Sized, R: Rng + ?Sized> crate::dispatch::Kernel
    for Block<'_, '_, T, M, R>
{
    type Output = Result<StepStats<T>, StepError>;
    #[inline(always)]
    fn run<A: crate::arith::Arith>(self) -> Self::Output {
        self.sampler.block_body(self.model, self.rng, self.steps)
    }
}
super::temperature_from_params!([T: Real] SgNphmc<'_, T>);
