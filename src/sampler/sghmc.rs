//! Stochastic gradient Hamiltonian Monte Carlo (SGHMC; Chen, Fox & Guestrin 2014, as in Chen 2016, Alg. 2).

use super::MassKind;
use super::run::{Sampler, StepStats};
use super::shell::{Shell, mass_adaptive, shell_chain_state, shell_checkpoint};
use crate::error::{Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::sde::ConstantFriction;
use crate::integrator::{Integrator, IntegratorChoice};
use crate::kinetic::MassBuffer;
use crate::real::Real;
use crate::validate::{non_negative, positive};
use rand_core::Rng;

/// The settings of SGHMC. Build with [`SghmcParams::new`] and the `with_*` methods; they are
/// checked when the sampler is built ([`SghmcParams::validate`]).
///
/// | setting | meaning | default |
/// | --- | --- | --- |
/// | h | step size | (required) |
/// | A | friction, A ≥ 0 | 1 (ours; the stationary law does not depend on A, the mixing does) |
/// | B̂ | gradient-noise estimate, 0 ≤ B̂ ≤ A | 0 |
/// | integrator | Euler or splitting, at run time ([`Integrator`]) or compile time ([`Euler`](crate::integrator::Euler), [`Splitting`](crate::integrator::Splitting)) | splitting |
///
/// ```
/// use sgmcmc::prelude::*;
///
/// let params = SghmcParams::new(0.01f64);
/// assert_eq!((params.friction(), params.noise_estimate()), (1.0, 0.0));
/// assert_eq!(params.integrator(), Integrator::Splitting);
/// let params = params.with_friction(5.0).with_noise_estimate(0.5).with_integrator(Euler);
/// assert!(params.validate().is_ok());
/// // B̂ > A is refused, when the sampler is built or by `validate`.
/// assert!(SghmcParams::new(0.01f64).with_noise_estimate(2.0).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SghmcParams<T, I = Integrator> {
    h: T,
    friction: T,
    noise_estimate: T,
    integrator: I,
    temperature: T,
}

impl<T: Real> SghmcParams<T> {
    /// Step size h with the defaults of the table.
    pub fn new(h: T) -> Self {
        SghmcParams {
            h,
            friction: T::ONE,
            noise_estimate: T::ZERO,
            integrator: Integrator::Splitting,
            temperature: T::ONE,
        }
    }

    /// The learning-rate form of Chen 2016 ("reparametrize SGHMC"): learning rate η = h²,
    /// momentum weight α = Ah ∈ \[0, 1\], noise estimate β̂ = B̂h ∈ \[0, α\], Euler integrator
    /// (the form's own scheme). The sampler's momentum p is the paper's velocity u divided by h
    /// (u = p h); the chain of θ is identical.
    ///
    /// ```
    /// use sgmcmc::sampler::SghmcParams;
    /// let p = SghmcParams::from_learning_rate(1e-4f64, 0.1, 0.0).unwrap();
    /// assert!((p.step_size() - 1e-2).abs() < 1e-15);
    /// assert!((p.friction() - 10.0).abs() < 1e-12);
    /// ```
    pub fn from_learning_rate(eta: T, alpha: T, beta_hat: T) -> Result<Self, ParamError> {
        let eta = positive(eta, Param::StepSize)?;
        let alpha = non_negative(alpha, Param::MomentumWeight)?;
        if alpha > T::ONE {
            return Err(ParamError::OutOfRange(Param::MomentumWeight));
        }
        let h = eta.sqrt();
        let params = Self::new(h)
            .with_friction(alpha / h)
            .with_noise_estimate(non_negative(beta_hat, Param::NoiseEstimate)? / h)
            .with_integrator(Integrator::Euler);
        params.validate()?;
        Ok(params)
    }
}

impl<T: Real, I: IntegratorChoice> SghmcParams<T, I> {
    /// Sets the friction A ≥ 0.
    pub fn with_friction(self, friction: T) -> Self {
        SghmcParams { friction, ..self }
    }

    /// Sets the gradient-noise estimate 0 ≤ B̂ ≤ A: the injected noise is √(2(A − B̂)h) per
    /// coordinate (Ding et al. 2014, eq. 3), so B̂ may not exceed A.
    pub fn with_noise_estimate(self, noise_estimate: T) -> Self {
        SghmcParams {
            noise_estimate,
            ..self
        }
    }

