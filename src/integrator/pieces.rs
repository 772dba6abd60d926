//! What a sampler hands an integrator: the scheme choice, the friction piece and the buffers.

use crate::error::{Buffer, LayoutError, StepError};
use crate::lanes::first_non_finite;
use crate::real::Real;

/// The discretisation of the SDE samplers (SGHMC, SGNHT, mSGNHT, SGMGT).
///
/// Both use exactly one gradient evaluation per step. For SGMGT's general kinetics the
/// splitting composes its pieces A–O–B–O–A (see `Sgmgt`'s integrator notes).
///
/// * `Euler`: the first-order scheme of Ding et al. 2014 (Alg. 1) and Li et al. 2016 (§2.2):
///   kick p with the friction, gradient and noise, then drift θ and the thermostat with the new p.
///   Its stationary-distribution error is O(h).
/// * `Splitting`: the symmetric splitting integrator (A–B–O–B–A) of Li et al. 2016 (§3), whose
///   error is O(h²): half a drift, half the friction solved exactly (p ← e^{−ξh/2} p), a full
///   gradient-and-noise kick, the other half friction and half drift.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Integrator {
    /// First-order Euler scheme.
    Euler,
    /// Second-order symmetric splitting scheme (A–B–O–B–A).
    #[default]
    Splitting,
}

/// The caller-owned scratch buffers every SDE sampler needs besides θ and p.
///
/// Both have θ's length: `gradient` receives ∇Ũ(θ); `scratch` holds the half-step position the
/// splitting scheme evaluates the gradient at, then the step's Gaussian noise.
#[derive(Debug)]
pub struct Workspace<'a, T> {
    /// Receives ∇Ũ(θ).
    pub gradient: &'a mut [T],
    /// Half-step position, then noise.
    pub scratch: &'a mut [T],
    /// M⁻¹p for a dense mass (θ's length); empty otherwise ([`Workspace::new`] leaves it empty).
    pub inv_mass_p: &'a mut [T],
}

impl<'a, T> Workspace<'a, T> {
    /// Groups the two scratch buffers (enough for the identity and a diagonal mass).
    pub fn new(gradient: &'a mut [T], scratch: &'a mut [T]) -> Self {
        Workspace {
            gradient,
            scratch,
            inv_mass_p: &mut [],
        }
    }

    /// The two scratch buffers plus the d-buffer for M⁻¹p that a dense mass needs
    /// (`Sghmc::with_mass`, `Sgnht::with_mass`).
    pub fn with_mass_scratch(
        gradient: &'a mut [T],
        scratch: &'a mut [T],
        inv_mass_p: &'a mut [T],
    ) -> Self {
        Workspace {
            gradient,
            scratch,
            inv_mass_p,
        }
    }
}

/// The friction piece of an SDE sampler (the B sub-step dp = −ξ ⊙ p dt and the thermostat's part
/// of the A sub-step).
pub(crate) enum Friction<'a, T> {
    /// Constant friction A, no thermostat (SGHMC).
    Constant(T),
    /// One scalar thermostat ξ with dξ = (pᵀp/n − 1) dt (SGNHT, Ding et al. 2014 eq. 6).
    Scalar(&'a mut T),
    /// One thermostat per coordinate with dξ = (p ⊙ p − 1) dt (mSGNHT, Li et al. 2016 eq. 2).
    PerCoordinate(&'a mut [T]),
}

/// θ, p and the workspace, with lengths checked once.
#[derive(Debug)]
pub(crate) struct Phase<'a, T> {
    pub theta: &'a mut [T],
    pub p: &'a mut [T],
    pub grad: &'a mut [T],
    pub scratch: &'a mut [T],
}

impl<'a, T: Real> Phase<'a, T> {
    /// Checks that θ is non-empty and finite and that every buffer has θ's length.
    pub fn new(
        theta: &'a mut [T],
        p: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let n = theta.len();
        if n == 0 {
            return Err(LayoutError::Empty);
        }
        check_len(Buffer::Momentum, n, p.len())?;
        check_len(Buffer::Gradient, n, work.gradient.len())?;
        check_len(Buffer::Scratch, n, work.scratch.len())?;
        check_finite(Buffer::Theta, theta)?;
        check_finite(Buffer::Momentum, p)?;
        Ok(Phase {
            theta,
            p,
            grad: work.gradient,
            scratch: work.scratch,
        })
    }

    /// The dimension as a float.
    #[inline]
    pub fn dim(&self) -> T {
        T::from_usize(self.theta.len())
    }
}

/// Errors unless `found == expected`.
#[inline]
pub(crate) fn check_len(buffer: Buffer, expected: usize, found: usize) -> Result<(), LayoutError> {
    if found == expected {
        Ok(())
    } else {
        Err(LayoutError::LengthMismatch {
            buffer,
            expected,
            found,
        })
    }
}

/// Errors on the first non-finite entry.
#[inline]
pub(crate) fn check_finite<T: Real>(buffer: Buffer, a: &[T]) -> Result<(), LayoutError> {
    match first_non_finite(a) {
        None => Ok(()),
        Some(index) => Err(LayoutError::InvalidValue { buffer, index }),
    }
}

