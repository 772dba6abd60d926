//! The shell every SDE sampler (SGHMC, SGNHT, mSGNHT, SGMGT) is built on: its state, its kinetics, the dispatch to the integrator.
//!
//! A sampler supplies its thermostat, its θ term and its momentum diffusion for each step; the
//! shell runs the chosen integrator under the sampler's kinetics — a [`MassBuffer`] (identity,
//! diagonal or dense, dispatched once in `integrator::sde::visit_mass`) or a separable
//! [`Kinetic`] — and redraws the momentum from exp(−K). What a failed step leaves behind is the
//! integrator's business alone.

// `KineticSource` is the sealed supertrait of the public `MassKind`: reachable through
// it, unnameable outside the crate, and its `visit` takes the crate's own kinetics pieces, which
// the lints below would otherwise flag on every implementation.
#![allow(private_bounds, private_interfaces)]

use super::run::StepStats;
use crate::arith::Arith;
use crate::error::LinalgError;
use crate::error::{Buffer, LayoutError, StepError};
use crate::gradient::Gradient;
use crate::integrator::sde::{
    DenseKinetics, DiagonalKinetics, KineticSteps, KineticStepsVisitor, NoThetaTerm, PositionTerm,
    Sde, Separable, Sums, Thermostat, UnitMass, visit_mass,
};
use crate::integrator::state::{Phase, check_finite, check_len};
use crate::integrator::{Composition, Integrator, IntegratorChoice};
use crate::kinetic::{DenseMass, DiagonalMass, IdentityMass, Kinetic, Mass, MassBuffer, MassShape};
use crate::lanes::copy_into;
use crate::real::Real;
use crate::sampler::Scalars;
use crate::variates::step_normals;
use core::marker::PhantomData;
use rand_core::Rng;

/// How a sampler (SGHMC, SGNHT, HMC) holds its Gaussian mass, chosen by its type: at run time
/// ([`MassBuffer`], the default: identity, diagonal or dense, replaceable by any shape through
/// `set_mass`; every shape's step code is compiled in), or fixed at compile time to one shape
/// ([`IdentityMass`], [`DiagonalMass`], [`DenseMass`]; only that shape's step code is compiled
/// and linked, what a firmware that runs one shape wants). A sampler takes a fixed shape with
/// `with_mass` after `new`:
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
///
/// let params = SgnhtParams::new(0.05f32).with_integrator(Euler);
/// let (mut theta, mut p, mut xi, mut work) = ([0.0f32; 3], [0.0f32; 3], [0.0f32], [0.0f32; 6]);
/// let mut inv_mass = [1.0f32, 2.0, 4.0];
/// let mut sgnht = Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work)?
///     .with_mass(DiagonalMass::new(&mut inv_mass)?)?;
/// let mut model = |t: &[f32], g: &mut [f32]| g.copy_from_slice(t);
/// sgnht.step(&mut model, &mut Pcg64::new(1, 2))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(private_bounds)] // the sealed pattern: the step-side supertrait is the crate's own
pub trait MassKind<T: Real>: KineticSource<T> + core::fmt::Debug + sealed::Sealed {
    /// The read-only view of the current mass.
    fn mass(&self) -> Mass<'_, T>;
    /// Replaces M⁻¹ in place (as [`MassBuffer::set_inverse_mass`]; [`LinalgError::ReadOnly`]
    /// for the identity and a fixed diagonal).
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError>;
}

mod sealed {
    use crate::kinetic::{DenseMass, DiagonalMass, IdentityMass, MassBuffer};
    pub trait Sealed {}
    impl<T> Sealed for MassBuffer<'_, T> {}
    impl Sealed for IdentityMass {}
    impl<T> Sealed for DiagonalMass<'_, T> {}
    impl<T> Sealed for DenseMass<'_, T> {}
}

impl<T: Real> MassKind<T> for MassBuffer<'_, T> {
    fn mass(&self) -> Mass<'_, T> {
        MassBuffer::mass(self)
    }
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        MassBuffer::set_inverse_mass(self, inv_mass)
    }
}

