//! Hamiltonian (hybrid) Monte Carlo with an identity, diagonal or dense mass and Metropolis–Hastings (000 App. A.1, 004 Alg. 1).

use super::params::positive;
use super::stats::{ChainState, Sampler, StepStats};
use crate::error::{Buffer, LayoutError, LinalgError, Param, ParamError, StepError};
use crate::gradient::Energy;
use crate::integrator::checked_gradient;
use crate::integrator::{check_finite, check_len, check_mass, leapfrog};
use crate::kinetic::{AdaptiveMass, Mass, MassBuffer};
use crate::lanes::{sum_map, sum_map2, zip2};
use crate::real::Real;
use crate::rng::fill_standard_normal;
use rand_core::Rng;

/// Parameters of HMC: leapfrog step ε and number of steps L ≥ 1.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HmcParams<T> {
    step_size: T,
    steps: u32,
}

impl<T: Real> HmcParams<T> {
    /// Step ε > 0 and L ≥ 1 leapfrog steps per proposal.
    pub fn new(step_size: T, steps: u32) -> Result<Self, ParamError> {
        if steps == 0 {
            return Err(ParamError::OutOfRange(Param::LeapfrogSteps));
        }
        Ok(HmcParams {
            step_size: positive(step_size, Param::StepSize)?,
            steps,
        })
    }
    /// ε
    pub fn step_size(&self) -> T {
        self.step_size
    }
    /// L
    pub fn steps(&self) -> u32 {
        self.steps
    }
}

/// The caller-owned buffers HMC needs besides θ and p, all of θ's length: the gradient at the
/// current θ, and copies of θ and of the gradient to restore on rejection, and of the momentum
/// to restore when a step is abandoned.
#[derive(Debug)]
pub struct HmcWorkspace<'a, T> {
    /// ∇U at the current θ (kept between steps, so each proposal costs L gradients).
    pub gradient: &'a mut [T],
    /// θ at the start of the proposal.
    pub saved_theta: &'a mut [T],
    /// ∇U at the start of the proposal.
    pub saved_gradient: &'a mut [T],
    /// p before the step (restored if the step is abandoned).
    pub saved_momentum: &'a mut [T],
    /// M⁻¹p for a dense mass (θ's length); empty otherwise ([`HmcWorkspace::new`] leaves it
    /// empty).
    pub inv_mass_p: &'a mut [T],
}

impl<'a, T> HmcWorkspace<'a, T> {
    /// Groups the four buffers.
    pub fn new(
        gradient: &'a mut [T],
        saved_theta: &'a mut [T],
        saved_gradient: &'a mut [T],
        saved_momentum: &'a mut [T],
    ) -> Self {
        HmcWorkspace {
            gradient,
            saved_theta,
            saved_gradient,
            saved_momentum,
            inv_mass_p: &mut [],
        }
    }

    /// The four buffers plus the d-buffer for M⁻¹p that a dense mass needs
    /// (`Hmc::with_mass`, `SgNphmc::with_mass`).
    pub fn with_mass_scratch(
        gradient: &'a mut [T],
        saved_theta: &'a mut [T],
        saved_gradient: &'a mut [T],
        saved_momentum: &'a mut [T],
        inv_mass_p: &'a mut [T],
    ) -> Self {
        HmcWorkspace {
            gradient,
            saved_theta,
            saved_gradient,
            saved_momentum,
            inv_mass_p,
        }
    }
}

