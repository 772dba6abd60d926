//! Kinetic energies: the separable [`Kinetic`] trait (SGMGT's K and F) and the mass matrices of the Gaussian samplers.
//!
//! * SGMGT / SGMGT-D are generic over a [`Kinetic`] K
//!   ([`SgmgtParams::with_kinetic`](crate::sampler::SgmgtParams::with_kinetic); default the
//!   softened [`MonomialGamma`] with a = 1, c = 5) and a thermostat potential F of the same
//!   trait ([`SgmgtParams::with_potential`](crate::sampler::SgmgtParams::with_potential);
//!   default [`Gaussian::identity`], F(ξ) = ξ²/2).
//! * The Gaussian samplers take a mass M through their `set_mass`: a [`MassBuffer`] (identity,
//!   diagonal or dense, in caller buffers); [`Mass`] is its read-only view, and
//!   [`AdaptiveMass`] lets the MCEM wrapper ([`crate::adapt::Mcem`]) replace M⁻¹ in place.
//!
//! A [`Kinetic`] is *separable*, K(p) = Σᵢ Kᵢ(pᵢ), which covers the Gaussian kinetics with
//! identity or diagonal mass ([`Gaussian`]) and the monomial-gamma family of Zhang et al. 2017
//! (eq. 3 with M = I, and its softened forms eq. 12; [`MonomialGamma`]). Every method works
//! on one coordinate `i`, so the samplers' loops stay single passes over the slices and a kinetic
//! energy never needs a buffer of its own beyond what the caller lends it (a diagonal mass).
//! The same trait describes the thermostat potential F(ξ) of SGMGT (Zhang et al. 2017, eq. 10):
//! the marginal of ξ is exp(−F), ∇F enters the friction, and the first-order Langevin term on ξ
//! is the flow [`Kinetic::friction_flow`] plus Gaussian noise, exactly as for p.

mod gaussian;
mod mass;
mod monomial_gamma;

pub use gaussian::Gaussian;
pub use mass::{AdaptiveMass, DenseMass, DiagonalMass, IdentityMass, Mass, MassBuffer, MassShape};
pub(crate) use mass::{MassParts, symmetric_eigen};
pub use monomial_gamma::{MonomialGamma, Softening};

use crate::arith::Arith;
use crate::error::{LayoutError, ParamError};
use crate::real::Real;
use rand_core::Rng;

/// A separable kinetic energy K(p) = Σᵢ Kᵢ(pᵢ) with exact sampling from exp(−K).
///
/// Implementations are cheap `Copy` values (parameters and at most a borrowed slice), validated
/// by their constructors; none of the methods can panic or allocate.
pub trait Kinetic<T: Real>: Copy {
    /// Whether the samplers run their per-coordinate loops over this kinetic energy in
    /// unrolled chunks of eight, for the vectoriser: worth it only for a body without branches
    /// or library calls (the crate's [`Kinetic::specialise`]d forms); otherwise eight inlined
    /// copies of a large body only cost code size. A hint that never changes a value.
    #[doc(hidden)]
    const UNROLL: bool = false;

    /// Checks that this kinetic energy fits a state of dimension `n` (a diagonal mass must have
    /// length `n`); called once by the sampler's constructor.
    fn check_dim(&self, n: usize) -> Result<(), LayoutError>;

