//! The first-order Euler scheme of every SDE sampler, written once over the sub-steps of `sde.rs`.
//!
//! Ding et al. 2014 (Alg. 1) for SGNHT, Chen et al. 2014 / Chen 2016 (Alg. 2) for SGHMC, Li et
//! al. 2016 (§2.2) for mSGNHT, Roychowdhury & Parthasarathy 2017 (Alg. 2–3) with a mass, and the
//! Euler–Maruyama discretisation of Zhang et al. 2017 eq. 13 for SGMGT (its supplement, which
//! holds the paper's own scheme, is not available): with the gradient at the current θ,
//!
//! ```text
//! p ← p − κ(ξ) ∇K(p) h − ∇Ũ(θ) h + √(2Dh) ζ                       kick (old p, old ξ)
//! θ ← θ + v ∇K(p) h  [− σ_θ ∇Ũ(θ) h + √(2σ_θ(1 − σ_θB̂)h) ζ_θ]      drift (new p)
//! ξᵢ ← ξᵢ + γ(∇ᵢK(p)² − ∇ᵢ²K(p)) h  [− σ_ξ ∇F(ξᵢ) h + √(2σ_ξh) ζ_ξ]  (per coordinate), or
//! ξ ← ξ + rate(p) h                                                  (scalar, after the pass)
//! ```
//!
//! Li et al. write the same chain with θ updated first and the gradient at the new θ: the same
//! sequence of states read at a shifted index. The normals come from the step's keyed lane
//! generator block by block inside the fused pass: ζ of the kick, then (SGMGT only, whose θ
//! term and ξ law have Langevin parts) a block of ζ_θ and a block of ζ_ξ, drawn whether or not
//! σ_θ, σ_ξ > 0 (with a dense mass ζ fills the scratch buffer first). One
//! gradient evaluation per step. A separable kinetic energy runs kick and drift in one fused
//! pass, which checks the gradient block by block as it goes and keeps a backup, so a
//! non-finite gradient leaves θ, p and ξ as they were (`docs/state-contract.md`); a dense mass
//! checks the gradient first, then forms M⁻¹p before the kick and again before the drift.

