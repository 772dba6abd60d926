//! Stochastic gradient Nosé–Hoover thermostats: SGNHT (one scalar ξ; Ding et al. 2014) and mSGNHT (one ξᵢ per coordinate; Li et al. 2016).

use super::MassKind;
use super::run::{Sampler, StepStats};
use super::shell::{Shell, copy_thermostat, mass_adaptive, shell_chain_state, shell_checkpoint};
use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::sde::{NoseLaw, PerCoordinate, ScalarThermostat, UnitMass};
use crate::integrator::state::{check_finite, check_len};
use crate::integrator::{Integrator, IntegratorChoice, ThermostatRule};
use crate::kinetic::MassBuffer;
use crate::real::Real;
use crate::validate::{non_negative, positive};
use rand_core::Rng;

/// The settings of SGNHT and mSGNHT. Build with [`SgnhtParams::new`] and the `with_*` methods;
/// they are checked when the sampler is built ([`SgnhtParams::validate`]).
///
/// | setting | meaning | default |
/// | --- | --- | --- |
/// | h | step size | (required) |
/// | A | injected diffusion, A ≥ 0 (D in Li et al. 2016); A = 0 lets the thermostat absorb the gradient noise alone (Ding et al. 2014, §3) | 1 |
/// | integrator | Euler or splitting, at run time ([`Integrator`]) or compile time ([`Euler`](crate::integrator::Euler), [`Splitting`](crate::integrator::Splitting)) | splitting |
/// | thermostat rule | SGNHT with a non-identity mass only ([`ThermostatRule`]) | derived |
///
/// The papers start the thermostat at ξ₀ = A (Ding et al. 2014, Alg. 1),
/// [`SgnhtParams::initial_thermostat`], and so does [`Sgnht::new`] ([`Sgnht::resume`] keeps the
/// buffer's ξ).
///
/// ```
/// use sgmcmc::prelude::*;
///
/// let params = SgnhtParams::new(0.01f64);
/// assert_eq!(params.diffusion(), 1.0);
/// assert_eq!(params.integrator(), Integrator::Splitting);
/// assert_eq!(params.thermostat_rule(), ThermostatRule::Derived);
/// // A = 0: the thermostat alone absorbs the gradient noise; ξ starts at A.
/// let params = params.with_diffusion(0.0).with_integrator(Euler);
/// assert_eq!(params.initial_thermostat(), 0.0);
/// assert!(SgnhtParams::new(-0.01f64).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgnhtParams<T, I = Integrator> {
    h: T,
    diffusion: T,
    integrator: I,
    rule: ThermostatRule,
    temperature: T,
}

impl<T: Real> SgnhtParams<T> {
    /// Step size h with the defaults of the table.
    pub fn new(h: T) -> Self {
        SgnhtParams {
            h,
            diffusion: T::ONE,
            integrator: Integrator::Splitting,
            rule: ThermostatRule::Derived,
            temperature: T::ONE,
        }
    }

    /// The reformulated parameters of Ding et al. 2014, Alg. 2: learning rate η = h² and
    /// a = Ah, with the Euler integrator (Alg. 2's scheme). Alg. 2's state is u = p h and
    /// α = ξ h; the chain of θ is Alg. 1's with h = √η and A = a/√η.
    ///
    /// ```
    /// use sgmcmc::sampler::SgnhtParams;
    /// let p = SgnhtParams::from_reformulated(4e-6f64, 0.01).unwrap();
    /// assert!((p.step_size() - 2e-3).abs() < 1e-15);
    /// assert!((p.diffusion() - 5.0).abs() < 1e-12);
    /// ```
    pub fn from_reformulated(eta: T, a: T) -> Result<Self, ParamError> {
        let h = positive(eta, Param::StepSize)?.sqrt();
        let params = Self::new(h)
            .with_diffusion(non_negative(a, Param::Diffusion)? / h)
            .with_integrator(Integrator::Euler);
        params.validate()?;
        Ok(params)
    }
}

impl<T: Real, I: IntegratorChoice> SgnhtParams<T, I> {
    /// Sets the diffusion A ≥ 0.
    pub fn with_diffusion(self, diffusion: T) -> Self {
        SgnhtParams { diffusion, ..self }
    }

