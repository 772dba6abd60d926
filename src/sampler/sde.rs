//! The shell every SDE sampler (SGHMC, SGNHT, mSGNHT, SGMGT) is built on: its state, its kinetics, the dispatch to the integrator.
//!
//! A sampler supplies its thermostat, its θ term and its momentum diffusion for each step; the
//! shell runs the chosen integrator under the sampler's kinetics — a [`MassBuffer`] (identity,
//! diagonal or dense, dispatched once in `integrator::sde::visit_mass`) or a separable
//! [`Kinetic`] — and redraws the momentum from exp(−K). What a failed step leaves behind is the
//! integrator's business alone.

use crate::error::{LayoutError, StepError};
use crate::gradient::Gradient;
use crate::integrator::sde::{
    Kinetics, KineticsVisitor, PositionTerm, Sde, Separable, Sums, Thermostat, UnitMass, visit_mass,
};
use crate::integrator::state::Phase;
use crate::integrator::{Composition, Integrator, sde_step};
use crate::kinetic::{Kinetic, MassBuffer, MassShape};
use crate::real::Real;
use crate::variates::fill_standard_normal;
use rand_core::Rng;

/// Where an SDE sampler's kinetic energy comes from: a Gaussian mass (SGHMC, SGNHT, mSGNHT) or
/// a separable [`Kinetic`] (SGMGT).
pub(crate) trait KineticsSource<T: Real> {
    /// One step of `integrator` with these kinetics and the given thermostat and θ term.
    #[allow(clippy::too_many_arguments)]
    fn step<X, L, G, R>(
        &mut self,
        integrator: Integrator,
        composition: Composition,
        phase: &mut Phase<'_, T>,
        thermostat: X,
        theta: L,
        diffusion: T,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError>
    where
        X: Thermostat<T>,
        L: PositionTerm<T>,
        G: Gradient<T> + ?Sized,
        R: Rng + ?Sized;

    /// Fills `p` with a draw from exp(−K); returns the proposals used (one per coordinate but
    /// for rejection samplers).
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64;
}

/// One step under a mass's kinetics piece ([`visit_mass`]).
struct MassStep<'s, 'p, T, X, L, G: ?Sized, R: ?Sized> {
    integrator: Integrator,
    composition: Composition,
    phase: &'s mut Phase<'p, T>,
    thermostat: X,
    theta: L,
    diffusion: T,
    h: T,
    model: &'s mut G,
    rng: &'s mut R,
}

impl<T, X, L, G, R> KineticsVisitor<T> for MassStep<'_, '_, T, X, L, G, R>
where
    T: Real,
    X: Thermostat<T>,
    L: PositionTerm<T>,
    G: Gradient<T> + ?Sized,
    R: Rng + ?Sized,
{
    type Output = Result<Sums<T>, StepError>;
    #[inline(always)]
    fn visit<K: Kinetics<T>>(self, kinetics: K) -> Self::Output {
        let sde = Sde {
            kinetics,
            thermostat: self.thermostat,
            theta: self.theta,
            diffusion: self.diffusion,
        };
        sde_step(
            self.integrator,
            self.composition,
            self.phase,
            sde,
            self.h,
            self.model,
            self.rng,
        )
    }
}

impl<T: Real> KineticsSource<T> for MassBuffer<'_, T> {
    #[inline(always)]
    fn step<X, L, G, R>(
        &mut self,
        integrator: Integrator,
        composition: Composition,
        phase: &mut Phase<'_, T>,
        thermostat: X,
        theta: L,
        diffusion: T,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError>
    where
        X: Thermostat<T>,
        L: PositionTerm<T>,
        G: Gradient<T> + ?Sized,
        R: Rng + ?Sized,
    {
        let step = MassStep {
            integrator,
            composition,
            phase,
            thermostat,
            theta,
            diffusion,
            h,
            model,
            rng,
        };
        visit_mass(self, step)
    }

    /// p ~ N(0, M): standard normals in order, scaled by the mass ([`crate::kinetic::Mass::sample`]).
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        self.mass().sample(rng, p);
        p.len() as u64
    }
}

impl<T: Real> KineticsSource<T> for UnitMass {
    #[inline(always)]
    fn step<X, L, G, R>(
        &mut self,
        integrator: Integrator,
        composition: Composition,
        phase: &mut Phase<'_, T>,
        thermostat: X,
        theta: L,
        diffusion: T,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError>
    where
        X: Thermostat<T>,
        L: PositionTerm<T>,
        G: Gradient<T> + ?Sized,
        R: Rng + ?Sized,
    {
        let sde = Sde {
            kinetics: UnitMass,
            thermostat,
            theta,
            diffusion,
        };
        sde_step(integrator, composition, phase, sde, h, model, rng)
    }

    /// p ~ N(0, I).
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        fill_standard_normal(rng, p);
        p.len() as u64
    }
}

