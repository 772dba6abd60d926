//! SG-NPHMC: stochastic-gradient Nosé–Poincaré HMC (Roychowdhury & Parthasarathy, 004 §3.4,
//! Alg. 4), with an identity, diagonal or dense mass (dense only with B = 0).

use super::hmc::{HmcWorkspace, check_layout, draw_mass_momentum};
use super::params::{non_negative, positive};
use super::stats::{ChainState, Sampler, StepStats};
use crate::error::{Buffer, LayoutError, LinalgError, Param, ParamError, StepError};
use crate::gradient::Energy;
use crate::integrator::checked_gradient;
use crate::integrator::{
    NpConstants, NpScalars, check_mass, generalized_leapfrog_step, kinetic2_mass,
    nose_poincare_energy,
};
use crate::kinetic::{AdaptiveMass, Mass, MassBuffer, MassShape};
use crate::lanes::first_non_finite;
use crate::real::Real;
use rand_core::Rng;

/// Parameters of SG-NPHMC: step ε > 0, thermostat mass Q > 0, noise estimates A ≥ 0 (of the
/// minibatch log-likelihood value) and B ≥ 0 (of its gradient), and L ≥ 1 generalized-leapfrog
/// steps per sample.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgNphmcParams<T> {
    step_size: T,
    thermostat_mass: T,
    energy_noise: T,
    gradient_noise: T,
    steps: u32,
}

