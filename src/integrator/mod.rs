//! Numerical integrators: one Euler, one symmetric splitting, one leapfrog and one generalized leapfrog body.
//!
//! Users choose between [`Integrator::Euler`] and [`Integrator::Splitting`] for the SDE samplers;
//! the rest is internal. Each scheme is written once, over the per-coordinate sub-steps of
//! `sde.rs` (kinetics: identity, diagonal, dense or any separable K; thermostats: constant,
//! scalar or per coordinate; SGMGT-D's θ term), into which every sampler plugs its pieces.

mod euler;
mod generalized_leapfrog;
mod leapfrog;
pub(crate) mod sde;
mod splitting;
pub(crate) mod state;

pub(crate) use generalized_leapfrog::{
    NpConstants, NpScalars, generalized_leapfrog_step, kinetic2_mass, nose_poincare_energy,
};
pub(crate) use leapfrog::leapfrog;
pub(crate) use splitting::Composition;

use crate::error::StepError;
use crate::gradient::Gradient;
use crate::real::Real;
use rand_core::Rng;
use sde::{KineticSteps, PositionTerm, Sde, Sums, Thermostat};
use state::Phase;

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>> Sde<K, X, L, T> {
    /// One step of `integrator` (splitting in the order `composition`): of the scheme a static
    /// choice ([`Euler`], [`Splitting`]) names, whose other scheme is then not compiled in, or
    /// of the one a run-time [`Integrator`] holds.
    #[inline(always)]
    pub(crate) fn step<I: IntegratorChoice, G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        integrator: I,
        composition: Composition,
        phase: &mut Phase<'_, T>,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError> {
        match integrator.integrator() {
            Integrator::Euler => self.euler(phase, h, model, rng),
            Integrator::Splitting => self.splitting(composition, phase, h, model, rng),
        }
    }
}

/// The end of every Euler and splitting step, and the one place the SDE samplers keep the state
/// contract: if the pass's finiteness guard fired (`finite` false), the first non-finite
/// coordinate is named ([`state::check_state`]; a guard that fired on an overflowing but finite
/// sum finds none and the step stands), then the step is undone — θ, p and a per-coordinate ξ
/// from the sweep's backup or a dense mass's copy, a scalar ξ from `saved_xi` — and
/// [`StepError::NonFiniteState`] returned with the state bit for bit as before the step.
#[inline(always)]
fn finish_step<T: Real, K: KineticSteps<T>, X: Thermostat<T>>(
    kinetics: &mut K,
    thermostat: &mut X,
    phase: &mut Phase<'_, T>,
    finite: bool,
    saved_xi: T,
) -> Result<(), StepError> {
    if finite {
        return Ok(());
    }
    let checked = state::check_state(phase.theta, phase.p, thermostat.values());
    if checked.is_err() {
        undo_step(kinetics, thermostat, phase, saved_xi);
    }
    checked
}

/// ∇Ũ at `at` into `grad` for an SDE step: unchecked for a separable kinetics, whose fused pass
/// checks it block by block as it goes (`lanes::sweep`, then [`reject_bad_gradient`]); checked
/// now, before anything changes, for a dense mass.
#[inline(always)]
fn step_gradient<T: Real, K: KineticSteps<T>, G: Gradient<T> + ?Sized>(
    model: &mut G,
    at: &[T],
    grad: &mut [T],
) -> Result<(), StepError> {
    if K::SEPARABLE {
        model.gradient(at, grad);
        Ok(())
    } else {
        state::checked_gradient(model, at, grad)
    }
}

/// [`StepError::NonFiniteGradient`] at `bad_gradient`, the first NaN or ±∞ of ∇Ũ that a fused
/// pass found (`lanes::sweep` with a backup, which checks the gradient block by block as it
/// goes), after undoing the step; `Ok` for `None`.
fn reject_bad_gradient<T: Real, K: KineticSteps<T>, X: Thermostat<T>>(
    kinetics: &mut K,
    thermostat: &mut X,
    phase: &mut Phase<'_, T>,
    bad_gradient: Option<usize>,
    saved_xi: T,
) -> Result<(), StepError> {
    match bad_gradient {
        None => Ok(()),
        Some(index) => {
            undo_step(kinetics, thermostat, phase, saved_xi);
            Err(StepError::NonFiniteGradient { index })
        }
    }
}