use super::sde::{KineticSteps, Law, PositionTerm, Sde, Sums, Thermostat};
use super::state::Phase;
use super::{finish_step, prepared_sweep, reject_bad_gradient, step_gradient};
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::lanes::{
    Body, Coordinate, FiniteGuard, Noise, NoiseBlocks, SCALAR_CORE, SWEEP_LANES, Slots, StepNoise,
    TAIL_LANE, finiteness_probe, reduce_sweep, sum_map, sweep,
};
use crate::real::Real;
use core::marker::PhantomData;
use rand_core::Rng;

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>> Sde<K, X, L, T> {
    /// One Euler step. Returns the sums of the new state (Σ p∇K, Σ ∇K², Σ ξᵢ).
    #[cfg_attr(feature = "std", inline(always))]
    pub(crate) fn euler<G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        phase: &mut Phase<'_, T>,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError> {
        step_gradient::<T, K, G>(model, phase.theta, phase.grad)?;
        // From here on the step is committed; what it changes is saved for `finish_step`.
        let saved_xi = self.thermostat.scalar_state();
        self.kinetics.save_state(phase.theta, phase.p);
        // The kick's normals: keyed here, drawn block by block inside the fused pass (on a
        // scalar core drawn from `rng` in the pass, coordinate by coordinate).
        let mut normals = StepNoise::<T>::keyed(rng);
        let n = phase.len();
        let noise_sd = phase.noise_sd.sqrt(T::TWO * self.diffusion * h);
        let Sde {
            kinetics,
            thermostat,
            theta: term,
            ..
        } = self;
        let term = *term;
        thermostat.prepare(h, false, &mut phase.xi_sd);
        let body = EulerCoordinate::<T, K, X, L> {
            law: thermostat.law(),
            term,
            theta_scalar: term.scalar(h, h, &mut phase.theta_sd),
            h,
            noise_sd,
            kinds: PhantomData,
        };
        let mut acc = Accumulators::<T, K, X>::new();

        kinetics.prepare(phase.p);
        if !K::SEPARABLE {
            normals.fill(rng, phase.scratch);
        }
        // ζ_θ and ζ_ξ into the θ term's blocks: SGMGT's; none for every other sampler.
        let mut blocks = L::NoiseBlocks::zeroed();
        let blocks = blocks.blocks();
        let used = blocks.len().min(2);
        debug_assert!(
            used == 2 || !<X::Law as Law<T>>::LANGEVIN,
            "a ξ law with Langevin terms needs a θ term with noise blocks"
        );
        let bad_gradient = if K::SEPARABLE {
            // (A scalar core draws ζ_θ, ζ_ξ only for a term with σ > 0.)
            let in_use = [
                term.langevin_noise(),
                body.law.langevin_noise(),
                false,
                false,
            ];
            let noise = normals.fused(rng, &mut blocks[..used], in_use);
            let slots = phase.slots_with_backup();
            let fused = Fused {
                body,
                kin: &*kinetics,
                acc: &mut acc,
            };
            sweep(slots, noise, &mut *thermostat, &*kinetics, fused)
        } else {
            // ∇K needs all of p: kick every coordinate, form M⁻¹p of the new p, then drift.
            // (No sampler with Langevin parts has a dense mass: SGMGT's kinetics are separable.)
            debug_assert!(
                used == 0,
                "a dense mass with Langevin terms draws no ζ_θ, ζ_ξ"
            );
            // (θ and p were saved whole by `save_state`: these sweeps keep no backup.)
            let (theta, p, g, z) = phase.split();
            let kin = &*kinetics;
            let slots = Slots::new(&mut *theta, &mut *p, &mut *g);
            sweep(
                slots,
                Noise::<T, R>::Drawn(z),
                &mut *thermostat,
                kin,
                |c: Coordinate<'_, T>| *c.p = body.kick(kin, &c, *c.p, *c.xi),
            );
            let acc = &mut acc;
            prepared_sweep::<T, K, X, R, _>(kinetics, (theta, p, g, z), thermostat, |kin| {
                move |c: Coordinate<'_, T>| {
                    let (p1, x0) = (*c.p, *c.xi);
                    body.drift(kin, acc, c, p1, x0)
                }
            });
            None // checked before the step
        };
        reject_bad_gradient(kinetics, thermostat, phase, bad_gradient, saved_xi)?;
        let sums = acc.sums(thermostat.values());
        let (dim, trace) = (T::from_usize(n), kinetics.trace(n));
        thermostat.drift_scalar(&sums, trace, dim, h);
        let finite = acc.finite(&sums) && thermostat.scalar_finite();
        finish_step(kinetics, thermostat, phase, finite, saved_xi)?;
        Ok(sums)
    }
}

