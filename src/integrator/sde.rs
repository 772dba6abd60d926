//! The per-coordinate sub-steps the Euler and splitting schemes are written over: kinetics, thermostats, the θ term.
//!
//! Every SDE sampler (SGHMC, SGNHT, mSGNHT, SGMGT / SGMGT-D) is one instance of the generalized
//! dynamics of Zhang et al. 2017 (eq. 13):
//!
//! ```text
//! dθ = v ∇K(p) dt − σ_θ ∇Ũ(θ) dt + √(2σ_θ(1 − σ_θB̂)) dW
//! dp = −κ(ξ) ∇K(p) dt − ∇Ũ(θ) dt + √(2D) dW
//! dξ = (thermostat law)
//! ```
//!
//! and a scheme composes its pieces:
//!
//! * [`KineticSteps`]: ∇K, ∇²K and the exact friction flow of the B sub-step for the identity mass
//!   ([`UnitMass`]), a diagonal mass ([`DiagonalKinetics`]), a dense mass ([`DenseKinetics`], whose ∇K
//!   needs all of p and is prepared as M⁻¹p before a pass) and any separable
//!   [`Kinetic`] ([`Separable`], SGMGT's monomial-gamma kinetics). Each computes its terms in
//!   its own natural order (h·κ·m⁻¹·p for a diagonal mass, κ·p·h for the identity), so that
//!   one scheme body serves them all without changing any sampler's numbers.
//! * [`Thermostat`]: the friction κ and how ξ moves — a constant ([`ConstantFriction`], SGHMC),
//!   one scalar ξ driven by the kinetic temperature ([`ScalarThermostat`], SGNHT, Ding et al.
//!   2014), or one ξᵢ per coordinate with potential F and its own Langevin term
//!   ([`PerCoordinate`], mSGNHT of Li et al. 2016 with κ = ξ, and SGMGT with κ = σ_p + γ∇F(ξ)).
//! * [`ThetaTerm`]: SGMGT-D's first-order Langevin term on θ with its gradient-noise correction
//!   (`docs/sgmgt-noise-estimate.md`); absent (σ_θ = 0, v = 1) for the other samplers.

use super::ThermostatRule;
use super::state::Phase;
use crate::arith::{Arith, Plain};
use crate::kinetic::{Kinetic, Mass};
use crate::kinetic::{MassBuffer, MassParts};
use crate::lanes::{
    EXTRA_NORMALS, LaneSource, Lanes, NOISE_BLOCK, NoiseBlocks, Stream, StreamSource, copy_into,
};
use crate::real::Real;
use crate::rows::Fitted;
use core::marker::PhantomData;

/// The kinetic energy's part of the sub-steps (see the module docs). `a` is the coordinate's
/// datum from [`KineticSteps::stream`]: m⁻¹ᵢ for a diagonal mass, (M⁻¹p)ᵢ for a prepared dense
/// mass, unused otherwise.
pub(crate) trait KineticSteps<T: Real>: StreamSource<T> {
    /// ∇K acts coordinate by coordinate (false only for a dense mass).
    const SEPARABLE: bool = true;
    /// The friction flow of coordinate i does not depend on i (the identity mass): with a
    /// friction shared by all coordinates, the scheme computes it once per step.
    const UNIFORM_FLOW: bool = false;
    /// ∇K(p) = p (the identity mass): Σ (∂K/∂pᵢ)² is Σ pᵢ ∂K/∂pᵢ, term by term.
    const UNIT: bool = false;
    /// The B sub-step's flow map for one coordinate, prepared once and applied to any p.
    type Flow: Copy;
    /// Whether this copy of the step fuses the polynomials' multiply-adds (the thermostat's
    /// law computes in the same rounding, [`Law::friction`]).
    type Arith: Arith;