/// A dense mass's last pass: M⁻¹p of the new p ([`KineticSteps::prepare`]), then the body
/// that `pass` builds over the prepared kinetics on every coordinate, with the normals `z`
/// drawn before the step (the θ and p it changes were saved whole, so no backup).
#[inline(always)]
fn prepared_sweep<'k, T, K, X, R, F>(
    kinetics: &'k mut K,
    (theta, p, g, z): (&mut [T], &mut [T], &mut [T], &[T]),
    thermostat: &mut X,
    pass: impl FnOnce(&'k K) -> F,
) where
    T: Real,
    K: KineticSteps<T>,
    X: Thermostat<T>,
    R: Rng + ?Sized,
    F: crate::lanes::Body<T>,
{
    kinetics.prepare(p);
    let kin = &*kinetics;
    let slots = crate::lanes::Slots::new(theta, p, g);
    crate::lanes::sweep(
        slots,
        crate::lanes::Noise::<T, R>::Drawn(z),
        thermostat,
        kin,
        pass(kin),
    );
}

/// Puts θ, p and ξ back as they were before a committed step (from the fused pass's backup, or
/// what a dense mass saved).
fn undo_step<T: Real, K: KineticSteps<T>, X: Thermostat<T>>(
    kinetics: &mut K,
    thermostat: &mut X,
    phase: &mut Phase<'_, T>,
    saved_xi: T,
) {
    kinetics.restore_state(phase, thermostat.values_mut());
    thermostat.restore_scalar_state(saved_xi);
}

/// The discretisation of the SDE samplers (SGHMC, SGNHT, mSGNHT, SGMGT); both take one gradient
/// evaluation per step.
///
/// * `Euler`: the first-order scheme of Ding et al. 2014 (Alg. 1) and Li et al. 2016 (§2.2):
///   kick p with the friction, gradient and noise, then drift θ and the thermostat with the new
///   p. Its stationary-distribution error is O(h).
/// * `Splitting`: the symmetric splitting of Li et al. 2016 (§3), error O(h²): half a drift,
///   half the friction solved exactly, a full gradient-and-noise kick, the other half friction,
///   half a drift (A–B–O–B–A). SGMGT composes the same pieces A–O–B–O–A
///   (`docs/splitting-composition.md`).
///
/// A params type's `with_integrator` takes the scheme at run time (this enum, the default of
/// every params type; both schemes are compiled in) or at compile time ([`Euler`],
/// [`Splitting`]: only that scheme's code is compiled and linked, which is what a firmware that
/// runs one scheme wants).
///
/// ```
/// use sgmcmc::prelude::*;
/// // Run time: the value can come from a configuration file.
/// let runtime = SgnhtParams::new(0.05f32).with_integrator(Integrator::Euler);
/// // Compile time: the sampler's type says Euler, and it links no splitting code.
/// let fixed = SgnhtParams::new(0.05f32).with_integrator(Euler);
/// assert_eq!(runtime.integrator(), fixed.integrator());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Integrator {
    /// First-order Euler scheme.
    Euler,
    /// Second-order symmetric splitting scheme.
    #[default]
    Splitting,
}

/// How a sampler's settings choose its integrator: [`Integrator`] at run time, [`Euler`] or
/// [`Splitting`] at compile time (see [`Integrator`]). Sealed, and hidden from the docs: a bound
/// that code generic over a sampler's integrator names, not a concept of its own.
#[doc(hidden)]
pub trait IntegratorChoice:
    Copy + core::fmt::Debug + PartialEq + Default + Send + Sync + sealed::Sealed + 'static
{
    /// The scheme of the next step.
    fn integrator(&self) -> Integrator;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Integrator {}
    impl Sealed for super::Euler {}
    impl Sealed for super::Splitting {}
}

impl IntegratorChoice for Integrator {
    #[inline(always)]
    fn integrator(&self) -> Integrator {
        *self
    }
}

/// The Euler scheme chosen at compile time ([`Integrator::Euler`] at run time; see
/// [`Integrator`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Euler;

impl IntegratorChoice for Euler {
    #[inline(always)]
    fn integrator(&self) -> Integrator {
        Integrator::Euler
    }
}

/// The symmetric splitting scheme chosen at compile time ([`Integrator::Splitting`] at run
/// time; see [`Integrator`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Splitting;

impl IntegratorChoice for Splitting {
    #[inline(always)]
    fn integrator(&self) -> Integrator {
        Integrator::Splitting
    }
}

/// The thermostat update of SGNHT with a general mass M (Roychowdhury & Parthasarathy 2017).
///
/// With M = mI both rules are ξ ← ξ + (pᵀM⁻¹p/n − 1)h; for any other mass only the derived rule
/// leaves the target stationary (`docs/sgnht-mass-thermostat.md` derives it from the
/// Fokker–Planck equation; `tests/mass_samplers.rs` measures the printed rule's bias).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ThermostatRule {
    /// dξ = (|M⁻¹p|²/tr M⁻¹ − 1) dt: stationary for every M. The default.
    #[default]
    Derived,
    /// dξ = (pᵀM⁻¹p/n − 1) dt as printed in Roychowdhury & Parthasarathy 2017, Alg. 2:
    /// stationary only for M ∝ I (kept for comparison).
    Printed,
}