    /// Sets the integrator: an [`Integrator`] value, or [`Euler`](crate::integrator::Euler) /
    /// [`Splitting`](crate::integrator::Splitting) to compile in that scheme alone.
    pub fn with_integrator<J: IntegratorChoice>(self, integrator: J) -> SgnhtParams<T, J> {
        SgnhtParams {
            h: self.h,
            diffusion: self.diffusion,
            integrator,
            rule: self.rule,
            temperature: self.temperature,
        }
    }

    /// Sets the temperature T ≥ 0 of the tempered posterior e^{−U/T} (default 1): the injected
    /// noise becomes √(2ATh) and the thermostat's target kinetic temperature T. See
    /// [`Tempered`](crate::sampler::Tempered).
    pub fn with_temperature(self, temperature: T) -> Self {
        SgnhtParams {
            temperature,
            ..self
        }
    }

    /// T
    pub fn temperature(&self) -> T {
        self.temperature
    }

    /// Sets SGNHT's thermostat rule for a non-identity mass (no effect for M = I, where both
    /// rules agree, nor for mSGNHT, which takes no mass).
    pub fn with_thermostat_rule(self, rule: ThermostatRule) -> Self {
        SgnhtParams { rule, ..self }
    }

    /// Checks h > 0 and A ≥ 0, both finite; the error names the first bad setting.
    pub fn validate(&self) -> Result<(), ParamError> {
        positive(self.h, Param::StepSize)?;
        non_negative(self.diffusion, Param::Diffusion)?;
        crate::sampler::check_temperature(self.temperature)?;
        Ok(())
    }

    /// The papers' starting thermostat ξ₀ = A.
    pub fn initial_thermostat(&self) -> T {
        self.diffusion
    }

    /// h
    pub fn step_size(&self) -> T {
        self.h
    }
    /// A
    pub fn diffusion(&self) -> T {
        self.diffusion
    }
    /// The integrator.
    pub fn integrator(&self) -> Integrator {
        self.integrator.integrator()
    }
    /// The thermostat rule.
    pub fn thermostat_rule(&self) -> ThermostatRule {
        self.rule
    }
}

/// SGNHT: the stochastic gradient Nosé–Hoover thermostat with one scalar ξ (Ding et al. 2014,
/// eqs. 5–6):
///
/// ```text
/// dθ = M⁻¹p dt,   dp = −∇Ũ(θ) dt − ξ M⁻¹p dt + √(2A) dW,   dξ = (pᵀp/n − 1) dt  (M = I)
/// ```
///
/// ξ adapts until the kinetic temperature averages 1, which makes the sampler correct for
/// unknown isotropic gradient noise: with noise of variance 2Bh per step, ξ settles near A + B.
/// ξ lives in the caller's one-entry buffer. With a mass ([`Sgnht::set_mass`]; SGNHT-EM,
/// Roychowdhury & Parthasarathy 2017, Alg. 2) the thermostat follows [`ThermostatRule`], by
/// default a rule derived from the Fokker–Planck equation rather than the printed one
/// (`docs/sgnht-mass-thermostat.md`).
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// let params = SgnhtParams::new(0.05).with_integrator(Integrator::Euler);
/// let (mut theta, mut p, mut xi, mut work) = ([0.0f64; 5], [0.0; 5], [0.0; 1], [0.0; 10]);
/// let mut sampler = Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
/// assert_eq!(sampler.thermostat(), params.initial_thermostat()); // ξ₀ = A
/// let mut rng = Pcg64::new(3, 5);
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
/// sampler.step(&mut model, &mut rng).unwrap();
/// assert!(sampler.thermostat().is_finite());
/// ```
#[derive(Debug)]
pub struct Sgnht<'a, T, I = Integrator, M = MassBuffer<'a, T>> {
    params: SgnhtParams<T, I>,
    shell: Shell<'a, T, M, I>,
    xi: &'a mut T,
}