    /// Before a pass that reads ∇K of every coordinate: a dense mass forms M⁻¹p here.
    #[inline(always)]
    fn prepare(&mut self, _p: &[T]) {}
    /// ∂K/∂pᵢ.
    fn grad(&self, i: usize, a: T, p: T) -> T;
    /// (∂K/∂pᵢ, ∂²K/∂pᵢ²).
    fn grad_curv(&self, i: usize, a: T, p: T) -> (T, T);
    /// The friction term κ ∂K/∂pᵢ · h of an explicit kick, given k = ∂K/∂pᵢ at p.
    fn friction_term(&self, a: T, p: T, k: T, kappa: T, h: T) -> T;
    /// The merged position drift of A(dt)…A(dt) around a kick: (∇K(p₀) + ∇K(p₁))·dt.
    fn merged_drift(&self, a: T, p0: T, p1: T, k0: T, k1: T, dt: T) -> T;
    /// The leapfrog's position displacement dt·∂K/∂pᵢ (Neal 2011).
    fn displacement(&self, i: usize, a: T, p: T, dt: T) -> T;
    /// The flow of dp = −κ ∂K/∂pᵢ dt over time t, prepared.
    fn flow(&self, i: usize, a: T, kappa: T, t: T) -> Self::Flow;
    /// A shared flow ([`KineticSteps::UNIFORM_FLOW`]) for the whole step, through `memo` where the
    /// flow is one function of κt (the identity mass's e^{−κt}: computed only when κt changes).
    #[inline(always)]
    fn shared_flow(
        &self,
        _memo: &mut crate::integrator::state::Memo<T>,
        kappa: T,
        t: T,
    ) -> Self::Flow {
        self.flow(0, T::ONE, kappa, t)
    }
    /// Applies a prepared flow to p.
    fn apply(&self, i: usize, flow: Self::Flow, p: T) -> T;
    /// A dense mass's flow p ← exp(−κt M⁻¹) p on the whole vector (the separable ones never
    /// get here).
    #[inline(always)]
    fn flow_all(&mut self, _p: &mut [T], _kappa: T, _t: T) {}
    /// tr M⁻¹ for a state of dimension n (the derived SGNHT thermostat's normalisation).
    fn trace(&self, n: usize) -> T;
    /// A dense mass saves θ and p, whole, into its own buffer before a step changes them (its
    /// passes are not one fused sweep that could save them as it goes); nothing for the
    /// separable ones, whose sweep does ([`crate::lanes::Backup`]).
    #[inline(always)]
    fn save_state(&mut self, _theta: &[T], _p: &[T]) {}
    /// Undoes a step from what [`KineticSteps::save_state`] saved (dense) or from the sweep's
    /// backup in `phase` (separable), with `xi` the per-coordinate thermostats (or empty).
    #[inline(always)]
    fn restore_state(&mut self, phase: &mut Phase<'_, T>, xi: &mut [T]) {
        phase.rollback(xi);
    }
}

/// The identity mass, K(p) = ½|p|², its flows in the rounding `A`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UnitMass<A = Plain>(PhantomData<A>);

impl<A> UnitMass<A> {
    /// The identity mass.
    pub const fn new() -> Self {
        UnitMass(PhantomData)
    }
}

impl<T: Real, A> StreamSource<T> for UnitMass<A> {
    const UNIFORM: bool = true;
    #[inline(always)]
    fn stream(&self) -> Stream<'_, T> {
        Stream::Uniform(T::ONE)
    }
}

impl<T: Real, A: Arith> KineticSteps<T> for UnitMass<A> {
    const UNIFORM_FLOW: bool = true;
    const UNIT: bool = true;
    type Flow = T;
    type Arith = A;
    #[inline(always)]
    fn grad(&self, _i: usize, _a: T, p: T) -> T {
        p
    }
    #[inline(always)]
    fn grad_curv(&self, _i: usize, _a: T, p: T) -> (T, T) {
        (p, T::ONE)
    }
    #[inline(always)]
    fn friction_term(&self, _a: T, p: T, _k: T, kappa: T, h: T) -> T {
        kappa * p * h
    }
    #[inline(always)]
    fn merged_drift(&self, _a: T, p0: T, p1: T, _k0: T, _k1: T, dt: T) -> T {
        (p0 + p1) * dt
    }
    #[inline(always)]
    fn displacement(&self, _i: usize, _a: T, p: T, dt: T) -> T {
        dt * p
    }
    #[inline(always)]
    fn flow(&self, _i: usize, _a: T, kappa: T, t: T) -> T {
        (-kappa * t).exp_in::<A>()
    }
    #[inline(always)]
    fn shared_flow(&self, memo: &mut crate::integrator::state::Memo<T>, kappa: T, t: T) -> T {
        memo.of(-kappa * t, T::exp_in::<A>)
    }
    #[inline(always)]
    fn apply(&self, _i: usize, decay: T, p: T) -> T {
        decay * p
    }
    #[inline(always)]
    fn trace(&self, n: usize) -> T {
        T::from_usize(n)
    }
}

/// A diagonal mass, K(p) = ½ Σ m⁻¹ᵢ pᵢ² (the slice holds diag M⁻¹), its flows in the rounding
/// `A`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DiagonalKinetics<'m, T, A>(pub &'m [T], PhantomData<A>);

impl<'m, T, A> DiagonalKinetics<'m, T, A> {
    /// The mass whose diagonal inverse is `inverse`.
    pub fn new(inverse: &'m [T]) -> Self {
        DiagonalKinetics(inverse, PhantomData)
    }
}

impl<T: Real, A> StreamSource<T> for DiagonalKinetics<'_, T, A> {
    const UNIFORM: bool = false;
    #[inline(always)]
    fn stream(&self) -> Stream<'_, T> {
        Stream::PerCoordinate(self.0)
    }
}