impl<T: Real> MassKind<T> for IdentityMass {
    fn mass(&self) -> Mass<'_, T> {
        Mass::identity()
    }
    /// [`LinalgError::ReadOnly`]: the identity is not adaptable.
    fn set_inverse_mass(&mut self, _inv_mass: &[T]) -> Result<(), LinalgError> {
        Err(LinalgError::ReadOnly)
    }
}

impl<T: Real> MassKind<T> for DiagonalMass<'_, T> {
    fn mass(&self) -> Mass<'_, T> {
        self.0.mass()
    }
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        self.0.set_inverse_mass(inv_mass)
    }
}

impl<T: Real> MassKind<T> for DenseMass<'_, T> {
    fn mass(&self) -> Mass<'_, T> {
        self.0.mass()
    }
    fn set_inverse_mass(&mut self, inv_mass: &[T]) -> Result<(), LinalgError> {
        self.0.set_inverse_mass(inv_mass)
    }
}

/// Where an SDE sampler's kinetic energy comes from: a Gaussian mass (SGHMC, SGNHT), the identity
/// (mSGNHT) or a separable [`Kinetic`] (SGMGT).
// (`pub` in a crate-private module: the supertrait of the sealed public `MassKind`.)
pub trait KineticSource<T: Real> {
    /// Runs `visitor` with this source's kinetics piece, its polynomials in the rounding `A`.
    #[allow(private_bounds)]
    fn visit<A: Arith, V: KineticStepsVisitor<T>>(&mut self, visitor: V) -> V::Output;

    /// Fills `p` with a draw from exp(−K); returns the proposals used (one per coordinate but
    /// for rejection samplers).
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64;

    /// Fills `p` with a draw from exp(−K/T): a Gaussian's draw scaled by √T (covariance T·M;
    /// untouched at T = 1).
    #[inline(always)]
    fn draw_tempered<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T], temperature: T) -> u64 {
        let tries = self.draw(rng, p);
        if temperature != T::ONE {
            let scale = temperature.sqrt();
            p.iter_mut().for_each(|x| *x *= scale);
        }
        tries
    }
}

impl<T: Real> KineticSource<T> for MassBuffer<'_, T> {
    #[inline(always)]
    fn visit<A: Arith, V: KineticStepsVisitor<T>>(&mut self, visitor: V) -> V::Output {
        visit_mass::<T, A, V>(self, visitor)
    }

    /// p ~ N(0, M): standard normals in order, scaled by the mass ([`crate::kinetic::Mass::sample`]).
    #[cfg_attr(feature = "std", inline(always))]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        self.mass().sample(rng, p);
        p.len() as u64
    }
}

impl<T: Real> KineticSource<T> for IdentityMass {
    #[inline(always)]
    fn visit<A: Arith, V: KineticStepsVisitor<T>>(&mut self, visitor: V) -> V::Output {
        visitor.visit(UnitMass::<A>::new())
    }

    /// p ~ N(0, I): the samplers' normals.
    #[cfg_attr(feature = "std", inline(always))]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        step_normals(rng, p);
        p.len() as u64
    }
}

impl<T: Real> KineticSource<T> for DiagonalMass<'_, T> {
    #[inline(always)]
    fn visit<A: Arith, V: KineticStepsVisitor<T>>(&mut self, visitor: V) -> V::Output {
        visitor.visit(DiagonalKinetics::<T, A>::new(self.inverse()))
    }

    /// p ~ N(0, M) ([`crate::kinetic::Mass::sample`]).
    #[cfg_attr(feature = "std", inline(always))]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        self.mass().sample(rng, p);
        p.len() as u64
    }
}

impl<T: Real> KineticSource<T> for DenseMass<'_, T> {
    #[inline(always)]
    fn visit<A: Arith, V: KineticStepsVisitor<T>>(&mut self, visitor: V) -> V::Output {
        // (The constructors build only a dense buffer, so the parts are always there; the
        // empty view below, never reached, is the identity's M⁻¹p of nothing, not a panic.)
        let (mass, inv_mass_p, backup) =
            self.dense_parts()
                .unwrap_or((crate::kinetic::Mass::identity(), &mut [], &mut []));
        visitor.visit(DenseKinetics {
            mass,
            inv_mass_p,
            backup,
            arith: PhantomData::<A>,
        })
    }

    /// p ~ N(0, M) ([`crate::kinetic::Mass::sample`]).
    #[cfg_attr(feature = "std", inline(always))]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        self.mass().sample(rng, p);
        p.len() as u64
    }
}