impl<T: Real> SgNphmcParams<T> {
    /// Validates ε > 0 ([`Param::StepSize`]), Q > 0 ([`Param::ThermostatMass`]), A ≥ 0
    /// ([`Param::EnergyNoise`]), B ≥ 0 ([`Param::GradientNoise`]), all finite, and L ≥ 1
    /// ([`Param::LeapfrogSteps`]).
    ///
    /// A = B = 0 with an exact gradient and value is the deterministic Nosé–Poincaré dynamics.
    /// B plays the role of SGHMC's B̂ = ½ ε V for a gradient noise of variance V per coordinate:
    /// the momentum p receives ε · N(0, V) = N(0, 2Bε) per step, which the friction −(B/√s) M⁻¹p
    /// compensates (exactly at s = 1).
    pub fn new(
        step_size: T,
        thermostat_mass: T,
        energy_noise: T,
        gradient_noise: T,
        steps: u32,
    ) -> Result<Self, ParamError> {
        let step_size = positive(step_size, Param::StepSize)?;
        let thermostat_mass = positive(thermostat_mass, Param::ThermostatMass)?;
        let energy_noise = non_negative(energy_noise, Param::EnergyNoise)?;
        let gradient_noise = non_negative(gradient_noise, Param::GradientNoise)?;
        if steps == 0 {
            return Err(ParamError::OutOfRange(Param::LeapfrogSteps));
        }
        Ok(SgNphmcParams {
            step_size,
            thermostat_mass,
            energy_noise,
            gradient_noise,
            steps,
        })
    }
    /// ε
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

/// The caller-owned buffers SG-NPHMC needs besides θ and p, all of θ's length: the same four as
/// HMC's (the gradient at the current θ, and θ, the gradient and p saved to restore an abandoned
/// step).
pub type SgNphmcWorkspace<'a, T> = HmcWorkspace<'a, T>;

/// SG-NPHMC (004 §3.4, Alg. 4): stochastic-gradient Nosé–Poincaré dynamics integrated by the
/// generalized leapfrog, with p and q redrawn before every block of L steps.
///
/// The dynamics, the derived update and where it departs from the printed eq. 7 are in the
/// docs of the integrator module (`src/integrator/generalized_leapfrog.rs`), reproduced here:
///
/// ```text
/// H_NP = s [ Ũ(θ) + pᵀM⁻¹p/(2s²) + q²/(2Q) + g ln s − H₀ ],  g = D = dim θ, k_B T = 1
///
/// p½ = (p − ε/2 · s ∇Ũ(θ)) ⊘ (1 + ε B M⁻¹/(2√s))
/// ε/(4Q) q½² + (1 + εAs/(2Q)) q½ − [q + ε/2 (−Ũ(θ) + p½ᵀM⁻¹p½/(2s²) − g(1 + ln s) + H₀)] = 0
///     q½ = 2c/(b + √(b² + 4ac))   (the root → the explicit update as ε → 0)
/// s′ = s (1 + εq½/(2Q)) / (1 − εq½/(2Q))          (s′ = s + ε/2 · q½/Q · (s + s′))
/// θ′ = θ + ε/2 (1/s + 1/s′) M⁻¹ p½                 (print: ε, p instead of ε/2, p½)
/// p′ = p½ − ε/2 [ s′ ∇Ũ(θ′) + (B/√s′) M⁻¹ p½ ]
/// q′ = q½ + ε/2 [ −Ũ(θ′) + p½ᵀM⁻¹p½/(2s′²) − g(1 + ln s′) − q½²/(2Q) − A s′ q½/Q + H₀ ]
///                                                 (print: A s′ q½/(2Q))
/// ```
///
/// # The sampler
///
/// Each [`step`](Sampler::step) is one sample of Alg. 4: draw p ~ N(0, M), q ~ N(0, Q), reset
/// s = 1 and set H₀ = Ũ(θ) + ½pᵀM⁻¹p + q²/(2Q), so that H_NP = 0 (Bond, Leimkuhler & Laird 1999
/// choose H₀ the same way); then L generalized-leapfrog steps. Alg. 4 does not say what happens
/// to s; resetting it to 1 makes the drawn p the physical momentum p/s, so it is drawn from the
/// right distribution. On the level set H_NP = 0 the dynamics in the physical variables
/// (θ, p/s, q) are Nosé–Hoover's with friction q/Q, which (with A = B = 0 and g = D) leave
/// exp(−U(θ) − ½(p/s)ᵀM⁻¹(p/s) − q²/(2Q)) invariant: θ is sampled from exp(−U) up to the
/// integrator's O(ε²) error. [`integrate`](SgNphmc::integrate) runs the leapfrog without the
/// redraw (the inner loop of Alg. 5, or plain Nosé–Poincaré dynamics); [`block`](SgNphmc::block)
/// is one Alg. 4 block with any number of steps.
///
/// # SG-NPHMC-EM (Alg. 5) and why its default E-step is an Alg. 4 block
///
/// Wrapped in [`crate::adapt::Mcem`], SG-NPHMC learns M and Q. The printed Alg. 5 never
/// redraws p, q or s, and is not stationary for θ: without noise it is deterministic
/// Nosé–Hoover dynamics (not ergodic on a Gaussian); with the noise terms the SDE of the proof
/// of Proposition 2 (004 App. 6.2.2) is dz = (J − D)∇H_NP dt + √(2D) dW with
/// D = diag(0, √s B, 0, A), whose Fokker–Planck equation has the stationary solution e^{−H_NP}
/// on (θ, p, s, q) — the proof's own claim — and the θ-marginal of e^{−H_NP} is
/// ∝ ∫ s^{(D−1)/2} e^{−s(U(θ) − H₀) − g s ln s} ds, not e^{−U(θ)}. Measured: Var θ ≈ 2.6 against
/// 1 on a correlated Gaussian. The wrapper's default E-step is therefore one Alg. 4 block
/// ([`crate::adapt::NphmcEStep::Redraw`]: redraw p ~ N(0, M), q ~ N(0, Q), s = 1, H_NP = 0,
/// then LP_S steps), a departure from the print; the printed E-step is
/// [`crate::adapt::NphmcEStep::Printed`]. The full derivation and the measurements are in the
/// docs of [`crate::adapt::NphmcEStep`].
///
/// The model is an [`Energy`]: every leapfrog step evaluates one (stochastic) gradient ∇Ũ and
/// one value Ũ at the new θ, both cached between steps. The paper's noise corrections are used
/// as its SDE states them (004 App. 6.2.2): −(B/√s) M⁻¹p on p and −A s q/Q on q. Note that
/// for a gradient noise of variance 2B/ε the exact fluctuation–dissipation balance in the
/// physical momentum p/s would need the friction B M⁻¹p; the two agree at s = 1.
///
/// [`StepStats::thermostat`] reports q/Q after the step (the Nosé–Hoover friction it is
/// equivalent to) and `kinetic_temperature` the physical (p/s)ᵀM⁻¹(p/s)/D.
///
/// # Errors
///
/// A non-finite gradient ([`StepError::NonFiniteGradient`]) or value
/// ([`StepError::NonFiniteEnergy`]), or a thermostat update without an admissible solution
/// ([`StepError::ThermostatBreakdown`]: no real root of the quadratic, or s′ ≤ 0), abandons the
/// whole step: θ, p, s, q, H₀ and the cached gradient are restored bit for bit. A non-finite p
/// or q at the end of a step is [`StepError::NonFiniteState`] (the state is left as computed).
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::{Model, sampler::{SgNphmc, SgNphmcParams, SgNphmcWorkspace, Sampler}};
/// let (mut theta, mut p) = ([1.0f64; 2], [0.0; 2]);
/// let (mut g, mut t0, mut g0, mut p0) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
/// let mut model = Model::new(
///     |t: &[f64], g: &mut [f64]| g.copy_from_slice(t),
///     |t: &[f64]| 0.5 * t.iter().map(|x| x * x).sum::<f64>(),
/// );
/// let params = SgNphmcParams::new(0.05, 1.0, 0.0, 0.0, 20).unwrap();
/// let work = SgNphmcWorkspace::new(&mut g, &mut t0, &mut g0, &mut p0);
/// let mut smp = SgNphmc::new(params, None, &mut theta, &mut p, work).unwrap();
/// let mut rng = Pcg64::new(1, 1);
/// smp.step(&mut model, &mut rng).unwrap();
/// // H_NP = 0 at the start of the block, and the leapfrog keeps it near 0.
/// assert!(smp.hamiltonian().unwrap().abs() < 1e-2);
/// ```
#[derive(Debug)]
pub struct SgNphmc<'a, T> {
    params: SgNphmcParams<T>,
    mass: MassBuffer<'a, T>,
    inv_mass_p: &'a mut [T],
    theta: &'a mut [T],
    p: &'a mut [T],
    grad: &'a mut [T],
    saved_theta: &'a mut [T],
    saved_grad: &'a mut [T],
    saved_p: &'a mut [T],
    s: T,
    q: T,
    /// H₀, once set (cleared when θ or p are changed from outside).
    h0: Option<T>,
    /// Ũ at the current θ, once known (with `grad` then holding ∇Ũ(θ)).
    energy: Option<T>,
}