impl<T: Real, A: Arith> KineticSteps<T> for DiagonalKinetics<'_, T, A> {
    type Flow = T;
    type Arith = A;
    #[inline(always)]
    fn grad(&self, _i: usize, m: T, p: T) -> T {
        m * p
    }
    #[inline(always)]
    fn grad_curv(&self, _i: usize, m: T, p: T) -> (T, T) {
        (m * p, m)
    }
    #[inline(always)]
    fn friction_term(&self, m: T, p: T, _k: T, kappa: T, h: T) -> T {
        h * kappa * m * p
    }
    #[inline(always)]
    fn merged_drift(&self, m: T, p0: T, p1: T, _k0: T, _k1: T, dt: T) -> T {
        dt * m * (p0 + p1)
    }
    #[inline(always)]
    fn displacement(&self, _i: usize, m: T, p: T, dt: T) -> T {
        dt * m * p
    }
    #[inline(always)]
    fn flow(&self, _i: usize, m: T, kappa: T, t: T) -> T {
        (-kappa * m * t).exp_in::<A>()
    }
    #[inline(always)]
    fn apply(&self, _i: usize, decay: T, p: T) -> T {
        decay * p
    }
    #[inline(always)]
    fn trace(&self, _n: usize) -> T {
        self.0.iter().fold(T::ZERO, |s, &x| s + x)
    }
}

/// A dense mass: ∇K = M⁻¹p is formed into the mass's own d-buffer by [`KineticSteps::prepare`]
/// (d² multiply-adds) and read per coordinate; its friction flow is the whole-vector
/// V e^{−κtΛ} Vᵀp of a mass built with its eigendecomposition.
#[derive(Debug)]
pub(crate) struct DenseKinetics<'m, T, A> {
    pub mass: Mass<'m, T>,
    /// M⁻¹p after [`KineticSteps::prepare`]; the flow's work vector in between.
    pub inv_mass_p: &'m mut [T],
    /// θ and p before the step (2d), for undoing a step whose result is not finite.
    pub backup: &'m mut [T],
    /// The flow's rounding.
    pub arith: PhantomData<A>,
}

impl<T: Real, A> StreamSource<T> for DenseKinetics<'_, T, A> {
    const UNIFORM: bool = false;
    #[inline(always)]
    fn stream(&self) -> Stream<'_, T> {
        Stream::PerCoordinate(self.inv_mass_p)
    }
}

impl<T: Real, A: Arith> KineticSteps<T> for DenseKinetics<'_, T, A> {
    const SEPARABLE: bool = false;
    type Flow = ();
    type Arith = A;
    #[inline(always)]
    fn prepare(&mut self, p: &[T]) {
        self.mass.kinetic_gradient(p, self.inv_mass_p);
    }
    #[inline(always)]
    fn grad(&self, _i: usize, v: T, _p: T) -> T {
        v
    }
    /// The curvature of a dense mass is not per coordinate; no per-coordinate thermostat runs
    /// with one (the samplers' constructors see to that).
    #[inline(always)]
    fn grad_curv(&self, _i: usize, v: T, _p: T) -> (T, T) {
        (v, T::ZERO)
    }
    #[inline(always)]
    fn friction_term(&self, v: T, _p: T, _k: T, kappa: T, h: T) -> T {
        h * kappa * v
    }
    #[inline(always)]
    fn merged_drift(&self, _v: T, _p0: T, _p1: T, k0: T, k1: T, dt: T) -> T {
        (k0 + k1) * dt
    }
    #[inline(always)]
    fn displacement(&self, _i: usize, v: T, _p: T, dt: T) -> T {
        dt * v
    }
    #[inline(always)]
    fn flow(&self, _i: usize, _v: T, _kappa: T, _t: T) {}
    #[inline(always)]
    fn apply(&self, _i: usize, _flow: (), p: T) -> T {
        p
    }
    #[inline(always)]
    fn flow_all(&mut self, p: &mut [T], kappa: T, t: T) {
        self.mass
            .friction_flow_in::<A>(p, kappa * t, self.inv_mass_p);
    }
    #[inline(always)]
    fn trace(&self, n: usize) -> T {
        self.mass.trace_inverse(n)
    }
    fn save_state(&mut self, theta: &[T], p: &[T]) {
        // (Checked split, and `min`: the backup is 2n, but an unchecked split would link a
        // panic path.)
        let (saved_theta, saved_p) = self
            .backup
            .split_fitted_mut(theta.len().min(self.backup.len()));
        copy_into(saved_theta, theta);
        copy_into(saved_p, p);
    }
    fn restore_state(&mut self, phase: &mut Phase<'_, T>, _xi: &mut [T]) {
        let (saved_theta, saved_p) = self
            .backup
            .split_fitted(phase.theta.len().min(self.backup.len()));
        copy_into(phase.theta, saved_theta);
        copy_into(phase.p, saved_p);
    }
}

/// Any separable [`Kinetic`] (SGMGT's Gaussian or monomial-gamma kinetics), in the rounding `A`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Separable<K, A = Plain>(pub K, PhantomData<A>);

impl<K, A> Separable<K, A> {
    /// The kinetics piece of `kinetic`.
    pub fn new(kinetic: K) -> Self {
        Separable(kinetic, PhantomData)
    }
}