/// After a completed step: the first non-finite coordinate of θ, p or ξ, as a [`StepError`].
pub(crate) fn check_state<T: Real>(
    theta: &[T],
    p: &[T],
    xi: Option<&[T]>,
) -> Result<(), StepError> {
    let bad = |buffer, a: &[T]| {
        first_non_finite(a).map(|index| StepError::NonFiniteState { buffer, index })
    };
    if let Some(e) = bad(Buffer::Theta, theta) {
        return Err(e);
    }
    if let Some(e) = bad(Buffer::Momentum, p) {
        return Err(e);
    }
    if let Some(e) = xi.and_then(|x| bad(Buffer::Thermostat, x)) {
        return Err(e);
    }
    Ok(())
}

/// The pieces of the generalized-kinetics SDE of SGMGT / SGMGT-D (Zhang et al. 2017, 001 eq. 13)
/// that the general Euler and splitting schemes compose:
///
/// ```text
/// dθ = ∇K(p) dt − σ_θ ∇Ũ(θ) dt + √(2σ_θ) dW
/// dp = −(σ_p + γ ∇F(ξ)) ⊙ ∇K(p) dt − ∇Ũ(θ) dt + √(2σ_p) dW
/// dξ = γ (∇K(p) ⊙ ∇K(p) − ∇²K(p)) dt − σ_ξ ∇F(ξ) dt + √(2σ_ξ) dW
/// ```
///
/// `kinetic` is K, `potential` is the thermostat potential F; both are separable.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GeneralPieces<K, F, T> {
    pub kinetic: K,
    pub potential: F,
    pub gamma: T,
    pub sigma_p: T,
    pub sigma_theta: T,
    /// 1 − σ_θ B̂: the share of the θ term's diffusion 2σ_θ h that is injected, the rest being
    /// the gradient noise it carries (see `SgmgtParams::with_noise_estimate`).
    pub theta_noise_fraction: T,
    /// 1 − 2σ_θ B̂: the factor on θ's velocity ∇K(p) that makes the noise shared by the θ and p
    /// updates stationary (see `SgmgtParams::with_noise_estimate`).
    pub velocity_scale: T,
    pub sigma_xi: T,
}

/// For a gradient-noise estimate B̂ of the θ term: (1 − 2σ_θB̂, 1 − σ_θB̂), θ's velocity factor
/// and the injected share of its diffusion (derived in `SgmgtParams::with_noise_estimate`).
pub(crate) fn theta_noise_factors<T: Real>(sigma_theta: T, noise_estimate: T) -> (T, T) {
    (
        T::ONE - T::TWO * sigma_theta * noise_estimate,
        T::ONE - sigma_theta * noise_estimate,
    )
}

impl<'a, T: Real> Phase<'a, T> {
    /// [`Phase::new`] plus [`check_mass`], for the `with_mass` constructors of the SDE samplers
    /// (SGHMC, SGNHT): returns the phase and the workspace's M⁻¹p buffer.
    pub fn with_mass(
        theta: &'a mut [T],
        p: &'a mut [T],
        work: Workspace<'a, T>,
        mass: crate::kinetic::Mass<'_, T>,
        integrator: Integrator,
    ) -> Result<(Self, &'a mut [T]), LayoutError> {
        let Workspace {
            gradient,
            scratch,
            inv_mass_p,
        } = work;
        let phase = Phase::new(theta, p, Workspace::new(gradient, scratch))?;
        check_mass(
            mass,
            phase.theta.len(),
            inv_mass_p,
            integrator == Integrator::Splitting,
        )?;
        Ok((phase, inv_mass_p))
    }
}

/// ∇Ũ at `at` into `grad`, or [`StepError::NonFiniteGradient`] naming the first non-finite
/// entry (evaluated before a step changes anything, so an error leaves the state as it was).
#[inline]
pub(crate) fn checked_gradient<T: Real, G: crate::gradient::Gradient<T> + ?Sized>(
    model: &mut G,
    at: &[T],
    grad: &mut [T],
) -> Result<(), StepError> {
    model.gradient(at, grad);
    match first_non_finite(grad) {
        Some(index) => Err(StepError::NonFiniteGradient { index }),
        None => Ok(()),
    }
}

/// The layout checks of a mass given to a sampler's `with_mass` constructor: it fits θ's length
/// `n`, a dense mass comes with an M⁻¹p buffer of length `n`, and (`splitting`) a dense mass
/// without its eigendecomposition is not combined with the splitting integrator
/// ([`LayoutError::UnsupportedMass`]).
pub(crate) fn check_mass<T: Real>(
    mass: crate::kinetic::Mass<'_, T>,
    n: usize,
    inv_mass_p: &[T],
    splitting: bool,
) -> Result<(), LayoutError> {
    mass.check_dim(n)?;
    if mass.shape() == crate::kinetic::MassShape::Dense {
        if splitting && !mass.has_friction_flow() {
            return Err(LayoutError::UnsupportedMass);
        }
        check_len(Buffer::MassScratch, n, inv_mass_p.len())?;
    }
    Ok(())
}
