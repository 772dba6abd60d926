//! Stochastic gradient Hamiltonian Monte Carlo (SGHMC), Chen, Fox & Guestrin 2014, as in 002 Alg. 2
//! and 000 eq. 3.

use super::hmc::draw_mass_momentum;
use super::params::{non_negative, positive};
use super::stats::{ChainState, Sampler, StepStats};
use crate::error::{LayoutError, LinalgError, Param, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::{
    Friction, Integrator, MassFriction, Phase, Workspace, euler_step, mass_euler_step,
    mass_splitting_step, splitting_step,
};
use crate::kinetic::{AdaptiveMass, Mass, MassBuffer, MassShape};
use crate::real::Real;
use crate::rng::fill_standard_normal;
use rand_core::Rng;

/// Parameters of SGHMC: step h, friction A and the gradient-noise estimate B̂.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SghmcParams<T> {
    h: T,
    friction: T,
    noise_estimate: T,
}

impl<T: Real> SghmcParams<T> {
    /// Step h > 0 and friction A ≥ 0, with no noise estimate (B̂ = 0).
    pub fn new(h: T, friction: T) -> Result<Self, ParamError> {
        Self::with_noise_estimate(h, friction, T::ZERO)
    }

    /// Step h > 0, friction A ≥ 0 and noise estimate 0 ≤ B̂ ≤ A: the injected noise is
    /// √(2(A − B̂)h) per coordinate (000 eq. 3), so B̂ may not exceed A.
    pub fn with_noise_estimate(h: T, friction: T, noise_estimate: T) -> Result<Self, ParamError> {
        let h = positive(h, Param::StepSize)?;
        let friction = non_negative(friction, Param::Friction)?;
        let noise_estimate = non_negative(noise_estimate, Param::NoiseEstimate)?;
        if noise_estimate > friction {
            return Err(ParamError::OutOfRange(Param::NoiseEstimate));
        }
        Ok(SghmcParams {
            h,
            friction,
            noise_estimate,
        })
    }

    /// The learning-rate / momentum form of 002 ("reparametrize SGHMC"): learning rate η = h²,
    /// momentum weight α = Ah ∈ \[0, 1\], noise estimate β̂ = B̂h ∈ \[0, α\]. The sampler's
    /// momentum p is the paper's velocity u divided by h (u = p h); the chain of θ is identical.
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
        Self::with_noise_estimate(
            h,
            alpha / h,
            non_negative(beta_hat, Param::NoiseEstimate)? / h,
        )
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
}

