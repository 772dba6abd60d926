//! The second-order symmetric splitting scheme of every SDE sampler, written once over the sub-steps of `sde.rs`.
//!
//! The dynamics split into exactly solvable pieces (Li et al. 2016, §3; generalised to the
//! kinetics K and thermostat potential F of Zhang et al. 2017, eq. 13):
//!
//! ```text
//! A:  dθ = v ∇K(p) dt,   dξᵢ = γ(∇ᵢK(p)² − ∇ᵢ²K(p)) dt   (p fixed: linear in t; a scalar ξ
//!                                                          moves with rate(p) instead)
//! B:  dp = −κ(ξ) ∇K(p) dt                                 (ξ fixed: the kinetics' exact flow)
//! O:  dp = −∇Ũ(θ) dt + √(2D) dW                           (θ fixed: exact)
//! L:  SGMGT-D's first-order Langevin terms on θ and ξ
//! ```
//!
//! composed in one of two symmetric orders ([`Composition`]):
//!
//! * **A–B–O–B–A** (SGHMC, SGNHT, mSGNHT): A(h/2) B(h/2) O(h) B(h/2) A(h/2), the exact flows of
//!   the sub-SDEs Li et al. 2016 state (their printed update is garbled by the PDF extraction).
//!   The two position half-drifts are merged into one update θ + (∇K(p₀) + ∇K(p₁))h/2, and the
//!   two B halves share one flow map.
//! * **A–O–B–O–A** (SGMGT, SGMGT-D): A(h/2) O(h/2) Lξ(h/2) Lθ(h) B(h) Lξ(h/2) O(h/2) A(h/2), so
//!   that the thermostat's −∇²K(p) is never evaluated right after a B flow has driven p to 0.
//!   The θ term is frozen at the half-step position: O(σ_θh) for SGMGT-D, second order for
//!   σ_θ = 0.
//!
//! One gradient evaluation per step, at θ½ = θ + v∇K(p)h/2 in the scratch buffer (checked by
//! the fused pass as it goes, or first with a dense mass), and a rejected gradient leaves θ, p
//! and ξ bit for bit as they were; the scratch then receives θ's backup (separable kinetics)
//! or the step's normals (dense mass). The derivation, the reason for A–O–B–O–A and its
//! measurements, and the implementation notes: `docs/splitting-composition.md`.

use super::euler::Accumulators;
use super::sde::{KineticSteps, Law, PositionTerm, Sde, Sums, Thermostat};
use super::state::Phase;
use super::{finish_step, prepared_sweep, reject_bad_gradient, step_gradient};
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::lanes::{
    Body, Coordinate, EXTRA_NORMALS, NoiseBlocks, StepNoise, ZipOutBody, copy_into, sweep, zip_out,
    zip3,
};
use crate::real::Real;
use rand_core::Rng;