impl<T: Real> KineticSource<T> for UnitMass {
    #[inline(always)]
    fn visit<A: Arith, V: KineticStepsVisitor<T>>(&mut self, visitor: V) -> V::Output {
        visitor.visit(UnitMass::<A>::new())
    }

    /// p ~ N(0, I), from the vectorised normals.
    #[cfg_attr(feature = "std", inline(always))]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        step_normals(rng, p);
        p.len() as u64
    }
}

impl<T: Real, K: Kinetic<T>> KineticSource<T> for Separable<K> {
    /// Runs `visitor` under the kinetic energy's specialised form ([`Kinetic::specialise`]).
    #[inline(always)]
    fn visit<A: Arith, V: KineticStepsVisitor<T>>(&mut self, visitor: V) -> V::Output {
        self.0
            .specialise(SeparableVisitor::<V, A>(visitor, PhantomData))
    }

    /// Exact draws from exp(−K) (rejection sampling for the softened kinetics).
    #[cfg_attr(feature = "std", inline(always))]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        self.0.sample_all(rng, p)
    }

    /// Exact draws from exp(−K/T) ([`Kinetic::sample_tempered_counted`]).
    #[inline(always)]
    fn draw_tempered<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T], temperature: T) -> u64 {
        self.0.sample_all_tempered(rng, p, temperature)
    }
}

/// A [`KineticStepsVisitor`] run under a separable kinetic energy's specialised form.
struct SeparableVisitor<V, A>(V, PhantomData<A>);

impl<T: Real, V: KineticStepsVisitor<T>, A: Arith> crate::kinetic::specialise::Visitor<T>
    for SeparableVisitor<V, A>
{
    type Output = V::Output;
    #[inline(always)]
    fn run<K: Kinetic<T>>(self, kinetic: K) -> V::Output {
        self.0.visit(Separable::<K, A>::new(kinetic))
    }
}

/// One step of an SDE sampler, run under whichever kinetics piece its source stands for.
struct SdeStep<'s, 'p, T, X, L, I, G: ?Sized, R: ?Sized> {
    integrator: I,
    composition: Composition,
    phase: &'s mut Phase<'p, T>,
    thermostat: X,
    theta: L,
    diffusion: T,
    h: T,
    model: &'s mut G,
    rng: &'s mut R,
}

impl<T, X, L, I, G, R> KineticStepsVisitor<T> for SdeStep<'_, '_, T, X, L, I, G, R>
where
    T: Real,
    X: Thermostat<T>,
    L: PositionTerm<T>,
    I: IntegratorChoice,
    G: Gradient<T> + ?Sized,
    R: Rng + ?Sized,
{
    type Output = Result<Sums<T>, StepError>;
    #[inline(always)]
    fn visit<K: KineticSteps<T>>(self, kinetics: K) -> Self::Output {
        let mut sde = Sde {
            kinetics,
            thermostat: self.thermostat,
            theta: self.theta,
            diffusion: self.diffusion,
        };
        let (integrator, composition) = (self.integrator, self.composition);
        sde.step(
            integrator,
            composition,
            self.phase,
            self.h,
            self.model,
            self.rng,
        )
    }
}

/// A kinetics source's visit as a [`crate::dispatch::Kernel`]: the whole step under the
/// widest instruction set the CPU has.
struct Visit<'k, T, M, V> {
    kinetics: &'k mut M,
    visitor: V,
    real: PhantomData<T>,
}

impl<T: Real, M: KineticSource<T>, V: KineticStepsVisitor<T>> crate::dispatch::Kernel
    for Visit<'_, T, M, V>
{
    type Output = V::Output;
    #[inline(always)]
    fn run<A: Arith>(self) -> V::Output {
        self.kinetics.visit::<A, V>(self.visitor)
    }
}

/// The state every SDE sampler holds: θ, p and the workspace, the kinetics, the integrator, and
/// the counts of momentum and thermostat redraws.
#[derive(Debug)]
pub(crate) struct Shell<'a, T, M, I> {
    pub phase: Phase<'a, T>,
    pub kinetics: M,
    pub integrator: I,
    /// Coordinates redrawn from exp(−K) or exp(−F), and the proposals that took.
    pub redrawn: (u64, u64),
}

