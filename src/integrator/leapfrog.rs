//! The leapfrog (Störmer–Verlet) integrator of HMC, with a diagonal mass.
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

use crate::error::StepError;
use crate::gradient::Gradient;
use crate::lanes::{first_non_finite, zip2, zip3};
use crate::real::Real;

/// Runs `steps` leapfrog steps from (θ, p) with `grad` = ∇U(θ) on entry; on success `grad` is
/// ∇U at the final θ. `inv_mass` is the diagonal of M⁻¹ (`None` for the identity). Stops with
/// an error at the first non-finite gradient (the caller restores its saved state).
pub(crate) fn leapfrog<T, G>(
    theta: &mut [T],
    p: &mut [T],
    grad: &mut [T],
    inv_mass: Option<&[T]>,
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
        match inv_mass {
            None => zip2(theta, p, |_, t, p| *t += eps * p),
            Some(m) => zip3(theta, p, m, |_, t, p, m| *t += eps * m * p),
        }
        model.gradient(theta, grad);
        if let Some(index) = first_non_finite(grad) {
            return Err(StepError::NonFiniteGradient { index });
        }
        let kick = if step + 1 == steps { half_eps } else { eps };
        zip2(p, grad, |_, p, g| *p -= kick * g);
    }
    Ok(())
}