/// SGHMC: second-order Langevin dynamics with constant friction A and injected noise that
/// discounts the estimated gradient noise B̂ (000 eq. 3):
///
/// ```text
/// dθ = p dt,   dp = −∇Ũ(θ) dt − A p dt + √(2(A − B̂)) dW
/// ```
///
/// Euler (002 Alg. 2): p ← p − A p h − ∇Ũ(θ) h + √(2(A − B̂)h) ζ; θ ← θ + p h.
/// Splitting: A–B–O–B–A with the exact friction p ← e^{−Ah/2} p (see
/// [`Integrator::Splitting`]).
///
/// With a mass M ([`Sghmc::with_mass`]: identity, diagonal or dense, changeable in place for
/// SGHMC-EM, 004 Alg. 3) the dynamics are dθ = M⁻¹p dt, dp = −∇Ũ dt − A M⁻¹p dt +
/// √(2(A − B̂)) dW, whose momentum is stationary at N(0, M) (the OU covariance Σ solves
/// A M⁻¹Σ + ΣM⁻¹A = 2A I, so Σ = M); Euler is 004 Alg. 3 (p ← p − εA M⁻¹p − ε∇Ũ(θ) +
/// √(2(A − B̂)ε) ζ; θ ← θ + ε M⁻¹p), splitting takes the exact friction flow exp(−At M⁻¹) (per
/// coordinate for a diagonal M; through the eigendecomposition for a dense M built with
/// `MassBuffer::dense_with_eigen`, without which a dense M needs `Integrator::Euler`; see
/// `src/integrator/mass_sde.rs`).
///
/// When the gradient noise has variance 2Bh per step but B̂ < B, the momentum heats up: the
/// kinetic temperature settles near (A + B − B̂)/A instead of 1 (Ding et al. 2014 §2, App. D.2).
/// SGNHT removes the need to know B.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::{Integrator, Workspace, sampler::{Sampler, Sghmc, SghmcParams}};
/// let (mut theta, mut p, mut grad, mut scratch) = ([0.0f32; 3], [0.0; 3], [0.0; 3], [0.0; 3]);
/// let params = SghmcParams::new(0.1, 1.0).unwrap();
/// let mut sampler = Sghmc::new(
///     params, Integrator::Splitting, &mut theta, &mut p,
///     Workspace::new(&mut grad, &mut scratch),
/// ).unwrap();
/// let mut rng = Pcg64::new(7, 11);
/// let mut model = |t: &[f32], g: &mut [f32]| g.copy_from_slice(t);
/// let stats = sampler.step(&mut model, &mut rng).unwrap();
/// assert!(stats.kinetic_temperature.unwrap() >= 0.0);
/// ```
#[derive(Debug)]
pub struct Sghmc<'a, T> {
    params: SghmcParams<T>,
    integrator: Integrator,
    phase: Phase<'a, T>,
    mass: MassBuffer<'a, T>,
    inv_mass_p: &'a mut [T],
}

impl<'a, T: Real> Sghmc<'a, T> {
    /// Borrows θ and p (initial values, finite) and the workspace; all of one length ≥ 1.
    pub fn new(
        params: SghmcParams<T>,
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

    /// As [`Sghmc::new`] with a mass M (identity, diagonal or dense; changeable in place through
    /// [`AdaptiveMass`]). A dense mass needs [`Workspace::with_mass_scratch`], and for
    /// `Integrator::Splitting` its eigendecomposition (`MassBuffer::dense_with_eigen`;
    /// [`LayoutError::UnsupportedMass`] otherwise).
    pub fn with_mass(
        params: SghmcParams<T>,
        integrator: Integrator,
        mass: MassBuffer<'a, T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let (phase, inv_mass_p) = Phase::with_mass(theta, momentum, work, mass.mass(), integrator)?;
        Ok(Sghmc {
            params,
            integrator,
            phase,
            mass,
            inv_mass_p,
        })
    }

    /// The parameters.
    pub fn params(&self) -> SghmcParams<T> {
        self.params
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> Sampler<T, G> for Sghmc<'_, T> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let SghmcParams {
            h,
            friction,
            noise_estimate,
        } = self.params;
        let sd = (T::TWO * (friction - noise_estimate) * h).sqrt();
        let mass = self.mass.mass();
        let sum_p2 = if mass.shape() == MassShape::Identity {
            let f = Friction::Constant(friction);
            match self.integrator {
                Integrator::Euler => euler_step(&mut self.phase, f, h, sd, model, rng)?,
                Integrator::Splitting => splitting_step(&mut self.phase, f, h, sd, model, rng)?,
            }
        } else {
            let f = MassFriction::Constant(friction);
            match self.integrator {
                Integrator::Euler => {
                    mass_euler_step(&mut self.phase, mass, self.inv_mass_p, f, h, sd, model, rng)?
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
                )?,
            }
        };
        let mut stats = StepStats::new(h);
        stats.kinetic_temperature = Some(sum_p2 / self.phase.dim());
        Ok(stats)
    }
}

impl<T: Real> ChainState<T> for Sghmc<'_, T> {
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

impl<T: Real> AdaptiveMass<T> for Sghmc<'_, T> {
    fn mass(&self) -> Mass<'_, T> {
        self.mass.mass()
    }
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        self.mass.set_inverse_mass(inv_mass)
    }
}
