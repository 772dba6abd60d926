//! The test functions q of Roychowdhury & Parthasarathy 2017, §3.2, that decide whether S_count grows.

use crate::error::LinalgError;
use crate::real::Real;

/// Writes the HMC-EM test function of §3.2, q = \[M⁻¹p, ∇L(θ)\], into `out` (length 2d).
///
/// `inv_mass_p` is M⁻¹p (e.g. [`crate::kinetic::Mass::kinetic_gradient`]) and `grad_log_post`
/// is ∇L(θ) = −∇U(θ). Lengths: both d, `out` 2d; on a mismatch `out` is left unchanged and
/// [`LinalgError::DimensionMismatch`] is returned.
pub(crate) fn hmc_test_function<T: Real>(
    inv_mass_p: &[T],
    grad_log_post: &[T],
    out: &mut [T],
) -> Result<(), LinalgError> {
    let d = inv_mass_p.len();
    if grad_log_post.len() != d {
        return Err(LinalgError::DimensionMismatch {
            expected: d,
            found: grad_log_post.len(),
        });
    }
    if out.len() != 2 * d {
        return Err(LinalgError::DimensionMismatch {
            expected: 2 * d,
            found: out.len(),
        });
    }
    out[..d].copy_from_slice(inv_mass_p);
    out[d..].copy_from_slice(grad_log_post);
    Ok(())
}

/// Writes the SGNHT-EM test function of §3.2, as printed,
/// q = \[M⁻¹p, ∇L(θ) + ξ M⁻¹p, pᵀM⁻¹p\], into `out` (length 2d + 1).
///
/// `p` is the momentum, `inv_mass_p` = M⁻¹p, `grad_log_post` = ∇L(θ) (all d) and `xi` the
/// scalar thermostat. On a length mismatch `out` is left unchanged and
/// [`LinalgError::DimensionMismatch`] is returned.
pub(crate) fn sgnht_test_function<T: Real>(
    p: &[T],
    inv_mass_p: &[T],
    grad_log_post: &[T],
    xi: T,
    out: &mut [T],
) -> Result<(), LinalgError> {
    let d = p.len();
    for len in [inv_mass_p.len(), grad_log_post.len()] {
        if len != d {
            return Err(LinalgError::DimensionMismatch {
                expected: d,
                found: len,
            });
        }
    }
    if out.len() != 2 * d + 1 {
        return Err(LinalgError::DimensionMismatch {
            expected: 2 * d + 1,
            found: out.len(),
        });
    }
    let mut quad = T::ZERO;
    for i in 0..d {
        out[i] = inv_mass_p[i];
        out[d + i] = grad_log_post[i] + xi * inv_mass_p[i];
        quad += p[i] * inv_mass_p[i];
    }
    out[2 * d] = quad;
    Ok(())
}