    /// Sets the integrator: an [`Integrator`] value, or [`Euler`](crate::integrator::Euler) /
    /// [`Splitting`](crate::integrator::Splitting) to compile in that scheme alone.
    pub fn with_integrator<J: IntegratorChoice>(self, integrator: J) -> SghmcParams<T, J> {
        SghmcParams {
            h: self.h,
            friction: self.friction,
            noise_estimate: self.noise_estimate,
            integrator,
            temperature: self.temperature,
        }
    }

    /// Sets the temperature T ≥ 0 of the tempered posterior e^{−U/T} (default 1; 0: SGD with
    /// momentum). The injected noise becomes √(2(AT − B̂)h), so B̂ ≤ AT. See
    /// [`Tempered`](crate::sampler::Tempered).
    pub fn with_temperature(self, temperature: T) -> Self {
        SghmcParams {
            temperature,
            ..self
        }
    }

    /// Checks h > 0, A ≥ 0, T ≥ 0 and 0 ≤ B̂ ≤ AT (B̂ ≤ A at T = 1), all finite; the error
    /// names the first bad setting.
    pub fn validate(&self) -> Result<(), ParamError> {
        positive(self.h, Param::StepSize)?;
        let friction = non_negative(self.friction, Param::Friction)?;
        let temperature = crate::sampler::check_temperature(self.temperature)?;
        if non_negative(self.noise_estimate, Param::NoiseEstimate)? > friction * temperature {
            return Err(ParamError::OutOfRange(Param::NoiseEstimate));
        }
        Ok(())
    }

    /// T
    pub fn temperature(&self) -> T {
        self.temperature
    }

    /// h
    pub fn step_size(&self) -> T {
        self.h
    }
    /// A
    pub fn friction(&self) -> T {
        self.friction
    }
    /// B̂
    pub fn noise_estimate(&self) -> T {
        self.noise_estimate
    }
    /// The integrator.
    pub fn integrator(&self) -> Integrator {
        self.integrator.integrator()
    }
}

/// SGHMC: second-order Langevin dynamics with constant friction A and injected noise that
/// discounts the estimated gradient noise B̂ (Ding et al. 2014, eq. 3):
///
/// ```text
/// dθ = M⁻¹p dt,   dp = −∇Ũ(θ) dt − A M⁻¹p dt + √(2(A − B̂)) dW
/// ```
///
/// Euler is Chen 2016, Alg. 2 (Roychowdhury & Parthasarathy 2017, Alg. 3 with a mass); the
/// splitting scheme solves the friction exactly, p ← exp(−At M⁻¹)p. The momentum is stationary
/// at N(0, M) (`docs/sgnht-mass-thermostat.md`). When the gradient noise has variance 2Bh per
/// step but B̂ < B, the momentum heats up: the kinetic temperature settles near (A + B − B̂)/A
/// (Ding et al. 2014, §2); SGNHT removes the need to know B. The mass is the identity unless
/// [`Sghmc::set_mass`] gives one (diagonal or dense, adaptable in place for SGHMC-EM).
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// let (mut theta, mut p, mut work) = ([0.0f32; 3], [0.0; 3], [0.0; 6]);
/// let mut sampler = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
/// let mut rng = Pcg64::new(7, 11);
/// let mut model = |t: &[f32], g: &mut [f32]| g.copy_from_slice(t);
/// let stats = sampler.step(&mut model, &mut rng).unwrap();
/// assert!(stats.kinetic_temperature.unwrap() >= 0.0);
/// ```
#[derive(Debug)]
pub struct Sghmc<'a, T, I = Integrator, M = MassBuffer<'a, T>> {
    params: SghmcParams<T, I>,
    shell: Shell<'a, T, M, I>,
}

impl<'a, T: Real, I: IntegratorChoice> Sghmc<'a, T, I> {
    /// Borrows θ and p (initial values, finite, of one length n ≥ 1) and the workspace
    /// (`workspace_len(n)` = 2n entries); the mass is the identity, replaceable at run time
    /// ([`Sghmc::set_mass`]) or fixed to one shape at compile time ([`Sghmc::with_mass`]).
    pub fn new(
        params: SghmcParams<T, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: &'a mut [T],
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
        Ok(Sghmc { params, shell })
    }
}

