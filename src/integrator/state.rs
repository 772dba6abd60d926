//! The state a scheme steps (θ, p and the workspace, lengths checked once) and the checks every scheme shares.

use crate::error::{Buffer, LayoutError, StepError};
use crate::gradient::Gradient;
use crate::lanes::{Backup, Slots, copy_into, first_non_finite};
use crate::real::Real;
use crate::rows::carve;

/// θ, p and the parts of the caller's workspace, all of one length: ∇Ũ, then the scratch that
/// holds the splitting scheme's half-step position, and, for a per-coordinate thermostat, the
/// backup of ξ. During the fused pass the scratch receives the old θ and ∇Ũ's slots the old p
/// ([`Backup`]), so that a step whose result is not finite is undone by [`Phase::rollback`].
#[derive(Debug)]
pub(crate) struct Phase<'a, T> {
    pub theta: &'a mut [T],
    pub p: &'a mut [T],
    pub grad: &'a mut [T],
    pub scratch: &'a mut [T],
    /// The old ξᵢ of a per-coordinate thermostat (empty otherwise).
    pub xi_backup: &'a mut [T],
    /// The step's noise scale (√(2Dh), or √(Dh) for A–O–B–O–A), remembered from the last step.
    pub noise_sd: Memo<T>,
    /// A shared friction's flow map e^{−κt} (the identity mass under a constant friction or a
    /// scalar thermostat), remembered from the last step.
    pub flow: Memo<T>,
    /// SGMGT's Langevin noise scales on ξ and θ, remembered from the last step.
    pub xi_sd: Memo<T>,
    pub theta_sd: Memo<T>,
}

impl<'a, T: Real> Phase<'a, T> {
    /// The workspace length for n coordinates: 2n, or 3n with a per-coordinate thermostat
    /// (`usize::MAX` on overflow).
    pub const fn workspace_len(n: usize, per_coordinate: bool) -> usize {
        n.saturating_mul(if per_coordinate { 3 } else { 2 })
    }

    /// Checks that θ is non-empty and finite, p has θ's length and is finite, and the workspace
    /// holds [`Phase::workspace_len`] entries; splits the workspace.
    pub fn new(
        theta: &'a mut [T],
        p: &'a mut [T],
        work: &'a mut [T],
        per_coordinate: bool,
    ) -> Result<Self, LayoutError> {
        let n = theta.len();
        check_nonempty(n)?;
        check_len(Buffer::Momentum, n, p.len())?;
        check_len(
            Buffer::Workspace,
            Self::workspace_len(n, per_coordinate),
            work.len(),
        )?;
        check_finite(Buffer::Theta, theta)?;
        check_finite(Buffer::Momentum, p)?;
        // (`carve`: the lengths were checked, but through `workspace_len`'s saturating product
        // the compiler cannot always see it: a firmware with d known only at run time kept
        // `split_at_mut`'s panic here.)
        let mut rest = work;
        let grad = carve(&mut rest, n);
        let scratch = carve(&mut rest, n);
        let xi_backup = rest;
        Ok(Phase {
            theta,
            p,
            grad,
            scratch,
            xi_backup,
            noise_sd: Memo::new(),
            flow: Memo::new(),
            xi_sd: Memo::new(),
            theta_sd: Memo::new(),
        })
    }

    /// (θ, p, ∇Ũ, scratch) for the passes of a dense mass, which saves θ and p whole
    /// beforehand ([`Slots::new`] makes their sweeps' slots, without a backup).
    #[inline(always)]
    pub fn split(&mut self) -> (&mut [T], &mut [T], &mut [T], &[T]) {
        (self.theta, self.p, self.grad, self.scratch)
    }

    /// The slots of the fused pass of a separable kinetics, which saves the old state as it
    /// goes ([`Backup`]: θ into the scratch, p into ∇Ũ's slots, ξ into its own backup).
    #[inline(always)]
    pub fn slots_with_backup(&mut self) -> Slots<'_, T> {
        Slots {
            theta: self.theta,
            p: self.p,
            g: self.grad,
            backup: Some(Backup {
                theta: self.scratch,
                xi: self.xi_backup,
            }),
        }
    }

    /// Undoes a fused pass that ran with [`Phase::split_with_backup`]: θ, p and the
    /// per-coordinate ξ (`xi`, empty for the other thermostats) from their backups.
    pub fn rollback(&mut self, xi: &mut [T]) {
        copy_into(self.theta, self.scratch);
        copy_into(self.p, self.grad);
        copy_into(xi, self.xi_backup);
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

/// A function of one argument remembered for its last argument: a step's noise scale √(2Dh)
/// or a constant friction's flow e^{−Ah/2} is the same from step to step unless h, D or A
/// changes, and on a core without a square-root instruction or an FPU for the type each costs
/// more than a small step's loop (`docs/performance-notes.md`). A hand-written firmware step
/// hoists them out; this is the
/// same, kept correct when the argument changes. The key is the argument's bit pattern (an
/// integer compare, even without an FPU). Derived from the settings, never part of a chain's
/// state: a memo holds the value of whichever argument came last.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Memo<T> {
    /// The bits of the last argument (`u64::MAX` for none: no `f32` widens to it, and the
    /// `f64` NaN with that pattern is never an argument the samplers form).
    arg: u64,
    value: T,
}

impl<T: Real> Memo<T> {
    /// Nothing remembered yet.
    pub fn new() -> Self {
        Memo {
            arg: u64::MAX,
            value: T::ZERO,
        }
    }

    /// f(x), computed only when x differs (bitwise) from the last argument. `f` must be the same
    /// function at every call on one memo.
    #[inline(always)]
    pub fn of(&mut self, x: T, f: impl FnOnce(T) -> T) -> T {
        let bits = x.to_bits_u64();
        if bits != self.arg {
            self.value = f(x);
            self.arg = bits;
        }
        self.value
    }

    /// √x, remembered.
    #[inline(always)]
    pub fn sqrt(&mut self, x: T) -> T {
        self.of(x, T::sqrt)
    }
}

impl<T: Real> Default for Memo<T> {
    fn default() -> Self {
        Self::new()
    }
}