/// The order of the symmetric splitting (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Composition {
    /// A(h/2) B(h/2) O(h) B(h/2) A(h/2): the Gaussian samplers (no first-order terms).
    Aboba,
    /// A(h/2) O(h/2) L B(h) L O(h/2) A(h/2): the generalized-kinetics samplers.
    Aoboa,
}

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>> Sde<K, X, L, T> {
    /// One symmetric splitting step in the order `composition`. Returns the sums of the new
    /// state (Σ p∇K, Σ ∇K², Σ ξᵢ).
    #[cfg_attr(feature = "std", inline(always))]
    pub(crate) fn splitting<G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        composition: Composition,
        phase: &mut Phase<'_, T>,
        h: T,
        model: &mut G,
        rng: &mut R,
    ) -> Result<Sums<T>, StepError> {
        let half_h = h * T::HALF;
        let n = phase.len();
        let Sde {
            kinetics,
            thermostat,
            theta: term,
            diffusion,
        } = self;
        let term = *term;
        let (drift_half, theta_sd) = term.scalar(half_h, h, &mut phase.theta_sd);

        // A(h/2), position part, into the scratch buffer; and the incoming state's sums (for a
        // scalar ξ's first half drift).
        kinetics.prepare(phase.p);
        let mut first = Accumulators::<T, K, X>::new();
        {
            let kin = &*kinetics;
            let body = FirstHalfDrift {
                kin,
                term,
                drift_half,
                half_h,
                acc: &mut first,
            };
            zip_out(phase.scratch, phase.theta, phase.p, kin.stream(), body);
        }
        step_gradient::<T, K, G>(model, phase.scratch, phase.grad)?;

        // From here on the step is committed; what it changes is saved for `finish_step` (a
        // separable kinetics' sweep saves θ, p and ξ as it goes).
        let saved_xi = thermostat.scalar_state();
        kinetics.save_state(phase.theta, phase.p);
        let (dim, trace) = (T::from_usize(n), kinetics.trace(n));
        thermostat.drift_scalar(&first.sums(&[]), trace, dim, half_h);
        if !K::SEPARABLE {
            // A dense mass's M⁻¹p does not survive its flows: commit the first half drift now.
            copy_into(phase.theta, phase.scratch);
        }
        // The O pieces' normals: keyed here, drawn block by block inside the fused pass (into
        // the scratch buffer, now free, for a dense mass; on a scalar core drawn from `rng` in
        // the pass, coordinate by coordinate).
        let mut normals = StepNoise::<T>::keyed(rng);
        if !K::SEPARABLE {
            normals.fill(rng, phase.scratch);
        }
        thermostat.prepare(h, true, &mut phase.xi_sd);
        let law = thermostat.law();
        let diffusion = *diffusion;
        // (One noise scale per composition: √(2Dh) for the one O(h), √(Dh) for each O(h/2).)
        let sd = match composition {
            Composition::Aboba => phase.noise_sd.sqrt(T::TWO * diffusion * h),
            Composition::Aoboa => phase.noise_sd.sqrt(diffusion * h),
        };
        let (full_sd, half_sd) = (sd, sd);
        let flow_time = match composition {
            Composition::Aboba => half_h,
            Composition::Aoboa => h,
        };
        // A friction shared by all coordinates and a flow that does not depend on the coordinate
        // (the identity mass): one flow map for the whole step.
        let shared_flow = (X::UNIFORM && K::UNIFORM_FLOW).then(|| {
            let kappa = law.friction::<K::Arith>(0, thermostat.shared());
            kinetics.shared_flow(&mut phase.flow, kappa, flow_time)
        });
        let mut acc = Accumulators::<T, K, X>::new();

        let bad_gradient = if K::SEPARABLE {
            let kin = &*kinetics;
            let scalars = PassScalars {
                h,
                half_h,
                noise_sd: sd,
                drift_half,
                theta_sd,
            };
            let parts = (kin, law, term, shared_flow, scalars);
            let slots = phase.slots_with_backup();
            match composition {
                Composition::Aboba => {
                    let noise = normals.fused(rng, &mut [], [false; EXTRA_NORMALS]);
                    let body = SeparablePass::<T, K, X, L, false>::new(parts, &mut acc);
                    sweep(slots, noise, &mut *thermostat, kin, body)
                }
                Composition::Aoboa => {
                    // The further normals of each coordinate (see `aoboa_coordinate`), in the
                    // θ term's blocks (only SGMGT composes A–O–B–O–A, and its term has them).
                    let mut blocks = L::NoiseBlocks::zeroed();
                    debug_assert_eq!(blocks.blocks().len(), EXTRA_NORMALS);
                    // (ζ_ξ, ζ_θ, ζ_ξ and the second O's z; a scalar core draws the Langevin
                    // terms' only for a σ > 0.)
                    let (xi_noise, theta_noise) = (law.langevin_noise(), term.langevin_noise());
                    let in_use = [xi_noise, theta_noise, xi_noise, true];
                    let noise = normals.fused(rng, blocks.blocks(), in_use);
                    let body = SeparablePass::<T, K, X, L, true>::new(parts, &mut acc);
                    sweep(slots, noise, &mut *thermostat, kin, body)
                }
            }
        } else {
            // A dense mass (a shared friction only): the B pieces are whole-vector flows, the O
            // pieces per coordinate, then M⁻¹p of the new p for the last A(h/2).
            let (theta, p, g, z) = phase.split();
            let kappa = law.friction::<K::Arith>(0, thermostat.shared());
            match composition {
                Composition::Aboba => {
                    kinetics.flow_all(p, kappa, half_h);
                    zip3(p, g, z, |_, p, g, z| *p = *p - g * h + full_sd * z);
                    kinetics.flow_all(p, kappa, half_h);
                }
                Composition::Aoboa => {
                    zip3(p, g, z, |_, p, g, z| *p = *p - g * half_h + half_sd * z);
                    kinetics.flow_all(p, kappa, h);
                    for (p, &g) in p.iter_mut().zip(g.iter()) {
                        *p = *p - g * half_h + half_sd * T::standard_normal(rng);
                    }
                }
            }
            let acc = &mut acc;
            prepared_sweep::<T, K, X, R, _>(kinetics, (theta, p, g, z), thermostat, |kin| {
                move |c: Coordinate<'_, T>| {
                    let (p1, k1) = (*c.p, kin.grad(c.i, c.aux, *c.p));
                    let t1 = *c.theta + k1 * term.drift_at(c.i, drift_half, half_h);
                    *c.theta = t1;
                    acc.add(c.lane, p1 * k1, k1 * k1, t1);
                }
            });
            None // checked before the step
        };
        reject_bad_gradient(kinetics, thermostat, phase, bad_gradient, saved_xi)?;
        let sums = acc.sums(thermostat.values());
        thermostat.drift_scalar(&sums, trace, dim, half_h);
        let finite = acc.finite(&sums) && thermostat.scalar_finite();
        finish_step(kinetics, thermostat, phase, finite, saved_xi)?;
        Ok(sums)
    }
}