impl<T: Real, K: Kinetic<T>, A> StreamSource<T> for Separable<K, A> {
    const UNIFORM: bool = true;
    /// Chunks of eight only for a kinetic energy whose methods vectorise ([`Kinetic::UNROLL`]:
    /// SGMGT-D's default eq. 12 with a = 1); any other SGMGT body (libm's pow, exp and ln, a
    /// branch on the kind) is too large for eight inlined copies and runs as one flat loop.
    const UNROLL: bool = K::UNROLL;
    #[inline(always)]
    fn stream(&self) -> Stream<'_, T> {
        Stream::Uniform(T::ZERO)
    }
}

impl<T: Real, K: Kinetic<T>, A: Arith> KineticSteps<T> for Separable<K, A> {
    /// κt; the flow itself is [`Kinetic::friction_flow`].
    type Flow = T;
    type Arith = A;
    #[inline(always)]
    fn grad(&self, i: usize, _a: T, p: T) -> T {
        self.0.gradient_in::<A>(i, p)
    }
    #[inline(always)]
    fn grad_curv(&self, i: usize, _a: T, p: T) -> (T, T) {
        self.0.gradient_and_curvature_in::<A>(i, p)
    }
    #[inline(always)]
    fn friction_term(&self, _a: T, _p: T, k: T, kappa: T, h: T) -> T {
        kappa * k * h
    }
    #[inline(always)]
    fn merged_drift(&self, _a: T, _p0: T, _p1: T, k0: T, k1: T, dt: T) -> T {
        (k0 + k1) * dt
    }
    #[inline(always)]
    fn displacement(&self, i: usize, _a: T, p: T, dt: T) -> T {
        dt * self.0.gradient_in::<A>(i, p)
    }
    #[inline(always)]
    fn flow(&self, _i: usize, _a: T, kappa: T, t: T) -> T {
        kappa * t
    }
    #[inline(always)]
    fn apply(&self, i: usize, kt: T, p: T) -> T {
        self.0.friction_flow_in::<A>(i, p, kt)
    }
    /// Not used: SGMGT's thermostats are per coordinate.
    #[inline(always)]
    fn trace(&self, n: usize) -> T {
        T::from_usize(n)
    }
}

/// The sums a scheme accumulates (in 8 lanes) over the coordinates after a step, or over the
/// incoming state in the splitting scheme's first pass.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sums<T> {
    /// Σ pᵢ ∂K/∂pᵢ (pᵀM⁻¹p for a Gaussian K; n times the kinetic temperature).
    pub virial: T,
    /// Σ (∂K/∂pᵢ)² (|M⁻¹p|²).
    pub grad_sq: T,
    /// Σ ξᵢ after the step (per-coordinate thermostats).
    pub thermostat: T,
}

/// The thermostat's part of the sub-steps (see the module docs): where ξ lives, and its law.
pub(crate) trait Thermostat<T: Real>: LaneSource<T> {
    /// One ξᵢ per coordinate that moves in the per-coordinate loop.
    const PER_COORDINATE: bool;
    /// Its drift reads Σ (∂K/∂pᵢ)² (SGNHT's derived rule), so the schemes must sum it.
    const NEEDS_GRAD_SQ: bool = false;
    /// κ(ξ), the per-coordinate drift and Langevin terms, as a `Copy` value the loops capture.
    type Law: Law<T>;
    /// The law, for the step about to run.
    fn law(&self) -> Self::Law;
    /// Before a step of size h (`splitting`: two halves): caches the law's step constants, a
    /// square root through `memo` (remembered between steps).
    #[inline(always)]
    fn prepare(&mut self, _h: T, _splitting: bool, _memo: &mut crate::integrator::state::Memo<T>) {}
    /// The shared slot value of a uniform friction (A, or the scalar ξ).
    fn shared(&self) -> T;
    /// A sub-step of a scalar ξ: ξ ← ξ + rate(sums)·t (nothing for the others).
    #[inline(always)]
    fn drift_scalar(&mut self, _sums: &Sums<T>, _trace: T, _n: T, _t: T) {}
    /// Whether a scalar ξ is finite (the per-coordinate ones are checked in the loop).
    #[inline(always)]
    fn scalar_finite(&self) -> bool {
        true
    }
    /// ξ as a slice, for naming the first non-finite entry after a failed step.
    fn values(&self) -> &[T];
    /// ξ as a mutable slice (per-coordinate thermostats; empty for the others), for undoing a
    /// step.
    #[inline(always)]
    fn values_mut(&mut self) -> &mut [T] {
        &mut []
    }
    /// A scalar ξ's value before a step (0 for the others), to undo the step.
    #[inline(always)]
    fn scalar_state(&self) -> T {
        T::ZERO
    }
    /// Puts back a scalar ξ saved by [`Thermostat::scalar_state`] (nothing for the others).
    #[inline(always)]
    fn restore_scalar_state(&mut self, _saved: T) {}
}