impl<'a, T: Real, I: IntegratorChoice> Sgnht<'a, T, I> {
    /// Starts a chain: borrows θ, p (finite, one length n ≥ 1), the thermostat ξ (a buffer of
    /// one entry, like mSGNHT's n: [`crate::Lengths::sgnht`]) and the workspace
    /// (`workspace_len(n)` = 2n), and sets ξ to the papers' start ξ₀ = A
    /// ([`SgnhtParams::initial_thermostat`]; Ding et al. 2014, Alg. 1) — whatever the buffer
    /// held, which [`Sgnht::resume`] keeps instead. The mass is the identity, replaceable at
    /// run time ([`Sgnht::set_mass`]) or fixed to one shape at compile time
    /// ([`Sgnht::with_mass`]). On an error no buffer is written.
    pub fn new(
        params: SgnhtParams<T, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        let start = params.initial_thermostat();
        Self::build(params, theta, momentum, thermostat, work, Some(start))
    }

    /// Continues a chain whose state is in the buffers: as [`Sgnht::new`], but ξ keeps its
    /// value, which must be finite ([`Buffer::Thermostat`] otherwise).
    pub fn resume(
        params: SgnhtParams<T, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        Self::build(params, theta, momentum, thermostat, work, None)
    }

    fn build(
        params: SgnhtParams<T, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
        start: Option<T>,
    ) -> Result<Self, Error> {
        params.validate()?;
        let shell = Shell::new(
            theta,
            momentum,
            work,
            MassBuffer::identity(),
            params.integrator,
            false,
        )?;
        let found = thermostat.len();
        let [xi] = thermostat else {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::Thermostat,
                expected: 1,
                found,
            }
            .into());
        };
        match start {
            // Every check has passed: the only write of a successful build.
            Some(start) => *xi = start,
            None => check_finite(Buffer::Thermostat, core::slice::from_ref(xi))?,
        }
        Ok(Sgnht { params, shell, xi })
    }
}

impl<'a, T: Real> Sgnht<'a, T> {
    /// The workspace length for n coordinates: 2n.
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(2)
    }
}

/// θ, p, ξ and the redraw counters.
impl<T: Real, I: IntegratorChoice, M: MassKind<T>> super::Rollback<T> for Sgnht<'_, T, I, M> {
    fn save_state(&self, saved: &mut super::SavedState<'_, T>) {
        self.shell.save_state(saved);
        saved.scalars[0] = Some(*self.xi);
    }
    fn restore_state(&mut self, saved: &super::SavedState<'_, T>) {
        self.shell.restore_state(saved);
        if let Some(xi) = saved.scalars[0] {
            *self.xi = xi;
        }
    }
}

impl<'a, T: Real, I: IntegratorChoice, M: MassKind<T>> Sgnht<'a, T, I, M> {
    /// Uses the mass `mass`, as [`super::Sghmc::set_mass`].
    pub fn set_mass(&mut self, mass: M) -> Result<(), LayoutError> {
        self.shell.set_mass(mass)
    }

    /// The same sampler with the mass `mass` of another kind, as [`super::Sghmc::with_mass`].
    pub fn with_mass<M2: MassKind<T>>(self, mass: M2) -> Result<Sgnht<'a, T, I, M2>, LayoutError> {
        Ok(Sgnht {
            params: self.params,
            shell: self.shell.with_mass(mass)?,
            xi: self.xi,
        })
    }

    /// The parameters.
    pub fn params(&self) -> SgnhtParams<T, I> {
        self.params
    }

    /// The thermostat ξ.
    pub fn thermostat(&self) -> T {
        *self.xi
    }

    /// ξ as a one-entry slice, as mSGNHT and SGMGT give theirs.
    pub(crate) fn thermostat_slice(&self) -> &[T] {
        core::slice::from_ref(&*self.xi)
    }

    /// Sets ξ (to resume a chain): [`ParamError::NonFinite`] and ξ unchanged unless finite.
    pub fn set_thermostat(&mut self, xi: T) -> Result<(), ParamError> {
        if !xi.is_finite() {
            return Err(ParamError::NonFinite(Param::Thermostat));
        }
        *self.xi = xi;
        Ok(())
    }
}

impl<T: Real, I: IntegratorChoice, M: MassKind<T>, G: Gradient<T> + ?Sized> Sampler<T, G>
    for Sgnht<'_, T, I, M>
{
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let discount = undiscounted(self.params.diffusion);
        super::discount::DiscountedStep::step_discounted(self, discount, model, rng)
    }
}