/// What every coordinate of a fused pass shares: the step h and h/2, the O pieces' noise sd
/// (√(2Dh) for A–B–O–B–A's one O(h), √(Dh) for each O(h/2) of A–O–B–O–A), the θ term's drift
/// step of h/2 and its Langevin noise sd (A–O–B–O–A only; 0 in A–B–O–B–A, which has none).
#[derive(Clone, Copy)]
struct PassScalars<T> {
    h: T,
    half_h: T,
    noise_sd: T,
    drift_half: T,
    theta_sd: T,
}

/// The fused pass of a separable kinetics: [`aoboa_coordinate`] per coordinate when `AOBOA`,
/// else [`aboba_coordinate`]. A [`Body`] with
/// `#[inline(always)]` rather than a closure handed to `sweep`: a closure this size, called
/// from the chunked loop and its tail, is not inlined, and an out-of-line call per coordinate
/// keeps the loop scalar.
struct SeparablePass<'k, 'a, T: Real, K: KineticSteps<T>, X: Thermostat<T>, L, const AOBOA: bool> {
    parts: PassParts<'k, T, K, X, L>,
    acc: &'a mut Accumulators<T, K, X>,
}

/// What every coordinate of a fused pass reads: the kinetics, the thermostat's law, the θ term,
/// the step's shared flow map (if any) and its scalars.
type PassParts<'k, T, K, X, L> = (
    &'k K,
    <X as Thermostat<T>>::Law,
    L,
    Option<<K as KineticSteps<T>>::Flow>,
    PassScalars<T>,
);

impl<'k, 'a, T: Real, K: KineticSteps<T>, X: Thermostat<T>, L, const AOBOA: bool>
    SeparablePass<'k, 'a, T, K, X, L, AOBOA>
{
    /// The pass over the kinetics, the thermostat's law, the θ term, the shared flow and the
    /// step's scalars, summing into `acc`. (A–B–O–B–A has no θ-term noise: its sd is 0.)
    #[inline(always)]
    fn new(parts: PassParts<'k, T, K, X, L>, acc: &'a mut Accumulators<T, K, X>) -> Self {
        let (kin, law, term, shared_flow, scalars) = parts;
        let theta_sd = if AOBOA { scalars.theta_sd } else { T::ZERO };
        let scalars = PassScalars {
            theta_sd,
            ..scalars
        };
        SeparablePass {
            parts: (kin, law, term, shared_flow, scalars),
            acc,
        }
    }
}

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>, const AOBOA: bool> Body<T>
    for SeparablePass<'_, '_, T, K, X, L, AOBOA>
{
    #[inline(always)]
    fn run(&mut self, c: Coordinate<'_, T>) {
        if AOBOA {
            aoboa_coordinate::<T, K, X, L>(self.parts, self.acc, c)
        } else {
            aboba_coordinate::<T, K, X, L>(self.parts, self.acc, c)
        }
    }
}

/// The first pass, A(h/2)'s position part: θ½ = θ + ∇K(p)·(drift step) into the scratch
/// buffer, and the incoming state's sums. A [`ZipOutBody`] with `#[inline(always)]` rather than
/// a closure, for the reason [`SeparablePass`] gives (a closure holding a monomial-gamma ∇K
/// stayed out of line in the dispatched copies, and the pass ran scalar).
struct FirstHalfDrift<'k, 'a, T: Real, K: KineticSteps<T>, X: Thermostat<T>, L> {
    kin: &'k K,
    term: L,
    drift_half: T,
    half_h: T,
    acc: &'a mut Accumulators<T, K, X>,
}

impl<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>> ZipOutBody<T>
    for FirstHalfDrift<'_, '_, T, K, X, L>
{
    #[inline(always)]
    fn run(&mut self, i: usize, lane: usize, s: &mut T, t: T, p0: T, a: T) {
        let k0 = self.kin.grad(i, a, p0);
        *s = t + k0 * self.term.drift_at(i, self.drift_half, self.half_h);
        self.acc.add_sums(lane, p0 * k0, k0 * k0);
    }
}