/// κ(ξ) and the motion of one ξᵢ (see [`Thermostat`]).
pub(crate) trait Law<T: Real>: Copy {
    /// κ of coordinate i from its slot value ξᵢ, in the kinetics' rounding `A`
    /// ([`KineticSteps::Arith`]), as are the other methods that may compute a transcendental.
    fn friction<A: Arith>(&self, i: usize, x: T) -> T;
    /// The A sub-step of ξᵢ: ξᵢ + γ(k² − c)t (unchanged for a uniform friction).
    fn drift(&self, x: T, k: T, c: T, t: T) -> T;
    /// ∇F(ξᵢ), what the Euler step's Langevin term on ξ reads at the old ξ.
    #[inline(always)]
    fn potential_grad<A: Arith>(&self, _i: usize, x: T) -> T {
        x
    }
    /// Whether this step's Langevin term on ξ reads its normal (σ_ξ > 0): a scalar core draws
    /// the normal only then.
    #[inline(always)]
    fn langevin_noise(&self) -> bool {
        false
    }
    /// The law has Langevin terms on ξ, which read normals ([`Coordinate::zeta`]): drawn into
    /// the θ term's [`PositionTerm::NoiseBlocks`], which the schemes check are there.
    ///
    /// [`Coordinate::zeta`]: crate::lanes::Coordinate::zeta
    const LANGEVIN: bool = false;
    /// The Euler step's first-order Langevin term on ξᵢ, −σ_ξ ∇F(ξ) h + √(2σ_ξh) ζ with ∇F at
    /// the old ξ (`fx`) and the normal ζ, added to the drifted `x` (σ_ξ = 0: nothing).
    #[inline(always)]
    fn langevin_euler(&self, x: T, _fx: T, _h: T, _zeta: T) -> T {
        x
    }
    /// Half of the splitting step's Langevin term on ξᵢ: the flow of −σ_ξ∇F over h/2 and the
    /// noise √(σ_ξh)·ζ, flow-then-noise `before` the central piece and noise-then-flow after
    /// it, so the two halves compose symmetrically (σ_ξ = 0: nothing).
    #[inline(always)]
    fn langevin_half<A: Arith>(&self, _i: usize, x: T, _before: bool, _zeta: T) -> T {
        x
    }
}

/// The law of a friction shared by all coordinates: κ = the slot value, ξ fixed in the loop.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Shared;

impl<T: Real> Law<T> for Shared {
    #[inline(always)]
    fn friction<A: Arith>(&self, _i: usize, x: T) -> T {
        x
    }
    #[inline(always)]
    fn drift(&self, x: T, _k: T, _c: T, _t: T) -> T {
        x
    }
}

/// SGHMC's constant friction A (Chen et al. 2014).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConstantFriction<T>(pub T);

impl<T: Real> LaneSource<T> for ConstantFriction<T> {
    const UNIFORM: bool = true;
    #[inline(always)]
    fn lanes(&mut self) -> Lanes<'_, T> {
        Lanes::Uniform(self.0)
    }
}

impl<T: Real> Thermostat<T> for ConstantFriction<T> {
    const PER_COORDINATE: bool = false;
    type Law = Shared;
    #[inline(always)]
    fn law(&self) -> Shared {
        Shared
    }
    #[inline(always)]
    fn shared(&self) -> T {
        self.0
    }
    fn values(&self) -> &[T] {
        &[]
    }
}

/// SGNHT's scalar thermostat ξ with dξ = rate dt (Ding et al. 2014, eq. 6; with a mass the rule
/// of [`ThermostatRule`], derived in `docs/sgnht-mass-thermostat.md`).
#[derive(Debug)]
pub(crate) struct ScalarThermostat<'x, T> {
    pub xi: &'x mut T,
    pub rule: ThermostatRule,
    /// The temperature T, the thermostat's target (1: the untempered sampler).
    pub temperature: T,
}

impl<T: Real> LaneSource<T> for ScalarThermostat<'_, T> {
    const UNIFORM: bool = true;
    #[inline(always)]
    fn lanes(&mut self) -> Lanes<'_, T> {
        Lanes::Uniform(*self.xi)
    }
}

impl<T: Real> Thermostat<T> for ScalarThermostat<'_, T> {
    const PER_COORDINATE: bool = false;
    const NEEDS_GRAD_SQ: bool = true;
    type Law = Shared;
    #[inline(always)]
    fn law(&self) -> Shared {
        Shared
    }
    #[inline(always)]
    fn shared(&self) -> T {
        *self.xi
    }
    /// ξ ← ξ + (|M⁻¹p|²/tr M⁻¹ − T)·t (derived) or (pᵀM⁻¹p/n − T)·t (printed, Roychowdhury &
    /// Parthasarathy 2017, Alg. 2); both are pᵀp/n − T for the identity mass. At temperature
    /// T the kinetic temperature's target is T (`docs/temperature.md`).
    #[inline(always)]
    fn drift_scalar(&mut self, sums: &Sums<T>, trace: T, n: T, t: T) {
        let rate = match self.rule {
            ThermostatRule::Derived => sums.grad_sq / trace - self.temperature,
            ThermostatRule::Printed => sums.virial / n - self.temperature,
        };
        *self.xi += rate * t;
    }
    #[inline(always)]
    fn scalar_finite(&self) -> bool {
        self.xi.is_finite()
    }
    fn values(&self) -> &[T] {
        core::slice::from_ref(self.xi)
    }
    #[inline(always)]
    fn scalar_state(&self) -> T {
        *self.xi
    }
    #[inline(always)]
    fn restore_scalar_state(&mut self, saved: T) {
        *self.xi = saved;
    }
}

