//! The leapfrog (Störmer–Verlet) integrator of HMC, written once over the kinetics pieces of `sde.rs`.
//!
//! For H(θ, p) = U(θ) + K(p) with K = ½pᵀM⁻¹p (Neal 2011; Roychowdhury & Parthasarathy 2017,
//! Alg. 1) and step ε, L steps of
//!
//! ```text
//! p ← p − ε/2 ∇U(θ)
//! θ ← θ + ε ∇K(p)          (M⁻¹p: per coordinate, or formed whole for a dense mass)
//! p ← p − ε/2 ∇U(θ)
//! ```
//!
//! with the inner half kicks merged, so L steps cost L gradient evaluations. The scheme is
//! symplectic and time-reversible, so Metropolis–Hastings on H makes HMC exact.

use super::sde::KineticSteps;
use super::state::checked_gradient;
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::lanes::{zip2, zip3_stream};
use crate::real::Real;

/// Runs `steps` leapfrog steps from (θ, p) with `grad` = ∇U(θ) on entry; on success `grad` is
/// ∇U at the final θ. Stops with an error at the first non-finite gradient (the caller restores
/// its saved state).
#[cfg_attr(feature = "std", inline(always))]
pub(crate) fn leapfrog<T, K, G>(
    theta: &mut [T],
    p: &mut [T],
    grad: &mut [T],
    kinetics: &mut K,
    eps: T,
    steps: u32,
    model: &mut G,
) -> Result<(), StepError>
where
    T: Real,
    K: KineticSteps<T>,
    G: Gradient<T> + ?Sized,
{
    let half_eps = eps * T::HALF;
    zip2(p, grad, |_, p, g| *p -= half_eps * g);
    for step in 0..steps {
        kinetics.prepare(p);
        let kin = &*kinetics;
        let p_now: &[T] = p;
        zip3_stream(theta, p_now, kin.stream(), |i, _, t, p, a| {
            *t += kin.displacement(i, a, p, eps)
        });
        checked_gradient(model, theta, grad)?;
        let kick = if step + 1 == steps { half_eps } else { eps };
        zip2(p, grad, |_, p, g| *p -= kick * g);
    }
    Ok(())
}
