//! The test functions q of Roychowdhury & Parthasarathy 2017, §3.2, that decide whether S_count grows.

use crate::error::LinalgError;
use crate::lanes::copy_into;
use crate::real::Real;
use crate::rows::Fitted;

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
    // (Checked split and zipped copies: the lengths were checked above, but the compiler cannot
    // always see it, and a slice index or `copy_from_slice` would link a panic path.)
    let (a, b) = out.split_fitted_mut(d);
    copy_into(a, inv_mass_p);
    copy_into(b, grad_log_post);
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
    // Zipped, by checked splits (the lengths were checked above; indices would link panic
    // paths the compiler cannot always rule out). `out` holds 2d + 1 ≥ 1 entries.
    let Some((last, head)) = out.split_last_mut() else {
        return Ok(());
    };
    let (a, b) = head.split_fitted_mut(d);
    let mut quad = T::ZERO;
    for ((ai, bi), ((&pi, &mi), &gi)) in a
        .iter_mut()
        .zip(b.iter_mut())
        .zip(p.iter().zip(inv_mass_p).zip(grad_log_post))
    {
        *ai = mi;
        *bi = gi + xi * mi;
        quad += pi * mi;
    }
    *last = quad;
    Ok(())
}