/// One thermostat ξᵢ per coordinate, in the caller's buffer, moving by the law `L`:
/// [`NoseLaw`] (mSGNHT) or [`MonomialGammaLaw`] (SGMGT).
#[derive(Debug)]
pub(crate) struct PerCoordinate<'x, T, L> {
    pub xi: &'x mut [T],
    pub law: L,
}

/// Laws that take step constants before a step (the Langevin term's noise scale).
pub(crate) trait PerCoordinateLaw<T: Real>: Law<T> {
    /// Caches the step constants for a step of size h (`splitting`: two halves), a square
    /// root through `memo`.
    fn prepare(&mut self, _h: T, _splitting: bool, _memo: &mut crate::integrator::state::Memo<T>) {}
}

impl<T: Real, L> LaneSource<T> for PerCoordinate<'_, T, L> {
    const UNIFORM: bool = false;
    #[inline(always)]
    fn lanes(&mut self) -> Lanes<'_, T> {
        Lanes::PerCoordinate(self.xi)
    }
}

impl<T: Real, L: PerCoordinateLaw<T>> Thermostat<T> for PerCoordinate<'_, T, L> {
    const PER_COORDINATE: bool = true;
    type Law = L;
    #[inline(always)]
    fn law(&self) -> L {
        self.law
    }
    #[inline(always)]
    fn prepare(&mut self, h: T, splitting: bool, memo: &mut crate::integrator::state::Memo<T>) {
        self.law.prepare(h, splitting, memo);
    }
    /// Not used: the friction is per coordinate.
    #[inline(always)]
    fn shared(&self) -> T {
        T::ZERO
    }
    fn values(&self) -> &[T] {
        self.xi
    }
    #[inline(always)]
    fn values_mut(&mut self) -> &mut [T] {
        self.xi
    }
}

/// mSGNHT's law (Li et al. 2016, eq. 2) at temperature T (the field): κᵢ = ξᵢ,
/// dξᵢ = (∇ᵢK² − T∇ᵢ²K) dt = (pᵢ² − T) dt (`docs/temperature.md`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NoseLaw<T>(pub T);

impl<T: Real> Law<T> for NoseLaw<T> {
    #[inline(always)]
    fn friction<A: Arith>(&self, _i: usize, x: T) -> T {
        x
    }
    #[inline(always)]
    fn drift(&self, x: T, k: T, c: T, t: T) -> T {
        // (c·1 = c exactly: T = 1 is the untempered law bit for bit.)
        x + (k * k - c * self.0) * t
    }
}

impl<T: Real> PerCoordinateLaw<T> for NoseLaw<T> {}

/// SGMGT's law (Zhang et al. 2017, eq. 13) at temperature T: κᵢ = σ_p + γ∇F(ξᵢ) and
/// dξᵢ = γ(∇ᵢK² − T∇ᵢ²K) dt − σ_ξ∇F(ξᵢ) dt + √(2σ_ξT) dW (`docs/temperature.md`: the
/// stationary law is e^{−(U + K + ΣF)/T}).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MonomialGammaLaw<T, F> {
    pub offset: T,
    pub gamma: T,
    pub potential: F,
    pub sigma_xi: T,
    /// The temperature T.
    pub temperature: T,
    /// The Langevin term's noise scale for the step (√(2σ_ξh) Euler, √(σ_ξh) per half).
    langevin_sd: T,
    /// The Langevin term's flow time per half of a splitting step, σ_ξ h/2.
    langevin_flow: T,
}

impl<T: Real, F> MonomialGammaLaw<T, F> {
    /// κᵢ = `offset` + γ∇F(ξᵢ) and the Langevin diffusion σ_ξ.
    pub fn new(offset: T, gamma: T, potential: F, sigma_xi: T, temperature: T) -> Self {
        MonomialGammaLaw {
            offset,
            gamma,
            potential,
            sigma_xi,
            temperature,
            langevin_sd: T::ZERO,
            langevin_flow: T::ZERO,
        }
    }
}

impl<T: Real, F: Kinetic<T>> PerCoordinateLaw<T> for MonomialGammaLaw<T, F> {
    #[inline(always)]
    fn prepare(&mut self, h: T, splitting: bool, memo: &mut crate::integrator::state::Memo<T>) {
        // The noise variances σ_ξhT and 2σ_ξhT (T = 1 multiplies exactly).
        if splitting {
            self.langevin_sd = memo.sqrt(self.sigma_xi * h * self.temperature);
            self.langevin_flow = self.sigma_xi * (h * T::HALF);
        } else {
            self.langevin_sd = memo.sqrt(T::TWO * self.sigma_xi * h * self.temperature);
        }
    }
}

