//! Stochastic gradient Nosé–Hoover thermostats: SGNHT (one scalar thermostat, Ding et al. 2014)
//! and mSGNHT (one thermostat per coordinate, Li et al. 2016).

use super::hmc::draw_mass_momentum;
use super::params::{non_negative, positive};
use super::stats::{ChainState, Sampler, StepStats};
use crate::error::{Buffer, LayoutError, LinalgError, Param, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::{
    Friction, Integrator, MassFriction, Phase, ThermostatRule, Workspace, check_finite, check_len,
    euler_step, mass_euler_step, mass_splitting_step, splitting_step,
};
use crate::kinetic::{AdaptiveMass, Mass, MassBuffer, MassShape};
use crate::lanes::sum_map;
use crate::real::Real;
use crate::rng::fill_standard_normal;
use rand_core::Rng;

/// Parameters of SGNHT and mSGNHT: step h and diffusion A (called D in Li et al. 2016).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgnhtParams<T> {
    h: T,
    diffusion: T,
}

impl<T: Real> SgnhtParams<T> {
    /// Step h > 0 and diffusion A ≥ 0 (the injected noise is √(2Ah) per coordinate; A = 0 injects
    /// none and lets the thermostat absorb the gradient noise alone, as in 000 §3).
    pub fn new(h: T, diffusion: T) -> Result<Self, ParamError> {
        Ok(SgnhtParams {
            h: positive(h, Param::StepSize)?,
            diffusion: non_negative(diffusion, Param::Friction)?,
        })
    }

    /// The reformulated parameters of 000 Alg. 2: learning rate η = h² and a = Ah.
    /// Alg. 2's state is u = p h and α = ξ h; the chain of θ is identical to Alg. 1's with
    /// h = √η and A = a/√η, which is what this constructor returns.
    ///
    /// ```
    /// use sgmcmc::sampler::SgnhtParams;
    /// let p = SgnhtParams::from_reformulated(4e-6f64, 0.01).unwrap();
    /// assert!((p.step_size() - 2e-3).abs() < 1e-15);
    /// assert!((p.diffusion() - 5.0).abs() < 1e-12);
    /// ```
    pub fn from_reformulated(eta: T, a: T) -> Result<Self, ParamError> {
        let h = positive(eta, Param::StepSize)?.sqrt();
        Self::new(h, non_negative(a, Param::Friction)? / h)
    }

    /// h
    pub fn step_size(&self) -> T {
        self.h
    }
    /// A (D)
    pub fn diffusion(&self) -> T {
        self.diffusion
    }
    fn noise_sd(&self) -> T {
        (T::TWO * self.diffusion * self.h).sqrt()
    }
}

/// SGNHT: the stochastic gradient Nosé–Hoover thermostat with one scalar ξ (000 eqs. 5–6):
///
/// ```text
/// dθ = p dt,   dp = −∇Ũ(θ) dt − ξ p dt + √(2A) dW,   dξ = (pᵀp/n − 1) dt
/// ```
///
/// ξ adapts until the kinetic temperature pᵀp/n averages 1, which makes the sampler correct for
/// unknown isotropic gradient noise: with noise of variance 2Bh per step, ξ settles near A + B.
/// Euler is 000 Alg. 1 (ξ₀ = A); the splitting scheme is Li et al. 2016 §3 with a scalar ξ.
///
/// **With a mass M** ([`Sgnht::with_mass`]; SGNHT-EM, 004 Alg. 2) the dynamics are
/// dθ = M⁻¹p dt, dp = −∇Ũ dt − ξ M⁻¹p dt + √(2A) dW and, departing from the print,
/// dξ = (|M⁻¹p|²/tr M⁻¹ − 1) dt: 004 Alg. 2 prints ξ ← ξ + ε(pᵀM⁻¹p/D − 1), which is not
/// stationary for a non-scalar M (derivation in `src/integrator/mass_sde.rs`; the printed rule
/// stays available through [`Sgnht::set_thermostat_rule`]). For M = mI both are pᵀM⁻¹p/D − 1 and for M = I the
/// identity path is the one above, unchanged. A dense M runs with `Integrator::Splitting` only
/// when built with `MassBuffer::dense_with_eigen` (exact friction flow), else with Euler.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::{Integrator, Workspace, sampler::{Sampler, Sgnht, SgnhtParams}};
/// let (mut theta, mut p, mut g, mut s) = ([0.0f64; 5], [0.0; 5], [0.0; 5], [0.0; 5]);
/// let mut sampler = Sgnht::new(
///     SgnhtParams::new(0.05, 1.0).unwrap(), Integrator::Euler,
///     &mut theta, &mut p, Workspace::new(&mut g, &mut s),
/// ).unwrap();
/// assert_eq!(sampler.thermostat(), 1.0); // ξ₀ = A
/// let mut rng = Pcg64::new(3, 5);
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
/// sampler.step(&mut model, &mut rng).unwrap();
/// ```
#[derive(Debug)]
pub struct Sgnht<'a, T> {
    params: SgnhtParams<T>,
    integrator: Integrator,
    phase: Phase<'a, T>,
    xi: T,
    mass: MassBuffer<'a, T>,
    inv_mass_p: &'a mut [T],
    rule: ThermostatRule,
}