impl<'a, T: Real> SgNphmc<'a, T> {
    /// Borrows θ (finite), p (finite), the diagonal inverse mass M⁻¹ (`None` for the identity;
    /// every entry finite and > 0) and the workspace; all of one length ≥ 1. The thermostat
    /// starts at s = 1, q = 0.
    pub fn new(
        params: SgNphmcParams<T>,
        inv_mass: Option<&'a [T]>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: SgNphmcWorkspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        check_layout(theta, momentum, inv_mass, &work, true)?;
        Self::build(params, MassBuffer::shared(inv_mass), theta, momentum, work)
    }

    /// As [`SgNphmc::new`] with any mass (identity, diagonal, or dense when B = 0), changeable
    /// in place through [`AdaptiveMass`] (SG-NPHMC-EM: wrap it in [`crate::adapt::Mcem`]). A
    /// dense mass needs [`HmcWorkspace::with_mass_scratch`]; with B > 0 it is
    /// [`LayoutError::UnsupportedMass`] (the implicit friction of the first half kick would be a
    /// d × d solve per step).
    pub fn with_mass(
        params: SgNphmcParams<T>,
        mass: MassBuffer<'a, T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: SgNphmcWorkspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        check_layout(theta, momentum, None, &work, true)?;
        check_mass(mass.mass(), theta.len(), work.inv_mass_p, false)?;
        if mass.mass().shape() == MassShape::Dense && params.gradient_noise > T::ZERO {
            return Err(LayoutError::UnsupportedMass);
        }
        Self::build(params, mass, theta, momentum, work)
    }