impl<T: Real, F: Kinetic<T>> Law<T> for MonomialGammaLaw<T, F> {
    #[inline(always)]
    fn friction<A: Arith>(&self, i: usize, x: T) -> T {
        self.offset + self.gamma * self.potential.gradient_in::<A>(i, x)
    }
    #[inline(always)]
    fn drift(&self, x: T, k: T, c: T, t: T) -> T {
        x + self.gamma * (k * k - c * self.temperature) * t
    }
    #[inline(always)]
    fn potential_grad<A: Arith>(&self, i: usize, x: T) -> T {
        self.potential.gradient_in::<A>(i, x)
    }
    const LANGEVIN: bool = true;
    #[inline(always)]
    fn langevin_noise(&self) -> bool {
        self.sigma_xi > T::ZERO
    }
    #[inline(always)]
    fn langevin_euler(&self, x: T, fx: T, h: T, zeta: T) -> T {
        if self.sigma_xi > T::ZERO {
            x + (-self.sigma_xi * fx * h + self.langevin_sd * zeta)
        } else {
            x
        }
    }
    #[inline(always)]
    fn langevin_half<A: Arith>(&self, i: usize, x: T, before: bool, zeta: T) -> T {
        // Straight-line on a vector target, the flow computed and then selected: a flow inside
        // a branch on σ_ξ would keep the loop from vectorising, and so would a closure handed
        // to `either` that LLVM leaves out of line (it did in the dispatched copies). A scalar
        // core skips the flow when σ_ξ = 0. (`before` is a constant at every call.)
        let on = self.sigma_xi > T::ZERO;
        if crate::lanes::SCALAR_CORE && !on {
            return x;
        }
        let (sd, flow) = (self.langevin_sd, self.langevin_flow);
        let start = if before { x } else { x + sd * zeta };
        let flowed = self.potential.friction_flow_in::<A>(i, start, flow);
        let moved = if before { flowed + sd * zeta } else { flowed };
        if on { moved } else { x }
    }
}

/// The θ side of a sub-step: the velocity factor v on ∇K(p) and SGMGT-D's first-order Langevin
/// term (see [`ThetaTerm`]); [`NoThetaTerm`] for every sampler without one, known at compile
/// time so the Gaussian samplers' loops carry no branch and no draw.
pub(crate) trait PositionTerm<T: Real>: Copy {
    /// The scalar (drift step v·t, noise sd √(2σ_θ·share·h)) for a step of size h, the square
    /// root through `memo` (remembered between steps).
    fn scalar(&self, t: T, h: T, memo: &mut crate::integrator::state::Memo<T>) -> (T, T);
    /// Coordinate i's (drift step, noise sd), given the precomputed `scalar`.
    fn at(&self, i: usize, scalar: (T, T), t: T, h: T) -> (T, T);
    /// Coordinate i's drift step alone.
    fn drift_at(&self, i: usize, scalar: T, t: T) -> T;
    /// Storage for the step's further normals ([`Coordinate::zeta`]): none without a θ term;
    /// [`EXTRA_NORMALS`] blocks for SGMGT's (the one sampler with Langevin parts, on θ and ξ),
    /// which the Euler step fills with ζ_θ, ζ_ξ and A–O–B–O–A with ζ_ξ, ζ_θ, ζ_ξ and its second
    /// O's z. Samplers without it carry a zero-sized array.
    ///
    /// [`Coordinate::zeta`]: crate::lanes::Coordinate::zeta
    type NoiseBlocks: NoiseBlocks<T>;
    /// θ plus the Langevin increment −σ_θ g h + sd·ζ.
    fn langevin(&self, theta: T, g: T, h: T, sd: T, zeta: T) -> T;
    /// Whether the Langevin term reads its normal (σ_θ > 0): a scalar core draws it only then.
    fn langevin_noise(&self) -> bool;
}

/// No θ term: v = 1, σ_θ = 0.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NoThetaTerm;

impl<T: Real> PositionTerm<T> for NoThetaTerm {
    #[inline(always)]
    fn scalar(&self, t: T, _h: T, _memo: &mut crate::integrator::state::Memo<T>) -> (T, T) {
        (t, T::ZERO)
    }
    #[inline(always)]
    fn at(&self, _i: usize, scalar: (T, T), _t: T, _h: T) -> (T, T) {
        scalar
    }
    #[inline(always)]
    fn drift_at(&self, _i: usize, scalar: T, _t: T) -> T {
        scalar
    }
    type NoiseBlocks = [[T; NOISE_BLOCK]; 0];
    #[inline(always)]
    fn langevin(&self, theta: T, _g: T, _h: T, _sd: T, _zeta: T) -> T {
        theta
    }
    #[inline(always)]
    fn langevin_noise(&self) -> bool {
        false
    }
}