    /// Checks this kinetic energy's parameters; called by the sampler's constructor with its
    /// other settings (so that every setting is checked at one time). Nothing to check by
    /// default.
    fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }

    /// Kᵢ(p).
    fn energy(&self, i: usize, p: T) -> T;

    /// ∂Kᵢ/∂p at p.
    fn gradient(&self, i: usize, p: T) -> T;

    /// ∂²Kᵢ/∂p² at p (the pointwise second derivative; where it does not exist — p = 0 of the
    /// stiff kinetics with a ≥ 1 — the implementation documents what it returns).
    fn curvature(&self, i: usize, p: T) -> T;

    /// (∂Kᵢ/∂p, ∂²Kᵢ/∂p²) together; implementations share the work where they can.
    #[inline]
    fn gradient_and_curvature(&self, i: usize, p: T) -> (T, T) {
        (self.gradient(i, p), self.curvature(i, p))
    }

    /// One exact draw of pᵢ from the density ∝ exp(−Kᵢ(p)), and the number of proposals it took
    /// (1 unless the implementation uses rejection sampling).
    fn sample_counted<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> (T, u32);

    /// One exact draw of pᵢ from the density ∝ exp(−Kᵢ(p)).
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> T {
        self.sample_counted(i, rng).0
    }

    /// Whether [`sample_tempered_counted`](Self::sample_tempered_counted) draws exactly at every
    /// temperature (the crate's kinetics do). Without it, SGMGT accepts a temperature T ≠ 1 only
    /// when it never redraws from this kinetic energy.
    #[inline]
    fn tempered_sampling(&self) -> bool {
        false
    }

    /// One exact draw of pᵢ from the density ∝ exp(−Kᵢ(p)/T) at temperature T ≥ 0 (T = 0: the
    /// mode), and the number of proposals; at T = 1 the same draw as
    /// [`sample_counted`](Self::sample_counted). The default is `sample_counted`, exact only at
    /// T = 1 ([`tempered_sampling`](Self::tempered_sampling) says so).
    #[inline]
    fn sample_tempered_counted<R: Rng + ?Sized>(
        &self,
        i: usize,
        rng: &mut R,
        _temperature: T,
    ) -> (T, u32) {
        self.sample_counted(i, rng)
    }

    /// The flow of the friction ODE dp/dt = −κ ∂Kᵢ/∂p over a time t, given `kt` = κ·t (κ may be
    /// negative: a negative thermostat heats). Exact where a closed form exists; otherwise a
    /// documented second-order, sign-preserving approximation. This is the "B" piece of the
    /// symmetric splitting integrator for general kinetics.
    fn friction_flow(&self, i: usize, p: T, kt: T) -> T;

    /// [`gradient`](Self::gradient) in a step copy whose polynomials fuse when `A` says so
    /// ([`crate::dispatch`]); the crate's kinetics that use them override it, any other
    /// kinetic energy is itself.
    #[doc(hidden)]
    #[allow(private_bounds)]
    #[inline(always)]
    fn gradient_in<A: Arith>(&self, i: usize, p: T) -> T {
        self.gradient(i, p)
    }

    /// [`gradient_and_curvature`](Self::gradient_and_curvature) as
    /// [`gradient_in`](Self::gradient_in).
    #[doc(hidden)]
    #[allow(private_bounds)]
    #[inline(always)]
    fn gradient_and_curvature_in<A: Arith>(&self, i: usize, p: T) -> (T, T) {
        self.gradient_and_curvature(i, p)
    }

    /// [`friction_flow`](Self::friction_flow) as [`gradient_in`](Self::gradient_in).
    #[doc(hidden)]
    #[allow(private_bounds)]
    #[inline(always)]
    fn friction_flow_in<A: Arith>(&self, i: usize, p: T, kt: T) -> T {
        self.friction_flow(i, p, kt)
    }

    /// K(p) = Σᵢ Kᵢ(pᵢ).
    #[inline]
    fn total_energy(&self, p: &[T]) -> T {
        let mut s = T::ZERO;
        for (i, &x) in p.iter().enumerate() {
            s += self.energy(i, x);
        }
        s
    }

    /// Fills `p` with exact draws from exp(−K/T) (see
    /// [`sample_tempered_counted`](Self::sample_tempered_counted)); returns the total number of
    /// proposals.
    #[inline]
    fn sample_all_tempered<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        p: &mut [T],
        temperature: T,
    ) -> u64 {
        let mut tries = 0u64;
        for (i, x) in p.iter_mut().enumerate() {
            let (v, k) = self.sample_tempered_counted(i, rng, temperature);
            *x = v;
            tries += u64::from(k);
        }
        tries
    }

    /// Fills `p` with exact draws from exp(−K); returns the total number of proposals.
    #[inline]
    fn sample_all<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [T]) -> u64 {
        let mut tries = 0u64;
        for (i, x) in p.iter_mut().enumerate() {
            let (v, k) = self.sample_counted(i, rng);
            *x = v;
            tries += u64::from(k);
        }
        tries
    }

    /// Runs the crate's `visitor` with this kinetic energy, or with an equal one whose
    /// per-coordinate methods carry no run-time dispatch: the samplers' loops vectorise only
    /// without a branch on the kind in their bodies. The default runs it with `self`; the
    /// visitor trait is private, so this method can be neither called nor overridden outside
    /// the crate.
    #[doc(hidden)]
    #[inline(always)]
    fn specialise<V: specialise::Visitor<T>>(&self, visitor: V) -> V::Output {
        visitor.run(*self)
    }
}

/// The visitor of [`Kinetic::specialise`] (public in a private module: nameable only here).
pub(crate) mod specialise {
    use super::Kinetic;
    use crate::real::Real;

    /// A computation generic over a [`Kinetic`].
    pub trait Visitor<T: Real> {
        /// What the computation returns.
        type Output;
        /// Runs the computation with `kinetic`.
        fn run<K: Kinetic<T>>(self, kinetic: K) -> Self::Output;
    }
}