/// The per-coordinate sub-steps of an Euler step (module docs). Methods with
/// `#[inline(always)]`, not closures, so that they end up inside the sweep's chunked loop and
/// vectorise there ([`crate::lanes::Body`]); the sums go to accumulators passed in, since
/// accumulators held in this struct (read and written through its pointer) kept the loop scalar.
struct EulerCoordinate<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L> {
    law: X::Law,
    term: L,
    /// The θ term's (drift step, noise sd) shared by all coordinates.
    theta_scalar: (T, T),
    h: T,
    /// √(2Dh), the kick's noise scale.
    noise_sd: T,
    kinds: PhantomData<(K, X)>,
}

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>>
    EulerCoordinate<T, K, X, L>
{
    /// The kick, at the old p and ξ.
    #[inline(always)]
    fn kick(&self, kin: &K, c: &Coordinate<'_, T>, p0: T, x0: T) -> T {
        let kappa = self.law.friction::<K::Arith>(c.i, x0);
        let k0 = kin.grad(c.i, c.aux, p0);
        p0 - kin.friction_term(c.aux, p0, k0, kappa, self.h) - c.g * self.h + self.noise_sd * c.z
    }

    /// The drift of θ and ξᵢ with the new p (p1, already stored), and the sums. The values are
    /// passed along rather than read back from the slots the loop just wrote. ζ_θ = ζ[0],
    /// ζ_ξ = ζ[1] (zero, and unread, unless the term or the law has Langevin parts: SGMGT).
    #[inline(always)]
    fn drift(&self, kin: &K, acc: &mut Accumulators<T, K, X>, c: Coordinate<'_, T>, p1: T, x0: T) {
        let (law, h) = (self.law, self.h);
        let (k1, c1) = kin.grad_curv(c.i, c.aux, p1);
        let (drift_h, theta_sd) = self.term.at(c.i, self.theta_scalar, h, h);
        let t1 = self
            .term
            .langevin(*c.theta + k1 * drift_h, c.g, h, theta_sd, c.zeta[0]);
        *c.theta = t1;
        if X::PER_COORDINATE {
            let fx = law.potential_grad::<K::Arith>(c.i, x0);
            let x1 = law.langevin_euler(law.drift(x0, k1, c1, h), fx, h, c.zeta[1]);
            *c.xi = x1;
            acc.add_with_xi(c.lane, p1 * k1, k1 * k1, t1, x1);
        } else {
            acc.add(c.lane, p1 * k1, k1 * k1, t1);
        }
    }
}

/// A separable kinetics' fused pass: kick, then drift, per coordinate.
struct Fused<'a, 'k, T: Real, K: KineticSteps<T>, X: Thermostat<T>, L> {
    body: EulerCoordinate<T, K, X, L>,
    kin: &'k K,
    acc: &'a mut Accumulators<T, K, X>,
}

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>> Body<T>
    for Fused<'_, '_, T, K, X, L>
{
    #[inline(always)]
    fn run(&mut self, c: Coordinate<'_, T>) {
        let x0 = *c.xi;
        let p1 = self.body.kick(self.kin, &c, *c.p, x0);
        *c.p = p1;
        self.body.drift(self.kin, self.acc, c, p1, x0);
    }
}

/// The per-lane sums of a pass (see [`Sums`]) and its finiteness guard: Σ of 0·x over θ and
/// ξ is 0 exactly when all are finite (p is covered by Σ p∇K). Σ (∂K/∂pᵢ)² is summed only when
/// the thermostat `X` reads it, and for the identity mass `K` is Σ p∇K itself.
///
/// Each holds the [`SWEEP_LANES`] lanes and then the tail's slot ([`LANE_SLOTS`],
/// [`crate::lanes::lane_of`]).
pub(crate) struct Accumulators<T, K, X> {
    virial: [T; LANE_SLOTS],
    grad_sq: [T; LANE_SLOTS],
    guard: [T; LANE_SLOTS],
    /// A [`SCALAR_CORE`]'s guard of θᵢ and ξᵢ, one running test ([`FiniteGuard`]: a float
    /// probe, or on a core without an FPU for `T` an integer test).
    scalar_guard: FiniteGuard<T>,
    pieces: PhantomData<(K, X)>,
}

/// The accumulator of a lane: `lane`, clamped to [`TAIL_LANE`] (in a flat loop the compiler
/// cannot see lane ≤ `TAIL_LANE`, and a plain index would link a bounds-check panic); always 0
/// on a scalar core's single lane.
#[inline(always)]
#[allow(clippy::unnecessary_min_or_max)] // LANE_SLOTS is 1 on a scalar core
fn lane_slot(lane: usize) -> usize {
    lane.min(LANE_SLOTS - 1)
}

/// Accumulator slots: the [`SWEEP_LANES`] lanes and the tail's ([`TAIL_LANE`]); the single
/// lane on a [`SCALAR_CORE`], whose passes have no tail.
const LANE_SLOTS: usize = if SCALAR_CORE { 1 } else { SWEEP_LANES + 1 };