/// SGMGT-D's first-order Langevin term on θ, −σ_θ∇Ũ dt + √(2σ_θ(1 − σ_θB̂)) dW, and the factor
/// v = 1 − 2σ_θB̂ on θ's velocity that makes the gradient noise it shares with p stationary
/// (derived in `docs/sgmgt-noise-estimate.md`); B̂ is one scalar, or one B̂ᵢ per coordinate when
/// `PER_COORDINATE` (a constant, so that the loop's body has no branch on it and vectorises).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThetaTerm<'b, T, const PER_COORDINATE: bool> {
    pub sigma_theta: T,
    /// 1 − 2σ_θB̂ for the scalar B̂.
    pub velocity: T,
    /// 1 − σ_θB̂ for the scalar B̂: the injected share of the diffusion 2σ_θ.
    pub share: T,
    /// B̂ᵢ per coordinate, replacing the scalar's factors when `PER_COORDINATE` (else unread).
    pub noise_estimates: &'b [T],
    /// The temperature T (the per-coordinate factors read it).
    pub temperature: T,
}

impl<T: Real, const PER_COORDINATE: bool> ThetaTerm<'_, T, PER_COORDINATE> {
    /// (velocity factor, injected share) for a noise estimate B̂ at temperature T:
    /// (1 − 2σ_θB̂/T, T − σ_θB̂), which are (1 − 2σ_θB̂, 1 − σ_θB̂) at T = 1, bit for bit
    /// (`docs/sgmgt-noise-estimate.md`; the tempered form `docs/temperature.md`). At T = 0 the
    /// settings hold σ_θB̂ = 0 (2σ_θB̂ < T is checked), and the velocity factor is 1.
    #[inline(always)]
    pub fn factors(sigma_theta: T, noise_estimate: T, temperature: T) -> (T, T) {
        let excess = T::TWO * sigma_theta * noise_estimate;
        let ratio = if temperature > T::ZERO {
            excess / temperature
        } else {
            T::ZERO
        };
        (T::ONE - ratio, temperature - sigma_theta * noise_estimate)
    }

    /// B̂ᵢ (0 beyond the estimates' length, which is checked when they are set).
    #[inline(always)]
    fn estimate(b: &[T], i: usize) -> T {
        b.get(i).copied().unwrap_or(T::ZERO)
    }
}

impl<T: Real, const PER_COORDINATE: bool> PositionTerm<T> for ThetaTerm<'_, T, PER_COORDINATE> {
    #[inline(always)]
    fn scalar(&self, t: T, h: T, memo: &mut crate::integrator::state::Memo<T>) -> (T, T) {
        (
            self.velocity * t,
            memo.sqrt(T::TWO * self.sigma_theta * self.share * h),
        )
    }
    #[inline(always)]
    fn at(&self, i: usize, scalar: (T, T), t: T, h: T) -> (T, T) {
        if PER_COORDINATE {
            let b = Self::estimate(self.noise_estimates, i);
            let (v, share) = Self::factors(self.sigma_theta, b, self.temperature);
            (v * t, (T::TWO * self.sigma_theta * share * h).sqrt())
        } else {
            scalar
        }
    }
    /// (The first pass of the splitting scheme needs no noise scale: no square root there.)
    #[inline(always)]
    fn drift_at(&self, i: usize, scalar: T, t: T) -> T {
        if PER_COORDINATE {
            let b = Self::estimate(self.noise_estimates, i);
            Self::factors(self.sigma_theta, b, self.temperature).0 * t
        } else {
            scalar
        }
    }
    type NoiseBlocks = [[T; NOISE_BLOCK]; EXTRA_NORMALS];
    #[inline(always)]
    fn langevin(&self, theta: T, g: T, h: T, sd: T, zeta: T) -> T {
        if self.sigma_theta > T::ZERO {
            theta + (-self.sigma_theta * g * h + sd * zeta)
        } else {
            theta
        }
    }
    #[inline(always)]
    fn langevin_noise(&self) -> bool {
        self.sigma_theta > T::ZERO
    }
}

/// An SDE sampler's dynamics for one step: the three pieces and the momentum diffusion D (the
/// injected noise of p is √(2D) dW).
pub(crate) struct Sde<K, X, L, T> {
    pub kinetics: K,
    pub thermostat: X,
    pub theta: L,
    pub diffusion: T,
}

/// A computation generic over the kinetics piece, run by [`visit_mass`] with the piece a
/// [`MassBuffer`] stands for: the one place that dispatches on a mass's shape.
pub(crate) trait KineticStepsVisitor<T: Real> {
    /// What the computation returns.
    type Output;
    /// Runs it with `kinetics`.
    fn visit<K: KineticSteps<T>>(self, kinetics: K) -> Self::Output;
}

/// Runs `visitor` with the kinetics piece of `mass`: [`UnitMass`], [`DiagonalKinetics`] or
/// [`DenseKinetics`].
#[inline(always)]
pub(crate) fn visit_mass<T: Real, A: Arith, V: KineticStepsVisitor<T>>(
    mass: &mut MassBuffer<'_, T>,
    visitor: V,
) -> V::Output {
    match mass.parts() {
        MassParts::Identity => visitor.visit(UnitMass::<A>::new()),
        MassParts::Diagonal(m) => visitor.visit(DiagonalKinetics::<T, A>::new(m)),
        MassParts::Dense(mass, inv_mass_p, backup) => visitor.visit(DenseKinetics {
            mass,
            inv_mass_p,
            backup,
            arith: PhantomData::<A>,
        }),
    }
}
