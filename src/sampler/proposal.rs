//! The shell of the samplers that propose whole trajectories (HMC, SG-NPHMC): state, cached energy, saved copies, mass.

use super::MassKind;
use crate::error::{Buffer, LayoutError, StepError};
use crate::gradient::Energy;
use crate::integrator::state::{check_finite, check_len, check_nonempty, checked_gradient};
use crate::kinetic::{Mass, MassBuffer};
use crate::lanes::{copy_into, first_non_finite, sum_map, sum_map2};
use crate::real::Real;
use crate::rows::carve;
use crate::sampler::Scalars;
use rand_core::Rng;

/// θ, p, ∇U at θ, the copies of θ, ∇U and p that restore an abandoned or rejected proposal,
/// the mass, and U(θ) once known.
#[derive(Debug)]
pub(crate) struct Proposal<'a, T, M = MassBuffer<'a, T>> {
    pub theta: &'a mut [T],
    pub p: &'a mut [T],
    /// ∇U at the current θ (kept between steps, so each proposal costs L gradients).
    pub grad: &'a mut [T],
    saved_theta: &'a mut [T],
    saved_grad: &'a mut [T],
    saved_p: &'a mut [T],
    pub mass: M,
    /// U(θ) at the current θ, once known (with `grad` then holding ∇U(θ)).
    pub energy: Option<T>,
}

impl<'a, T: Real, M: MassKind<T>> Proposal<'a, T, M> {
    /// The buffer part of a checkpoint: θ, the cached ∇U and p.
    pub fn checkpoint_len(&self) -> usize {
        self.theta.len().saturating_mul(3)
    }

    /// Writes θ, the cached ∇U and p into `out` ([`crate::sampler::Checkpoint::save`]); the
    /// scalars with the cached U.
    pub fn save_checkpoint(&self, out: &mut [T]) -> Result<Scalars<T>, LayoutError> {
        crate::sampler::write_parts(out, &[self.theta, self.grad, self.p])?;
        if self.energy.is_none() {
            // No cached ∇U: the buffer holds nothing of the state (zeros, so that two
            // checkpoints of one state are equal).
            let n = self.theta.len();
            out.iter_mut().skip(n).take(n).for_each(|g| *g = T::ZERO);
        }
        Ok(Scalars {
            energy: self.energy,
            ..Scalars::default()
        })
    }