/// Zeroed lane accumulators and the tail's slot ([`TAIL_LANE`]) at −0, the identity of
/// addition, so that a pass without a tail sums bit for bit as the lanes alone.
#[inline(always)]
fn lanes_and_tail<T: Real>() -> [T; LANE_SLOTS] {
    let mut acc = [T::ZERO; LANE_SLOTS];
    if let Some(tail) = acc.get_mut(TAIL_LANE) {
        *tail = -T::ZERO;
    }
    acc
}

/// The lanes added up pairwise ([`reduce_sweep`]), then the tail's running sum. A
/// [`SCALAR_CORE`]'s pass has no tail (it sums into lane 0), and on a core without an FPU the
/// addition of −0 would be a library call: the lane alone there.
#[inline(always)]
fn reduce_with_tail<T: Real>(acc: &[T; LANE_SLOTS]) -> T {
    let Some((lanes, tail)) = acc.split_first_chunk::<SWEEP_LANES>() else {
        return T::ZERO; // unreachable: the slots start with the lanes
    };
    match tail.first() {
        Some(tail) if !SCALAR_CORE => reduce_sweep(*lanes) + *tail,
        _ => reduce_sweep(*lanes),
    }
}

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>> Accumulators<T, K, X> {
    #[inline(always)]
    pub fn new() -> Self {
        Accumulators {
            virial: lanes_and_tail(),
            grad_sq: lanes_and_tail(),
            guard: lanes_and_tail(),
            scalar_guard: FiniteGuard::new(),
            pieces: PhantomData,
        }
    }

    /// One coordinate's p∇K and ∇K², and its new θ into the guard.
    #[inline(always)]
    pub fn add(&mut self, lane: usize, virial: T, grad_sq: T, theta: T) {
        self.add_sums(lane, virial, grad_sq);
        if SCALAR_CORE {
            self.scalar_guard.add(theta);
        } else {
            self.guard[lane_slot(lane)] += finiteness_probe(theta);
        }
    }

    /// One coordinate's p∇K and ∇K² (a first pass over an incoming, finite state).
    #[inline(always)]
    pub fn add_sums(&mut self, lane: usize, virial: T, grad_sq: T) {
        self.virial[lane_slot(lane)] += virial;
        if X::NEEDS_GRAD_SQ && !K::UNIT {
            self.grad_sq[lane_slot(lane)] += grad_sq;
        }
    }

    /// [`add`](Self::add) for a per-coordinate thermostat: its new ξᵢ joins θᵢ in the guard.
    /// (Σ ξᵢ is summed after the pass, by [`sums`](Self::sums): a third set of
    /// accumulators in the loop spills to the stack and costs mSGNHT about a tenth of its step.)
    #[inline(always)]
    pub fn add_with_xi(&mut self, lane: usize, virial: T, grad_sq: T, theta: T, xi: T) {
        self.add_sums(lane, virial, grad_sq);
        if SCALAR_CORE {
            self.scalar_guard.add(theta);
            self.scalar_guard.add(xi);
        } else {
            self.guard[lane_slot(lane)] += finiteness_probe(theta) + finiteness_probe(xi);
        }
    }

    /// The sums of the pass; Σ ξᵢ over `xi` for a per-coordinate thermostat (in eight lanes,
    /// by `sum_map`, after the pass).
    #[inline(always)]
    pub fn sums(&self, xi: &[T]) -> Sums<T> {
        let virial = reduce_with_tail(&self.virial);
        Sums {
            virial,
            grad_sq: if K::UNIT {
                virial
            } else {
                reduce_with_tail(&self.grad_sq)
            },
            thermostat: if X::PER_COORDINATE {
                sum_map(xi, |x| x)
            } else {
                T::ZERO
            },
        }
    }

    /// Whether θ, p and ξ all stayed finite (a `false` is confirmed by a scan that names the
    /// coordinate; an overflowing but finite sum only triggers the scan).
    #[inline(always)]
    pub fn finite(&self, sums: &Sums<T>) -> bool {
        let guard = if SCALAR_CORE {
            self.scalar_guard.finite()
        } else {
            reduce_with_tail(&self.guard) == T::ZERO
        };
        sums.virial.is_finite() && guard
    }
}