impl<'a, T: Real> Sgnht<'a, T> {
    /// Borrows θ and p (initial values, finite) and the workspace; all of one length ≥ 1.
    /// The thermostat starts at ξ₀ = A (000 Alg. 1).
    pub fn new(
        params: SgnhtParams<T>,
        integrator: Integrator,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        Self::with_mass(
            params,
            integrator,
            MassBuffer::identity(),
            theta,
            momentum,
            work,
        )
    }

    /// As [`Sgnht::new`] with a mass M (identity, diagonal or dense; changeable in place through
    /// [`AdaptiveMass`]) and the derived thermostat rule ([`ThermostatRule::Derived`]). A dense
    /// mass needs [`Workspace::with_mass_scratch`], and for `Integrator::Splitting` its
    /// eigendecomposition (`MassBuffer::dense_with_eigen`; [`LayoutError::UnsupportedMass`]
    /// otherwise).
    pub fn with_mass(
        params: SgnhtParams<T>,
        integrator: Integrator,
        mass: MassBuffer<'a, T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let (phase, inv_mass_p) = Phase::with_mass(theta, momentum, work, mass.mass(), integrator)?;
        Ok(Sgnht {
            params,
            integrator,
            phase,
            xi: params.diffusion,
            mass,
            inv_mass_p,
            rule: ThermostatRule::Derived,
        })
    }

    /// Chooses the thermostat update for a non-identity mass (no effect for M = I, where both
    /// rules agree): [`ThermostatRule::Derived`] (default) or the biased
    /// [`ThermostatRule::Printed`] of 004 Alg. 2.
    pub fn set_thermostat_rule(&mut self, rule: ThermostatRule) {
        self.rule = rule;
    }

    /// The parameters.
    pub fn params(&self) -> SgnhtParams<T> {
        self.params
    }

    /// The thermostat ξ.
    pub fn thermostat(&self) -> T {
        self.xi
    }

    /// Sets ξ (for resuming a chain). Ignored unless finite.
    pub fn set_thermostat(&mut self, xi: T) {
        if xi.is_finite() {
            self.xi = xi;
        }
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> Sampler<T, G> for Sgnht<'_, T> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let (h, sd) = (self.params.h, self.params.noise_sd());
        // Work on a copy so a failed step leaves ξ unchanged.
        let mut xi = self.xi;
        let mass = self.mass.mass();
        let sum_p2 = if mass.shape() == MassShape::Identity {
            let f = Friction::Scalar(&mut xi);
            match self.integrator {
                Integrator::Euler => euler_step(&mut self.phase, f, h, sd, model, rng),
                Integrator::Splitting => splitting_step(&mut self.phase, f, h, sd, model, rng),
            }
        } else {
            let f = MassFriction::Thermostat(&mut xi, self.rule);
            match self.integrator {
                Integrator::Euler => {
                    mass_euler_step(&mut self.phase, mass, self.inv_mass_p, f, h, sd, model, rng)
                }
                Integrator::Splitting => mass_splitting_step(
                    &mut self.phase,
                    mass,
                    self.inv_mass_p,
                    f,
                    h,
                    sd,
                    model,
                    rng,
                ),
            }
        };
        let sum_p2 = match sum_p2 {
            Ok(s) => s,
            Err(e @ StepError::NonFiniteGradient { .. }) => return Err(e),
            Err(e) => {
                self.xi = xi;
                return Err(e);
            }
        };
        self.xi = xi;
        let mut stats = StepStats::new(h);
        stats.kinetic_temperature = Some(sum_p2 / self.phase.dim());
        stats.thermostat = Some(xi);
        Ok(stats)
    }
}

impl<T: Real> ChainState<T> for Sgnht<'_, T> {
    fn position(&self) -> &[T] {
        self.phase.theta
    }

    fn momentum(&self) -> &[T] {
        self.phase.p
    }

    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        (self.phase.theta, self.phase.p)
    }

    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        if self.mass.mass().shape() == MassShape::Identity {
            fill_standard_normal(rng, self.phase.p);
        } else {
            draw_mass_momentum(rng, self.phase.p, self.mass.mass());
        }
    }
}