impl<T: Real, K: Kinetic<T>> KineticsSource<T> for Separable<K> {
    #[inline(always)]
    fn step<X, L, G, R>(
        &mut self,
        integrator: Integrator,
        composition: Composition,
        phase: &mut Phase<'_, T>,
        thermostat: X,
        theta: L,
        diffusion: T,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError>
    where
        X: Thermostat<T>,
        L: PositionTerm<T>,
        G: Gradient<T> + ?Sized,
        R: Rng + ?Sized,
    {
        let sde = Sde {
            kinetics: *self,
            thermostat,
            theta,
            diffusion,
        };
        sde_step(integrator, composition, phase, sde, h, model, rng)
    }

    /// Exact draws from exp(−K) (rejection sampling for the softened kinetics).
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        self.0.sample_all(rng, p)
    }
}

/// The state every SDE sampler holds: θ, p and the workspace, the kinetics, the integrator, and
/// the counts of momentum and thermostat redraws.
#[derive(Debug)]
pub(crate) struct Shell<'a, T, M> {
    pub phase: Phase<'a, T>,
    pub kinetics: M,
    pub integrator: Integrator,
    /// Coordinates redrawn from exp(−K) or exp(−F), and the proposals that took.
    pub redrawn: (u64, u64),
}

impl<'a, T: Real, M: KineticsSource<T>> Shell<'a, T, M> {
    /// Checks θ, p and the 2n-entry workspace ([`Phase::new`]).
    pub fn new(
        theta: &'a mut [T],
        p: &'a mut [T],
        work: &'a mut [T],
        kinetics: M,
        integrator: Integrator,
    ) -> Result<Self, LayoutError> {
        Ok(Shell {
            phase: Phase::new(theta, p, work)?,
            kinetics,
            integrator,
            redrawn: (0, 0),
        })
    }

    /// One step of the shell's integrator with the sampler's pieces.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn step<X, L, G, R>(
        &mut self,
        composition: Composition,
        thermostat: X,
        theta: L,
        diffusion: T,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError>
    where
        X: Thermostat<T>,
        L: PositionTerm<T>,
        G: Gradient<T> + ?Sized,
        R: Rng + ?Sized,
    {
        self.kinetics.step(
            self.integrator,
            composition,
            &mut self.phase,
            thermostat,
            theta,
            diffusion,
            h,
            model,
            rng,
        )
    }

    /// Redraws p from exp(−K), counting the proposals.
    pub fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let tries = self.kinetics.draw(rng, self.phase.p);
        self.redrawn.0 += self.phase.p.len() as u64;
        self.redrawn.1 += tries;
    }

    /// The dimension as a float.
    #[inline]
    pub fn dim(&self) -> T {
        T::from_usize(self.phase.len())
    }
}

impl<T: Real> Shell<'_, T, MassBuffer<'_, T>> {
    /// Checks that `mass` fits θ's length and the integrator: a dense mass runs with the
    /// splitting integrator only with its eigendecomposition ([`LayoutError::UnsupportedMass`]).
    pub fn check_mass(&self, mass: &MassBuffer<'_, T>) -> Result<(), LayoutError> {
        let view = mass.mass();
        view.check_dim(self.phase.len())?;
        if view.shape() == MassShape::Dense
            && self.integrator == Integrator::Splitting
            && !view.has_friction_flow()
        {
            return Err(LayoutError::UnsupportedMass);
        }
        Ok(())
    }
}

/// The [`ChainState`](super::ChainState) of a sampler with a `shell` field.
macro_rules! shell_chain_state {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> $crate::sampler::ChainState<T> for $ty {
            fn position(&self) -> &[T] {
                self.shell.phase.theta
            }
            fn momentum(&self) -> &[T] {
                self.shell.phase.p
            }
            fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
                (self.shell.phase.theta, self.shell.phase.p)
            }
            fn resample_momentum<R: rand_core::Rng + ?Sized>(&mut self, rng: &mut R) {
                self.shell.resample_momentum(rng);
            }
        }
    };
}
pub(crate) use shell_chain_state;

/// The [`AdaptiveMass`](crate::kinetic::AdaptiveMass) of a sampler whose shell holds a
/// [`MassBuffer`] (in its `shell.kinetics`, or in `shell.mass` for the proposal samplers).
macro_rules! mass_adaptive {
    ([$($generics:tt)*] $ty:ty, $($field:ident).+) => {
        impl<$($generics)*> $crate::kinetic::AdaptiveMass<T> for $ty {
            fn mass(&self) -> $crate::kinetic::Mass<'_, T> {
                self.$($field).+.mass()
            }
            fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), $crate::LinalgError> {
                self.$($field).+.set_inverse_mass(inv_mass)
            }
        }
    };
}
pub(crate) use mass_adaptive;