    fn build(
        params: SgNphmcParams<T>,
        mass: MassBuffer<'a, T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: SgNphmcWorkspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        Ok(SgNphmc {
            params,
            mass,
            inv_mass_p: work.inv_mass_p,
            theta,
            p: momentum,
            grad: work.gradient,
            saved_theta: work.saved_theta,
            saved_grad: work.saved_gradient,
            saved_p: work.saved_momentum,
            s: T::ONE,
            q: T::ZERO,
            h0: None,
            energy: None,
        })
    }

    /// The parameters.
    pub fn params(&self) -> SgNphmcParams<T> {
        self.params
    }

    /// Sets the thermostat mass Q (finite, > 0; else [`ParamError`] for
    /// [`Param::ThermostatMass`] and Q unchanged). H₀ is reset so that H_NP = 0 at the next
    /// step or integrate (SG-NPHMC-EM learns Q, 004 Alg. 5).
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
        self.energy.map(|_| &*self.grad)
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

    /// H_NP (004 eq. 6) at the current state, with the cached Ũ(θ); `None` before the first
    /// step or integrate (no Ũ or H₀ yet) or after [`phase_mut`](ChainState::phase_mut).
    pub fn hamiltonian(&self) -> Option<T> {
        let (u, h0) = (self.energy?, self.h0?);
        Some(nose_poincare_energy(
            self.p,
            self.mass.mass(),
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
        NpConstants {
            eps: prm.step_size,
            q_mass: prm.thermostat_mass,
            a: prm.energy_noise,
            b: prm.gradient_noise,
            g: T::from_usize(self.theta.len()),
            h0,
        }
    }

    /// Ũ and ∇Ũ at the current θ, evaluated if not cached.
    fn ensure_energy<M: Energy<T> + ?Sized>(&mut self, model: &mut M) -> Result<T, StepError> {
        if let Some(u) = self.energy {
            return Ok(u);
        }
        checked_gradient(model, self.theta, self.grad)?;
        let u = model.energy(self.theta);
        if !u.is_finite() {
            return Err(StepError::NonFiniteEnergy);
        }
        self.energy = Some(u);
        Ok(u)
    }

    /// Draws p ~ N(0, M) and q ~ N(0, Q) and resets s = 1 (H₀ is then stale).
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        draw_mass_momentum(rng, self.p, self.mass.mass());
        self.q = self.params.thermostat_mass.sqrt() * T::standard_normal(rng);
        self.s = T::ONE;
        self.h0 = None;
    }

    /// The H₀ that makes H_NP = 0 at the current state.
    fn zero_level(&self, u: T) -> T {
        let q_mass = self.params.thermostat_mass;
        u + kinetic2_mass(self.p, self.mass.mass()) / (T::TWO * self.s * self.s)
            + self.q * self.q / (T::TWO * q_mass)
            + T::from_usize(self.theta.len()) * self.s.ln()
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
        let u = self.ensure_energy(model)?;
        if self.h0.is_none() {
            self.h0 = Some(self.zero_level(u));
        }
        self.save();
        let saved = (self.s, self.q, self.h0, self.energy);
        if let Err(e) = self.leapfrog(model, steps) {
            self.restore(saved);
            return Err(e);
        }
        self.check_state()
    }

    /// One Alg. 4 block of `steps` leapfrog steps (what [`step`](Sampler::step) does with
    /// `steps` = L): draw p ~ N(0, M), q ~ N(0, Q), reset s = 1, set H₀ so that H_NP = 0, then
    /// `steps` generalized-leapfrog steps. It is also the default E-step of SG-NPHMC-EM
    /// (`sgmcmc::adapt::NphmcEStep::Redraw`, a departure from the printed Alg. 5 that makes it
    /// stationary). Errors as for [`step`](Sampler::step), with the pre-draw state restored.
    pub fn block<M: Energy<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError> {
        let u = self.ensure_energy(model)?;
        self.save();
        let saved = (self.s, self.q, self.h0, self.energy);
        self.draw(rng);
        self.h0 = Some(self.zero_level(u));
        if let Err(e) = self.leapfrog(model, steps) {
            self.restore(saved);
            return Err(e);
        }
        self.check_state()?;
        let mut stats = StepStats::new(self.params.step_size);
        let n = T::from_usize(self.theta.len());
        stats.kinetic_temperature =
            Some(kinetic2_mass(self.p, self.mass.mass()) / (self.s * self.s * n));
        stats.thermostat = Some(self.q / self.params.thermostat_mass);
        Ok(stats)
    }

    fn save(&mut self) {
        self.saved_theta.copy_from_slice(self.theta);
        self.saved_grad.copy_from_slice(self.grad);
        self.saved_p.copy_from_slice(self.p);
    }

    #[allow(clippy::type_complexity)]
    fn restore(&mut self, (s, q, h0, energy): (T, T, Option<T>, Option<T>)) {
        self.theta.copy_from_slice(self.saved_theta);
        self.grad.copy_from_slice(self.saved_grad);
        self.p.copy_from_slice(self.saved_p);
        self.s = s;
        self.q = q;
        self.h0 = h0;
        self.energy = energy;
    }

    /// `steps` leapfrog steps with the current H₀ (set) and cached Ũ (known).
    fn leapfrog<M: Energy<T> + ?Sized>(
        &mut self,
        model: &mut M,
        steps: u32,
    ) -> Result<(), StepError> {
        let (Some(h0), Some(u)) = (self.h0, self.energy) else {
            return Ok(());
        };
        let c = self.constants(h0);
        let mut x = NpScalars {
            s: self.s,
            q: self.q,
            u,
        };
        for _ in 0..steps {
            generalized_leapfrog_step(
                self.theta,
                self.p,
                self.grad,
                self.mass.mass(),
                self.inv_mass_p,
                &mut x,
                &c,
                model,
            )?;
        }
        self.s = x.s;
        self.q = x.q;
        self.energy = Some(x.u);
        Ok(())
    }

    fn check_state(&self) -> Result<(), StepError> {
        if let Some(index) = first_non_finite(self.p) {
            return Err(StepError::NonFiniteState {
                buffer: Buffer::Momentum,
                index,
            });
        }
        if !self.q.is_finite() {
            return Err(StepError::NonFiniteState {
                buffer: Buffer::Thermostat,
                index: 0,
            });
        }
        Ok(())
    }
}