impl<'a, T: Real, M: KineticSource<T>, I: IntegratorChoice> Shell<'a, T, M, I> {
    /// Saves θ, p and the redraw counters into `saved`.
    pub fn save_state(&self, saved: &mut super::SavedState<'_, T>) {
        copy_into(saved.theta, self.phase.theta);
        copy_into(saved.p, self.phase.p);
        saved.counts = self.redrawn;
    }

    /// Restores what [`Shell::save_state`] saved.
    pub fn restore_state(&mut self, saved: &super::SavedState<'_, T>) {
        copy_into(self.phase.theta, saved.theta);
        copy_into(self.phase.p, saved.p);
        self.redrawn = saved.counts;
    }

    /// The buffer part of a checkpoint: θ, p and the per-coordinate ξ (`xi`, or empty).
    pub fn checkpoint_len(&self, xi: &[T]) -> usize {
        self.phase.len().saturating_mul(2).saturating_add(xi.len())
    }

    /// Writes θ, p and `xi` into `out` ([`crate::sampler::Checkpoint::save`]); the scalars
    /// with the redraw counters.
    pub fn save(&self, xi: &[T], out: &mut [T]) -> Result<Scalars<T>, LayoutError> {
        crate::sampler::write_parts(out, &[self.phase.theta, self.phase.p, xi])?;
        Ok(Scalars {
            redrawn: self.redrawn,
            ..Scalars::default()
        })
    }

    /// Restores θ, p and `xi` from `data` and the redraw counters from `state`; checks all
    /// of it first.
    pub fn restore(
        &mut self,
        xi: &mut [T],
        state: &Scalars<T>,
        data: &[T],
    ) -> Result<(), LayoutError> {
        state.check()?;
        let n = self.phase.len();
        let [theta, p, saved_xi] = crate::sampler::read_parts(data, [n, n, xi.len()], 3)?;
        copy_into(self.phase.theta, theta);
        copy_into(self.phase.p, p);
        copy_into(xi, saved_xi);
        self.redrawn = state.redrawn;
        Ok(())
    }

    /// Checks θ, p and the workspace of 2n entries, 3n with a per-coordinate thermostat
    /// ([`Phase::new`]).
    pub fn new(
        theta: &'a mut [T],
        p: &'a mut [T],
        work: &'a mut [T],
        kinetics: M,
        integrator: I,
        per_coordinate: bool,
    ) -> Result<Self, LayoutError> {
        Ok(Shell {
            phase: Phase::new(theta, p, work, per_coordinate)?,
            kinetics,
            integrator,
            redrawn: (0, 0),
        })
    }

    /// One step of the shell's integrator with the sampler's pieces: the sums of the new state
    /// and its statistics (the step size and the kinetic temperature Σ p∇K / n; the sampler adds
    /// its thermostat).
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
    ) -> Result<(Sums<T>, StepStats<T>), StepError>
    where
        X: Thermostat<T>,
        L: PositionTerm<T>,
        G: Gradient<T> + ?Sized,
        R: Rng + ?Sized,
    {
        let step = SdeStep {
            integrator: self.integrator,
            composition,
            phase: &mut self.phase,
            thermostat,
            theta,
            diffusion,
            h,
            model,
            rng,
        };
        let sums = crate::dispatch::run(Visit {
            kinetics: &mut self.kinetics,
            visitor: step,
            real: PhantomData,
        })?;
        let mut stats = StepStats::new(h);
        stats.kinetic_temperature = Some(sums.virial / self.dim());
        Ok((sums, stats))
    }

    /// One step of a Gaussian sampler (SGHMC, SGNHT, mSGNHT): A–B–O–B–A splitting, no θ term.
    #[inline(always)]
    pub fn step_gaussian<X, G, R>(
        &mut self,
        thermostat: X,
        diffusion: T,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<(Sums<T>, StepStats<T>), StepError>
    where
        X: Thermostat<T>,
        G: Gradient<T> + ?Sized,
        R: Rng + ?Sized,
    {
        let aboba = Composition::Aboba;
        self.step(aboba, thermostat, NoThetaTerm, diffusion, h, model, rng)
    }

    /// Redraws p from exp(−K/T) at the sampler's temperature T, counting the proposals.
    pub fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R, temperature: T) {
        let tries = self.kinetics.draw_tempered(rng, self.phase.p, temperature);
        self.redrawn.0 += self.phase.p.len() as u64;
        self.redrawn.1 += tries;
    }

    /// The dimension as a float.
    #[inline]
    pub fn dim(&self) -> T {
        T::from_usize(self.phase.len())
    }
}