/// HMC (000 App. A.1): draw p ~ N(0, M); run L leapfrog steps of size ε on
/// H(θ, p) = U(θ) + ½ pᵀM⁻¹p; accept the end point with probability min(1, e^{H₀ − H₁}).
///
/// [`Hmc::new`] takes a diagonal mass (its inverse M⁻¹, or `None` for the identity);
/// [`Hmc::with_mass`] any [`MassBuffer`] (identity, diagonal or dense), which can then be changed
/// in place between proposals ([`AdaptiveMass`], for HMC-EM, 004 Alg. 1). With a general M the
/// proposal is 004 Alg. 1: p ~ N(0, M) (p = C⁻ᵀz for a dense M⁻¹ = CCᵀ), leapfrog drifts
/// θ ← θ + ε M⁻¹p, K(p) = ½ pᵀM⁻¹p in the Metropolis–Hastings ratio. The sampler is exact
/// for any ε: the error of the leapfrog lowers the acceptance rate, it does not bias the chain.
/// A proposal whose energy is not finite is rejected (a divergence). A proposal whose gradient
/// becomes non-finite is abandoned: θ, p and the cached gradient are restored bit for bit and
/// [`StepError::NonFiniteGradient`] is returned; stepping again is safe (a fresh momentum is
/// drawn each step).
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::{Model, sampler::{Hmc, HmcParams, HmcWorkspace, Sampler}};
/// let (mut theta, mut p, mut g, mut t0, mut g0, mut p0) = ([1.0f64; 2], [0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
/// let mut model = Model::new(
///     |t: &[f64], g: &mut [f64]| g.copy_from_slice(t),
///     |t: &[f64]| 0.5 * t.iter().map(|x| x * x).sum::<f64>(),
/// );
/// let mut hmc = Hmc::new(
///     HmcParams::new(0.2, 10).unwrap(), None, &mut theta, &mut p,
///     HmcWorkspace::new(&mut g, &mut t0, &mut g0, &mut p0),
/// ).unwrap();
/// let mut rng = Pcg64::new(1, 1);
/// let s = hmc.step(&mut model, &mut rng).unwrap();
/// assert!(s.acceptance.unwrap() > 0.5);
/// ```
#[derive(Debug)]
pub struct Hmc<'a, T> {
    params: HmcParams<T>,
    mass: MassBuffer<'a, T>,
    inv_mass_p: &'a mut [T],
    theta: &'a mut [T],
    p: &'a mut [T],
    grad: &'a mut [T],
    saved_theta: &'a mut [T],
    saved_grad: &'a mut [T],
    saved_p: &'a mut [T],
    /// U(θ) at the current θ, once known (with `grad` then holding ∇U(θ)).
    energy: Option<T>,
}

impl<'a, T: Real> Hmc<'a, T> {
    /// Borrows θ (finite), p, the diagonal inverse mass (every entry finite and > 0) and the
    /// workspace; all of one length ≥ 1.
    pub fn new(
        params: HmcParams<T>,
        inv_mass: Option<&'a [T]>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: HmcWorkspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        check_layout(theta, momentum, inv_mass, &work, false)?;
        Ok(Hmc {
            params,
            mass: MassBuffer::shared(inv_mass),
            inv_mass_p: work.inv_mass_p,
            theta,
            p: momentum,
            grad: work.gradient,
            saved_theta: work.saved_theta,
            saved_grad: work.saved_gradient,
            saved_p: work.saved_momentum,
            energy: None,
        })
    }

    /// As [`Hmc::new`], with any mass (identity, diagonal or dense) that can be replaced between
    /// proposals ([`AdaptiveMass::set_inverse_mass`]). A dense mass needs the workspace's
    /// `inv_mass_p` buffer ([`HmcWorkspace::with_mass_scratch`]); errors as [`Hmc::new`], plus
    /// [`LayoutError::LengthMismatch`] on [`Buffer::InverseMass`] (the mass's dimension) or
    /// [`Buffer::MassScratch`].
    pub fn with_mass(
        params: HmcParams<T>,
        mass: MassBuffer<'a, T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        work: HmcWorkspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        check_layout(theta, momentum, None, &work, false)?;
        check_mass(mass.mass(), theta.len(), work.inv_mass_p, false)?;
        Ok(Hmc {
            params,
            mass,
            inv_mass_p: work.inv_mass_p,
            theta,
            p: momentum,
            grad: work.gradient,
            saved_theta: work.saved_theta,
            saved_grad: work.saved_gradient,
            saved_p: work.saved_momentum,
            energy: None,
        })
    }

    /// The parameters.
    pub fn params(&self) -> HmcParams<T> {
        self.params
    }

    /// Sets the number of leapfrog steps L ≥ 1 of the next proposals (HMC-EM's LP_S); 0 is
    /// ignored.
    pub fn set_leapfrog_steps(&mut self, steps: u32) {
        if steps > 0 {
            self.params.steps = steps;
        }
    }

    /// ∇U at the current θ, if cached (after a successful step).
    pub fn cached_gradient(&self) -> Option<&[T]> {
        self.energy.map(|_| &*self.grad)
    }

    /// Draws p ~ N(0, M).
    fn draw_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        draw_mass_momentum(rng, self.p, self.mass.mass());
    }

    /// ½ pᵀM⁻¹p
    fn kinetic(&self) -> T {
        let mass = self.mass.mass();
        match mass.diagonal_option() {
            Ok(None) => T::HALF * sum_map(self.p, |p| p * p),
            Ok(Some(m)) => T::HALF * sum_map2(self.p, m, |p, m| p * p * m),
            Err(()) => mass.energy(self.p),
        }
    }
}

impl<T: Real> AdaptiveMass<T> for Hmc<'_, T> {
    fn mass(&self) -> Mass<'_, T> {
        self.mass.mass()
    }
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        self.mass.set_inverse_mass(inv_mass)
    }
}