impl<T: Real, M: Energy<T> + ?Sized> Sampler<T, M> for SgNphmc<'_, T> {
    /// One sample of Alg. 4: redraw p, q (s = 1, H_NP = 0), then L generalized-leapfrog steps
    /// ([`SgNphmc::block`] with L from the parameters).
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        self.block(model, rng, self.params.steps)
    }
}

impl<T: Real> ChainState<T> for SgNphmc<'_, T> {
    fn position(&self) -> &[T] {
        self.theta
    }

    /// The (virtual) momentum p; the physical momentum is p/s ([`SgNphmc::thermostat`]).
    fn momentum(&self) -> &[T] {
        self.p
    }

    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        self.energy = None;
        self.h0 = None;
        (self.theta, self.p)
    }

    /// Draws p ~ N(0, M), q ~ N(0, Q) and resets s = 1; H₀ is reset at the next step.
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.draw(rng);
    }
}

impl<T: Real> AdaptiveMass<T> for SgNphmc<'_, T> {
    fn mass(&self) -> Mass<'_, T> {
        self.mass.mass()
    }
    /// Replaces M⁻¹; H₀ is reset so that H_NP = 0 at the next step or integrate (H_NP depends on
    /// M).
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        self.mass.set_inverse_mass(inv_mass)?;
        self.h0 = None;
        Ok(())
    }
}