/// The settings' own injected diffusion A, nothing removed (A − 0 = A exactly).
fn undiscounted<'b, T: Real>(diffusion: T) -> super::discount::Discount<'b, T> {
    super::discount::Discount {
        friction: diffusion,
        removed: T::ZERO,
        theta_estimates: &[],
    }
}

/// Injected diffusion A′ − c (the thermostat is SGNHT's own).
impl<T: Real, I: IntegratorChoice, M: MassKind<T>> super::discount::DiscountedStep<T>
    for Sgnht<'_, T, I, M>
{
    const MOMENTUM: bool = true;
    fn injected_diffusion(&self) -> T {
        self.params.diffusion
    }
    fn unit_mass(&self) -> bool {
        self.shell.kinetics.mass().shape() == crate::kinetic::MassShape::Identity
    }
    fn step_discounted<G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        discount: super::discount::Discount<'_, T>,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let SgnhtParams {
            h,
            rule,
            temperature,
            ..
        } = self.params;
        let thermostat = ScalarThermostat {
            xi: &mut *self.xi,
            rule,
            temperature,
        };
        // The injected diffusion AT (`docs/temperature.md`; A·1 = A exactly).
        let diffusion = discount.friction * temperature - discount.removed;
        let (_, mut stats) = self
            .shell
            .step_gaussian(thermostat, diffusion, h, model, rng)?;
        stats.thermostat = Some(*self.xi);
        Ok(stats)
    }
}

shell_chain_state!(['a, T: Real, I: IntegratorChoice, M: MassKind<T>] Sgnht<'a, T, I, M>);
mass_adaptive!(['a, T: Real, I: IntegratorChoice, M: MassKind<T>] Sgnht<'a, T, I, M>, shell.kinetics);

/// mSGNHT: one thermostat per coordinate (Li et al. 2016, eq. 2; Gan et al. 2015):
///
/// ```text
/// dθ = p dt,   dp = −∇Ũ(θ) dt − ξ ⊙ p dt + √(2A) dW,   dξ = (p ⊙ p − 1) dt
/// ```
///
/// Each ξᵢ adapts to the gradient noise of its own coordinate, so anisotropic noise is absorbed.
/// Euler is Li et al. §2.2 (mSGNHT-E), the splitting scheme their §3 (mSGNHT-S). The
/// thermostats live in the caller's buffer.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// let params = SgnhtParams::new(0.05);
/// let (mut theta, mut p, mut xi, mut work) = ([0.0f64; 5], [0.0; 5], [0.0; 5], [0.0; 15]);
/// let mut sampler = MSgnht::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
/// assert_eq!(sampler.thermostat(), [params.initial_thermostat(); 5]); // ξᵢ = A
/// let mut rng = Pcg64::new(3, 5);
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
/// sampler.step(&mut model, &mut rng).unwrap();
/// assert_eq!(sampler.thermostat().len(), 5);
/// ```
#[derive(Debug)]
pub struct MSgnht<'a, T, I = Integrator> {
    params: SgnhtParams<T, I>,
    shell: Shell<'a, T, UnitMass, I>,
    xi: &'a mut [T],
}

impl<'a, T: Real> MSgnht<'a, T> {
    /// The workspace length for n coordinates: 3n (the gradient, scratch, and the backup of
    /// the thermostats that undoes a step whose result is not finite).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(3)
    }
}

impl<'a, T: Real, I: IntegratorChoice> MSgnht<'a, T, I> {
    /// Starts a chain: borrows θ, p and the thermostats ξ (finite θ and p, one length n ≥ 1)
    /// and the workspace (`workspace_len(n)` = 3n), and sets every ξᵢ to the papers' start
    /// [`SgnhtParams::initial_thermostat`] = A — whatever the buffer held, which
    /// [`MSgnht::resume`] keeps instead. On an error no buffer is written.
    pub fn new(
        params: SgnhtParams<T, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        let start = params.initial_thermostat();
        Self::build(params, theta, momentum, thermostat, work, Some(start))
    }