impl<'a, T: Real> Sghmc<'a, T> {
    /// The workspace length for n coordinates: 2n (the gradient, then scratch).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(2)
    }
}

impl<'a, T: Real, I: IntegratorChoice, M: MassKind<T>> Sghmc<'a, T, I, M> {
    /// Uses the mass `mass` (with the default run-time [`MassBuffer`]: identity, diagonal or
    /// dense; adaptable in place through [`AdaptiveMass`](crate::kinetic::AdaptiveMass)). A
    /// dense mass runs with the splitting integrator only when built with its
    /// eigendecomposition ([`MassBuffer::dense_with_eigen`]; [`LayoutError::UnsupportedMass`]
    /// otherwise). On an error the sampler keeps its mass.
    pub fn set_mass(&mut self, mass: M) -> Result<(), LayoutError> {
        self.shell.set_mass(mass)
    }

    /// The same sampler with the mass `mass` of another kind: a shape fixed at
    /// compile time ([`IdentityMass`](crate::kinetic::IdentityMass),
    /// [`DiagonalMass`](crate::kinetic::DiagonalMass), [`DenseMass`](crate::kinetic::DenseMass)),
    /// whose step links that shape's code alone, or a [`MassBuffer`]. Checked as
    /// [`Sghmc::set_mass`]; on an error the sampler is dropped (its buffers are free again).
    pub fn with_mass<M2: MassKind<T>>(self, mass: M2) -> Result<Sghmc<'a, T, I, M2>, LayoutError> {
        Ok(Sghmc {
            params: self.params,
            shell: self.shell.with_mass(mass)?,
        })
    }

    /// The parameters.
    pub fn params(&self) -> SghmcParams<T, I> {
        self.params
    }
}

impl<T: Real, I: IntegratorChoice, M: MassKind<T>, G: Gradient<T> + ?Sized> Sampler<T, G>
    for Sghmc<'_, T, I, M>
{
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        // Friction A, injected diffusion A − B̂ (the settings' fixed estimate).
        let discount = super::discount::Discount {
            friction: self.params.friction,
            removed: self.params.noise_estimate,
            theta_estimates: &[],
        };
        super::discount::DiscountedStep::step_discounted(self, discount, model, rng)
    }
}

/// The estimate replaces the settings' B̂: friction A′, injected noise √(2(A′ − c)h).
impl<T: Real, I: IntegratorChoice, M: MassKind<T>> super::discount::DiscountedStep<T>
    for Sghmc<'_, T, I, M>
{
    const MOMENTUM: bool = true;
    fn injected_diffusion(&self) -> T {
        self.params.friction
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
        let friction_law = ConstantFriction(discount.friction);
        // At temperature T the diffusion that balances the friction A is AT (`docs/temperature.md`;
        // A·1 = A exactly).
        let diffusion = discount.friction * self.params.temperature - discount.removed;
        let h = self.params.h;
        let (_, stats) = self
            .shell
            .step_gaussian(friction_law, diffusion, h, model, rng)?;
        Ok(stats)
    }
}

shell_chain_state!(['a, T: Real, I: IntegratorChoice, M: MassKind<T>] Sghmc<'a, T, I, M>);
mass_adaptive!(['a, T: Real, I: IntegratorChoice, M: MassKind<T>] Sghmc<'a, T, I, M>, shell.kinetics);

shell_checkpoint!(['a, T: Real, I: IntegratorChoice, M: MassKind<T>] Sghmc<'a, T, I, M>);
/// MCEM's rollback: θ, p and the redraw counters (all in the shell).
impl<T: Real, I: IntegratorChoice, M: MassKind<T>> super::Rollback<T> for Sghmc<'_, T, I, M> {
    fn save_state(&self, saved: &mut super::SavedState<'_, T>) {
        self.shell.save_state(saved);
    }
    fn restore_state(&mut self, saved: &super::SavedState<'_, T>) {
        self.shell.restore_state(saved);
    }
}

super::temperature_from_params!([T: Real, I: IntegratorChoice, M: MassKind<T>] Sghmc<'_, T, I, M>);
super::schedule::step_size_from_params!(
    [T: Real, I: IntegratorChoice, M: MassKind<T>] Sghmc<'_, T, I, M>,
    SghmcParams,
    h
);