impl<T: Real> AdaptiveMass<T> for Sgnht<'_, T> {
    fn mass(&self) -> Mass<'_, T> {
        self.mass.mass()
    }
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        self.mass.set_inverse_mass(inv_mass)
    }
}

/// mSGNHT: one thermostat per coordinate (Li et al. 2016, eq. 2; Gan et al. 2015):
///
/// ```text
/// dθ = p dt,   dp = −∇Ũ(θ) dt − ξ ⊙ p dt + √(2D) dW,   dξ = (p ⊙ p − 1) dt
/// ```
///
/// Each ξᵢ adapts to the gradient noise of its own coordinate, so anisotropic noise is absorbed.
/// Euler is Li et al. §2.2; the splitting scheme (mSGNHT-S) is their §3.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::{Integrator, Workspace, sampler::{MSgnht, Sampler, SgnhtParams}};
/// let (mut theta, mut p, mut xi, mut g, mut s) = ([0.0f64; 5], [0.0; 5], [0.0; 5], [0.0; 5], [0.0; 5]);
/// let mut sampler = MSgnht::new(
///     SgnhtParams::new(0.05, 1.0).unwrap(), Integrator::Splitting,
///     &mut theta, &mut p, &mut xi, Workspace::new(&mut g, &mut s),
/// ).unwrap();
/// assert_eq!(sampler.thermostat(), &[1.0; 5]); // ξ₀ = D
/// let mut rng = Pcg64::new(3, 5);
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
/// sampler.step(&mut model, &mut rng).unwrap();
/// ```
#[derive(Debug)]
pub struct MSgnht<'a, T> {
    params: SgnhtParams<T>,
    integrator: Integrator,
    phase: Phase<'a, T>,
    xi: &'a mut [T],
}

impl<'a, T: Real> MSgnht<'a, T> {
    /// Borrows θ, p (initial values, finite), the thermostats ξ and the workspace; all of one
    /// length ≥ 1. Every ξᵢ is set to D.
    pub fn new(
        params: SgnhtParams<T>,
        integrator: Integrator,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let phase = Phase::new(theta, momentum, work)?;
        check_len(Buffer::Thermostat, phase.theta.len(), thermostat.len())?;
        thermostat.fill(params.diffusion);
        Ok(MSgnht {
            params,
            integrator,
            phase,
            xi: thermostat,
        })
    }

    /// As [`MSgnht::new`], but keeps ξ as the caller set it (to resume a chain with its own
    /// thermostats); a non-finite ξᵢ is rejected as [`LayoutError::InvalidValue`].
    pub fn resume(
        params: SgnhtParams<T>,
        integrator: Integrator,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let phase = Phase::new(theta, momentum, work)?;
        check_len(Buffer::Thermostat, phase.theta.len(), thermostat.len())?;
        check_finite(Buffer::Thermostat, thermostat)?;
        Ok(MSgnht {
            params,
            integrator,
            phase,
            xi: thermostat,
        })
    }

    /// The thermostats ξ.
    pub fn thermostat(&self) -> &[T] {
        self.xi
    }

    /// The thermostats, writable (to resume a chain with its own ξ). A non-finite value written
    /// here is reported by the next step as [`StepError::NonFiniteState`].
    pub fn thermostat_mut(&mut self) -> &mut [T] {
        self.xi
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> Sampler<T, G> for MSgnht<'_, T> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let (h, sd) = (self.params.h, self.params.noise_sd());
        let f = Friction::PerCoordinate(&mut *self.xi);
        let sum_p2 = match self.integrator {
            Integrator::Euler => euler_step(&mut self.phase, f, h, sd, model, rng)?,
            Integrator::Splitting => splitting_step(&mut self.phase, f, h, sd, model, rng)?,
        };
        let n = self.phase.dim();
        let mut stats = StepStats::new(h);
        stats.kinetic_temperature = Some(sum_p2 / n);
        stats.thermostat = Some(sum_map(self.xi, |x| x) / n);
        Ok(stats)
    }
}

impl<T: Real> ChainState<T> for MSgnht<'_, T> {
    fn position(&self) -> &[T] {
        self.phase.theta
    }

    fn momentum(&self) -> &[T] {
        self.phase.p
    }

    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        (self.phase.theta, self.phase.p)
    }

    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        fill_standard_normal(rng, self.phase.p);
    }
}
