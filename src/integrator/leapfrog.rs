//! The leapfrog (Störmer–Verlet) integrator of HMC, with an identity, diagonal or dense mass.
//!
//! For the Hamiltonian H(θ, p) = U(θ) + ½ pᵀM⁻¹p (Ding et al. 2014, App. A.1; Neal 2011) and
//! step ε, L steps of
//!
//! ```text
//! p ← p − ε/2 ∇U(θ)
//! θ ← θ + ε M⁻¹ p
//! p ← p − ε/2 ∇U(θ)
//! ```
//!
//! with the inner half kicks merged, so L steps cost L gradient evaluations. The scheme is
//! symplectic and time-reversible, so Metropolis–Hastings on H makes HMC exact.

use super::pieces::checked_gradient;
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::kinetic::Mass;
use crate::lanes::{zip2, zip3};
use crate::real::Real;

/// Runs `steps` leapfrog steps from (θ, p) with `grad` = ∇U(θ) on entry; on success `grad` is
/// ∇U at the final θ. The drift is θ ← θ + ε M⁻¹p (004 Alg. 1, ∇ₚH = M⁻¹p): for a dense mass
/// M⁻¹p is formed in `inv_mass_p` (d² multiply-adds; the buffer is unused otherwise). Stops
/// with an error at the first non-finite gradient (the caller restores its saved state).
#[allow(clippy::too_many_arguments)]
pub(crate) fn leapfrog<T, G>(
    theta: &mut [T],
    p: &mut [T],
    grad: &mut [T],
    mass: Mass<'_, T>,
    inv_mass_p: &mut [T],
    eps: T,
    steps: u32,
    model: &mut G,
) -> Result<(), StepError>
where
    T: Real,
    G: Gradient<T> + ?Sized,
{
    let half_eps = eps * T::HALF;
    zip2(p, grad, |_, p, g| *p -= half_eps * g);
    for step in 0..steps {
        match mass.diagonal_option() {
            Ok(None) => zip2(theta, p, |_, t, p| *t += eps * p),
            Ok(Some(m)) => zip3(theta, p, m, |_, t, p, m| *t += eps * m * p),
            Err(()) => {
                mass.kinetic_gradient(p, inv_mass_p);
                zip2(theta, inv_mass_p, |_, t, v| *t += eps * v);
            }
        }
        checked_gradient(model, theta, grad)?;
        let kick = if step + 1 == steps { half_eps } else { eps };
        zip2(p, grad, |_, p, g| *p -= kick * g);
    }
    Ok(())
}