    /// Restores θ, ∇U and p from `data` and U from `state`, after checking that θ, p (when
    /// `finite_momentum`) and a cached ∇U (when U is cached) are finite.
    pub fn restore_checkpoint(
        &mut self,
        state: &Scalars<T>,
        data: &[T],
        finite_momentum: bool,
    ) -> Result<(), LayoutError> {
        state.check()?;
        let n = self.theta.len();
        let [theta, grad, p] = crate::sampler::read_parts(data, [n, n, n], 1)?;
        let invalid = |index| LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        };
        if state.energy.is_some()
            && let Some(i) = first_non_finite(grad)
        {
            return Err(invalid(n + i));
        }
        if finite_momentum && let Some(i) = first_non_finite(p) {
            return Err(invalid(2 * n + i));
        }
        copy_into(self.theta, theta);
        copy_into(self.grad, grad);
        copy_into(self.p, p);
        self.energy = state.energy;
        Ok(())
    }

    /// Saves θ, p, the cached ∇U and U into `saved` (the MCEM wrapper's rollback).
    pub fn save_state(&self, saved: &mut super::SavedState<'_, T>) {
        copy_into(saved.theta, self.theta);
        copy_into(saved.p, self.p);
        copy_into(saved.grad, self.grad);
        saved.scalars[3] = self.energy;
    }

    /// Restores what [`Proposal::save_state`] saved.
    pub fn restore_state(&mut self, saved: &super::SavedState<'_, T>) {
        copy_into(self.theta, saved.theta);
        copy_into(self.p, saved.p);
        copy_into(self.grad, saved.grad);
        self.energy = saved.scalars[3];
    }

    /// Replaces the mass after checking its dimension.
    pub fn set_mass(&mut self, mass: M) -> Result<(), LayoutError> {
        mass.mass().check_dim(self.theta.len())?;
        self.mass = mass;
        Ok(())
    }

    /// The same shell with the mass `mass` of another kind, after checking its dimension.
    pub fn with_mass<M2: MassKind<T>>(self, mass: M2) -> Result<Proposal<'a, T, M2>, LayoutError> {
        mass.mass().check_dim(self.theta.len())?;
        Ok(Proposal {
            theta: self.theta,
            p: self.p,
            grad: self.grad,
            saved_theta: self.saved_theta,
            saved_grad: self.saved_grad,
            saved_p: self.saved_p,
            mass,
            energy: self.energy,
        })
    }

    /// U and ∇U at the current θ, evaluated if not cached.
    pub fn ensure_energy<E: Energy<T> + ?Sized>(&mut self, model: &mut E) -> Result<T, StepError> {
        if let Some(u) = self.energy {
            return Ok(u);
        }
        checked_gradient(model, self.theta, self.grad)?;
        let u = model.energy(self.theta);
        if !u.is_finite() {
            return Err(StepError::NonFiniteEnergy);
        }
        self.energy = Some(u);
        Ok(u)
    }

    /// Saves θ, ∇U and p.
    #[cfg_attr(feature = "std", inline(always))]
    pub fn save(&mut self) {
        copy_into(self.saved_theta, self.theta);
        copy_into(self.saved_grad, self.grad);
        copy_into(self.saved_p, self.p);
    }

    /// Restores θ and ∇U (a rejected proposal keeps its momentum).
    #[cfg_attr(feature = "std", inline(always))]
    pub fn restore_position(&mut self) {
        copy_into(self.theta, self.saved_theta);
        copy_into(self.grad, self.saved_grad);
    }

    /// Restores θ, ∇U and p (an abandoned step).
    #[cfg_attr(feature = "std", inline(always))]
    pub fn restore(&mut self) {
        self.restore_position();
        copy_into(self.p, self.saved_p);
    }

    /// Draws p ~ N(0, T·M) at the temperature T (N(0, M) at T = 1, bit for bit).
    #[cfg_attr(feature = "std", inline(always))]
    pub fn draw_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R, temperature: T) {
        self.mass.draw_tempered(rng, self.p, temperature);
    }

    /// ½ pᵀM⁻¹p.
    #[cfg_attr(feature = "std", inline(always))]
    pub fn kinetic(&self) -> T {
        kinetic_energy(self.mass.mass(), self.p)
    }

    /// The dimension as a float.
    pub fn dim(&self) -> T {
        T::from_usize(self.theta.len())
    }
}

impl<'a, T: Real> Proposal<'a, T> {
    /// The workspace length for n coordinates: 4n (∇U, saved θ, saved ∇U, saved p).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(4)
    }

    /// Checks θ (non-empty, finite), p's length (and finiteness if `finite_momentum`: HMC
    /// redraws p before using it, SG-NPHMC's `integrate` does not) and the workspace; the mass is
    /// the identity.
    pub fn new(
        theta: &'a mut [T],
        p: &'a mut [T],
        work: &'a mut [T],
        finite_momentum: bool,
    ) -> Result<Self, LayoutError> {
        let n = theta.len();
        check_nonempty(n)?;
        check_len(Buffer::Momentum, n, p.len())?;
        check_len(Buffer::Workspace, Self::workspace_len(n), work.len())?;
        check_finite(Buffer::Theta, theta)?;
        if finite_momentum {
            check_finite(Buffer::Momentum, p)?;
        }
        // (The workspace was checked to hold 4n: the parts fit. `carve` rather than
        // `split_at_mut`, whose panic the compiler cannot always rule out through the
        // saturating product.)
        let mut rest = work;
        let grad = carve(&mut rest, n);
        let saved_theta = carve(&mut rest, n);
        let saved_grad = carve(&mut rest, n);
        let saved_p = rest;
        Ok(Proposal {
            theta,
            p,
            grad,
            saved_theta,
            saved_grad,
            saved_p,
            mass: MassBuffer::identity(),
            energy: None,
        })
    }
}

/// ½ pᵀM⁻¹p in 8 lanes for the identity and a diagonal mass, [`Mass::energy`] for a dense one.
#[cfg_attr(feature = "std", inline(always))]
pub(crate) fn kinetic_energy<T: Real>(mass: Mass<'_, T>, p: &[T]) -> T {
    match (mass.is_identity(), mass.inv_mass_diagonal()) {
        (true, _) => T::HALF * sum_map(p, |p| p * p),
        (false, Some(m)) => T::HALF * sum_map2(p, m, |p, m| p * p * m),
        (false, None) => mass.energy(p),
    }
}
