//! The state a scheme steps (θ, p and the workspace, lengths checked once) and the checks every scheme shares.

use crate::error::{Buffer, LayoutError, StepError};
use crate::gradient::Gradient;
use crate::lanes::first_non_finite;
use crate::real::Real;

/// θ, p and the two halves of the caller's workspace (∇Ũ, then the scratch that holds the
/// splitting scheme's half-step position and then the step's normals), all of one length.
#[derive(Debug)]
pub(crate) struct Phase<'a, T> {
    pub theta: &'a mut [T],
    pub p: &'a mut [T],
    pub grad: &'a mut [T],
    pub scratch: &'a mut [T],
}

impl<'a, T: Real> Phase<'a, T> {
    /// Checks that θ is non-empty and finite, p has θ's length and is finite, and the workspace
    /// holds 2n entries; splits the workspace.
    pub fn new(theta: &'a mut [T], p: &'a mut [T], work: &'a mut [T]) -> Result<Self, LayoutError> {
        let n = theta.len();
        check_nonempty(n)?;
        check_len(Buffer::Momentum, n, p.len())?;
        check_len(Buffer::Workspace, 2 * n, work.len())?;
        check_finite(Buffer::Theta, theta)?;
        check_finite(Buffer::Momentum, p)?;
        let (grad, scratch) = work.split_at_mut(n);
        Ok(Phase {
            theta,
            p,
            grad,
            scratch,
        })
    }

    /// (θ, p, ∇Ũ, scratch) for a pass that writes θ and p.
    #[inline(always)]
    pub fn split(&mut self) -> (&mut [T], &mut [T], &[T], &[T]) {
        (self.theta, self.p, self.grad, self.scratch)
    }

    /// The dimension.
    #[inline]
    pub fn len(&self) -> usize {
        self.theta.len()
    }
}

/// [`LayoutError::Empty`] for n = 0.
#[inline]
pub(crate) fn check_nonempty(n: usize) -> Result<(), LayoutError> {
    if n == 0 {
        Err(LayoutError::Empty)
    } else {
        Ok(())
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
pub(crate) fn check_state<T: Real>(theta: &[T], p: &[T], xi: &[T]) -> Result<(), StepError> {
    let bad = |buffer, a: &[T]| {
        first_non_finite(a).map(|index| StepError::NonFiniteState { buffer, index })
    };
    match bad(Buffer::Theta, theta)
        .or_else(|| bad(Buffer::Momentum, p))
        .or_else(|| bad(Buffer::Thermostat, xi))
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// ∇Ũ at `at` into `grad`, or [`StepError::NonFiniteGradient`] naming the first non-finite
/// entry (evaluated before a step changes anything, so an error leaves the state as it was).
#[inline]
pub(crate) fn checked_gradient<T: Real, G: Gradient<T> + ?Sized>(
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