    /// Continues a chain whose state is in the buffers: as [`MSgnht::new`], but ξ keeps its
    /// values, which must be finite ([`Buffer::Thermostat`] otherwise).
    pub fn resume(
        params: SgnhtParams<T, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        Self::build(params, theta, momentum, thermostat, work, None)
    }

    fn build(
        params: SgnhtParams<T, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
        start: Option<T>,
    ) -> Result<Self, Error> {
        params.validate()?;
        let shell = Shell::new(
            theta,
            momentum,
            work,
            UnitMass::new(),
            params.integrator,
            true,
        )?;
        check_len(Buffer::Thermostat, shell.phase.len(), thermostat.len())?;
        match start {
            // Every check has passed: the only write of a successful build.
            Some(start) => thermostat.fill(start),
            None => check_finite(Buffer::Thermostat, thermostat)?,
        }
        Ok(MSgnht {
            params,
            shell,
            xi: thermostat,
        })
    }

    /// The parameters.
    pub fn params(&self) -> SgnhtParams<T, I> {
        self.params
    }

    /// The thermostats ξ.
    pub fn thermostat(&self) -> &[T] {
        self.xi
    }

    /// Copies `xi` into the thermostats (to resume a chain). Errors, with ξ unchanged:
    /// [`LayoutError::LengthMismatch`], or [`LayoutError::InvalidValue`] at the first
    /// non-finite entry.
    pub fn set_thermostat(&mut self, xi: &[T]) -> Result<(), LayoutError> {
        copy_thermostat(self.xi, xi)
    }
}

impl<T: Real, I: IntegratorChoice, G: Gradient<T> + ?Sized> Sampler<T, G> for MSgnht<'_, T, I> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let discount = undiscounted(self.params.diffusion);
        super::discount::DiscountedStep::step_discounted(self, discount, model, rng)
    }
}

/// Injected diffusion A′ − c (the thermostats are mSGNHT's own).
impl<T: Real, I: IntegratorChoice> super::discount::DiscountedStep<T> for MSgnht<'_, T, I> {
    const MOMENTUM: bool = true;
    fn injected_diffusion(&self) -> T {
        self.params.diffusion
    }
    fn unit_mass(&self) -> bool {
        true
    }
    fn step_discounted<G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        discount: super::discount::Discount<'_, T>,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let SgnhtParams { h, temperature, .. } = self.params;
        // κᵢ = ξᵢ, dξᵢ = (pᵢ² − T) dt.
        let thermostat = PerCoordinate {
            xi: &mut *self.xi,
            law: NoseLaw(temperature),
        };
        // The injected diffusion AT (A·1 = A exactly).
        let diffusion = discount.friction * temperature - discount.removed;
        let (sums, mut stats) = self
            .shell
            .step_gaussian(thermostat, diffusion, h, model, rng)?;
        stats.thermostat = Some(sums.thermostat / self.shell.dim());
        Ok(stats)
    }
}

shell_chain_state!(['a, T: Real, I: IntegratorChoice] MSgnht<'a, T, I>);

/// θ and p; ξ and the redraw counters.
impl<T: Real, I: IntegratorChoice, M: MassKind<T>> crate::sampler::Checkpoint<T>
    for Sgnht<'_, T, I, M>
{
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.shell.checkpoint_len(&[])
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        let thermostat = Some(*self.xi);
        Ok(crate::sampler::Scalars {
            thermostat,
            ..self.shell.save(&[], out)?
        })
    }
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let xi = state.thermostat.ok_or(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index: 0,
        })?;
        self.shell.restore(&mut [], state, data)?;
        *self.xi = xi;
        Ok(())
    }
}

shell_checkpoint!(['a, T: Real, I: IntegratorChoice] MSgnht<'a, T, I>, xi);

super::schedule::step_size_from_params!(
    [T: Real, I: IntegratorChoice, M: MassKind<T>] Sgnht<'_, T, I, M>,
    SgnhtParams,
    h
);

super::schedule::step_size_from_params!(
    [T: Real, I: IntegratorChoice] MSgnht<'_, T, I>,
    SgnhtParams,
    h
);

super::temperature_from_params!([T: Real, I: IntegratorChoice, M: MassKind<T>] Sgnht<'_, T, I, M>);
super::temperature_from_params!([T: Real, I: IntegratorChoice] MSgnht<'_, T, I>);