/// Draws p ~ N(0, M) for any mass: the identity/diagonal path of [`draw_momentum`] (the same
/// random stream as before masses were general), [`Mass::sample`] for a dense one.
pub(crate) fn draw_mass_momentum<T: Real, R: Rng + ?Sized>(
    rng: &mut R,
    p: &mut [T],
    mass: Mass<'_, T>,
) {
    match mass.diagonal_option() {
        Ok(m) => draw_momentum(rng, p, m),
        Err(()) => mass.sample(rng, p),
    }
}

/// The layout checks shared by the samplers that borrow an [`HmcWorkspace`] and a diagonal
/// inverse mass (HMC, SG-NPHMC): θ non-empty and finite, every buffer of θ's length, M⁻¹ finite
/// and > 0; p finite too when `finite_momentum` (HMC redraws p before using it, so it does not
/// ask).
pub(crate) fn check_layout<T: Real>(
    theta: &[T],
    momentum: &[T],
    inv_mass: Option<&[T]>,
    work: &HmcWorkspace<'_, T>,
    finite_momentum: bool,
) -> Result<(), LayoutError> {
    let n = theta.len();
    if n == 0 {
        return Err(LayoutError::Empty);
    }
    check_len(Buffer::Momentum, n, momentum.len())?;
    check_len(Buffer::Gradient, n, work.gradient.len())?;
    check_len(Buffer::SavedTheta, n, work.saved_theta.len())?;
    check_len(Buffer::SavedGradient, n, work.saved_gradient.len())?;
    check_len(Buffer::SavedMomentum, n, work.saved_momentum.len())?;
    check_finite(Buffer::Theta, theta)?;
    if finite_momentum {
        check_finite(Buffer::Momentum, momentum)?;
    }
    if let Some(m) = inv_mass {
        check_len(Buffer::InverseMass, n, m.len())?;
        if let Some(index) = m.iter().position(|&x| !(x.is_finite() && x > T::ZERO)) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::InverseMass,
                index,
            });
        }
    }
    Ok(())
}

/// Draws p ~ N(0, M) for a diagonal mass: pᵢ = ζᵢ / √(M⁻¹)ᵢ (identity when `inv_mass` is `None`).
pub(crate) fn draw_momentum<T: Real, R: Rng + ?Sized>(
    rng: &mut R,
    p: &mut [T],
    inv_mass: Option<&[T]>,
) {
    fill_standard_normal(rng, p);
    if let Some(m) = inv_mass {
        zip2(p, m, |_, p, m| *p /= m.sqrt());
    }
}

impl<T: Real, M: Energy<T> + ?Sized> Sampler<T, M> for Hmc<'_, T> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let u0 = match self.energy {
            Some(u) => u,
            None => {
                checked_gradient(model, self.theta, self.grad)?;
                let u = model.energy(self.theta);
                if !u.is_finite() {
                    return Err(StepError::NonFiniteEnergy);
                }
                self.energy = Some(u);
                u
            }
        };
        self.saved_p.copy_from_slice(self.p);
        self.draw_momentum(rng);
        let h0 = u0 + self.kinetic();
        self.saved_theta.copy_from_slice(self.theta);
        self.saved_grad.copy_from_slice(self.grad);

        let HmcParams { step_size, steps } = self.params;
        let restore = |s: &mut Self| {
            s.theta.copy_from_slice(s.saved_theta);
            s.grad.copy_from_slice(s.saved_grad);
        };
        if let Err(e) = leapfrog(
            self.theta,
            self.p,
            self.grad,
            self.mass.mass(),
            self.inv_mass_p,
            step_size,
            steps,
            model,
        ) {
            restore(self);
            self.p.copy_from_slice(self.saved_p);
            return Err(e);
        }
        let u1 = model.energy(self.theta);
        let kinetic = self.kinetic();
        let log_ratio = h0 - (u1 + kinetic);
        // A non-finite energy (a divergence) compares false and is rejected.
        let acceptance = if log_ratio.is_finite() {
            log_ratio.min(T::ZERO).exp()
        } else {
            T::ZERO
        };
        let accepted = T::uniform(rng) < acceptance;
        if accepted {
            self.energy = Some(u1);
        } else {
            restore(self);
        }
        let mut stats = StepStats::new(step_size);
        stats.kinetic_temperature = Some(T::TWO * kinetic / T::from_usize(self.theta.len()));
        stats.acceptance = Some(acceptance);
        stats.accepted = Some(accepted);
        Ok(stats)
    }
}

impl<T: Real> ChainState<T> for Hmc<'_, T> {
    fn position(&self) -> &[T] {
        self.theta
    }

    fn momentum(&self) -> &[T] {
        self.p
    }

    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        self.energy = None;
        (self.theta, self.p)
    }

    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.draw_momentum(rng);
    }
}