impl<'a, T: Real, M: MassKind<T>, I: IntegratorChoice> Shell<'a, T, M, I> {
    /// Checks that `mass` fits θ's length and the integrator: a dense mass runs with the
    /// splitting integrator only with its eigendecomposition ([`LayoutError::UnsupportedMass`]).
    pub fn check_mass<M2: MassKind<T>>(&self, mass: &M2) -> Result<(), LayoutError> {
        let view = mass.mass();
        view.check_dim(self.phase.len())?;
        if view.shape() == MassShape::Dense
            && self.integrator.integrator() == Integrator::Splitting
            && !view.has_friction_flow()
        {
            return Err(LayoutError::UnsupportedMass);
        }
        Ok(())
    }

    /// Uses `mass` after [`Shell::check_mass`]. On an error the shell keeps its mass.
    pub fn set_mass(&mut self, mass: M) -> Result<(), LayoutError> {
        self.check_mass(&mass)?;
        self.kinetics = mass;
        Ok(())
    }

    /// The same shell with the mass `mass` of another kind, after [`Shell::check_mass`].
    pub fn with_mass<M2: MassKind<T>>(self, mass: M2) -> Result<Shell<'a, T, M2, I>, LayoutError> {
        self.check_mass(&mass)?;
        Ok(Shell {
            phase: self.phase,
            kinetics: mass,
            integrator: self.integrator,
            redrawn: self.redrawn,
        })
    }
}

/// Copies `xi` into the caller's thermostats `into` (to resume a chain). Errors, with `into`
/// unchanged: [`LayoutError::LengthMismatch`], or [`LayoutError::InvalidValue`] at the first
/// non-finite entry.
pub(crate) fn copy_thermostat<T: Real>(into: &mut [T], xi: &[T]) -> Result<(), LayoutError> {
    check_len(Buffer::Thermostat, into.len(), xi.len())?;
    check_finite(Buffer::Thermostat, xi)?;
    copy_into(into, xi);
    Ok(())
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
            /// p from exp(−K/T) at the sampler's temperature T.
            fn resample_momentum<R: rand_core::Rng + ?Sized>(&mut self, rng: &mut R) {
                let temperature = $crate::sampler::Tempered::temperature(self);
                self.shell.resample_momentum(rng, temperature);
            }
        }
    };
}
pub(crate) use shell_chain_state;

/// The [`Checkpoint`](crate::sampler::Checkpoint) of a shell sampler without scalars of its
/// own: θ, p and, with a field name, its per-coordinate ξ; the redraw counters.
macro_rules! shell_checkpoint {
    ([$($generics:tt)*] $ty:ty) => {
        /// θ and p; the redraw counters.
        impl<$($generics)*> $crate::sampler::Checkpoint<T> for $ty {
            type State = $crate::sampler::Scalars<T>;
            fn checkpoint_len(&self) -> usize {
                self.shell.checkpoint_len(&[])
            }
            fn save(&self, out: &mut [T]) -> Result<Self::State, $crate::LayoutError> {
                self.shell.save(&[], out)
            }
            fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), $crate::LayoutError> {
                self.shell.restore(&mut [], state, data)
            }
        }
    };
    ([$($generics:tt)*] $ty:ty, $xi:ident) => {
        /// θ, p and ξ; the redraw counters.
        impl<$($generics)*> $crate::sampler::Checkpoint<T> for $ty {
            type State = $crate::sampler::Scalars<T>;
            fn checkpoint_len(&self) -> usize {
                self.shell.checkpoint_len(self.$xi)
            }
            fn save(&self, out: &mut [T]) -> Result<Self::State, $crate::LayoutError> {
                self.shell.save(self.$xi, out)
            }
            fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), $crate::LayoutError> {
                self.shell.restore(self.$xi, state, data)
            }
        }
    };
}
pub(crate) use shell_checkpoint;

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