/// One coordinate of A–B–O–B–A with a separable kinetics (see the module docs).
#[inline(always)]
fn aboba_coordinate<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>>(
    (kin, law, term, shared_flow, scalars): PassParts<'_, T, K, X, L>,
    acc: &mut Accumulators<T, K, X>,
    c: Coordinate<'_, T>,
) {
    let PassScalars {
        h,
        half_h,
        noise_sd: full_sd,
        drift_half,
        ..
    } = scalars;
    let (p0, x0) = (*c.p, *c.xi);
    let (k0, c0) = kin.grad_curv(c.i, c.aux, p0);
    let x_half = law.drift(x0, k0, c0, half_h);
    // (A `match`, not `unwrap_or_else`: a closure may stay out of line in a dispatched copy.)
    let flow = match shared_flow {
        Some(flow) => flow,
        None => kin.flow(c.i, c.aux, law.friction::<K::Arith>(c.i, x_half), half_h),
    };
    let kicked = kin.apply(c.i, flow, p0) - c.g * h + full_sd * c.z;
    let p1 = kin.apply(c.i, flow, kicked);
    let (k1, c1) = kin.grad_curv(c.i, c.aux, p1);
    let dh = term.drift_at(c.i, drift_half, half_h);
    let t1 = *c.theta + kin.merged_drift(c.aux, p0, p1, k0, k1, dh);
    *c.theta = t1;
    *c.p = p1;
    if X::PER_COORDINATE {
        let x1 = law.drift(x_half, k1, c1, half_h);
        *c.xi = x1;
        acc.add_with_xi(c.lane, p1 * k1, k1 * k1, t1, x1);
    } else {
        acc.add(c.lane, p1 * k1, k1 * k1, t1);
    }
}

/// One coordinate of A–O–B–O–A with a separable kinetics (see the module docs and
/// [`aboba_coordinate`]).
/// Its normals: z for the first O(h/2), and `c.zeta` = (ζ_ξ of the first Lξ(h/2), ζ_θ of
/// Lθ(h), ζ_ξ of the second Lξ(h/2), z of the second O(h/2)), drawn by the sweep from the
/// step's lane generator (only SGMGT composes A–O–B–O–A).
#[inline(always)]
fn aoboa_coordinate<T: Real, K: KineticSteps<T>, X: Thermostat<T>, L: PositionTerm<T>>(
    (kin, law, term, shared_flow, scalars): PassParts<'_, T, K, X, L>,
    acc: &mut Accumulators<T, K, X>,
    c: Coordinate<'_, T>,
) {
    let PassScalars {
        h,
        half_h,
        noise_sd: half_sd,
        drift_half,
        theta_sd,
    } = scalars;
    let (p0, x0) = (*c.p, *c.xi);
    let (drift_h, sd_theta) = term.at(c.i, (drift_half, theta_sd), half_h, h);
    let (k0, c0) = kin.grad_curv(c.i, c.aux, p0);
    // A(h/2), O(h/2).
    let mut t_half = *c.theta + k0 * drift_h;
    let mut x_half = law.drift(x0, k0, c0, half_h);
    let mut p1 = p0 - c.g * half_h + half_sd * c.z;
    // Lξ(h/2), Lθ(h), B(h), Lξ(h/2).
    x_half = law.langevin_half::<K::Arith>(c.i, x_half, true, c.zeta[0]);
    t_half = term.langevin(t_half, c.g, h, sd_theta, c.zeta[1]);
    let flow = match shared_flow {
        Some(flow) => flow,
        None => kin.flow(c.i, c.aux, law.friction::<K::Arith>(c.i, x_half), h),
    };
    p1 = kin.apply(c.i, flow, p1);
    x_half = law.langevin_half::<K::Arith>(c.i, x_half, false, c.zeta[2]);
    // O(h/2), with a normal of its own.
    p1 = p1 - c.g * half_h + half_sd * c.zeta[3];
    // A(h/2) with the new p.
    let (k1, c1) = kin.grad_curv(c.i, c.aux, p1);
    let t1 = t_half + k1 * drift_h;
    *c.theta = t1;
    *c.p = p1;
    if X::PER_COORDINATE {
        let x1 = law.drift(x_half, k1, c1, half_h);
        *c.xi = x1;
        acc.add_with_xi(c.lane, p1 * k1, k1 * k1, t1, x1);
    } else {
        acc.add(c.lane, p1 * k1, k1 * k1, t1);
    }
}
