//! The symmetric splitting integrator (A–B–O–B–A) for SGHMC, SGNHT and mSGNHT.
//!
//! Li, Chen, Fan & Carin (AAAI 2016, §3, eq. 3) split the mSGNHT SDE into three exactly solvable
//! pieces,
//!
//! ```text
//! A:  dθ = p dt,   dξ = (p ⊙ p − 1) dt          (drift; p constant)
//! B:  dp = −ξ ⊙ p dt                             (friction; solved by p ← e^{−ξ t} ⊙ p)
//! O:  dp = −∇Ũ(θ) dt + √(2D) dW                 (gradient kick and noise)
//! ```
//!
//! and compose them symmetrically, A(h/2) B(h/2) O(h) B(h/2) A(h/2):
//!
//! ```text
//! θ ← θ + p h/2;             ξ ← ξ + (p ⊙ p − 1) h/2
//! p ← e^{−ξ h/2} ⊙ p
//! p ← p − ∇Ũ(θ) h + √(2Dh) ζ,   ζ ~ N(0, I)
//! p ← e^{−ξ h/2} ⊙ p
//! θ ← θ + p h/2;             ξ ← ξ + (p ⊙ p − 1) h/2
//! ```
//!
//! The printed update in the paper is garbled by the PDF extraction; the version above is the
//! composition of the exact flows of the sub-SDEs the paper states (derived here, and checked by
//! the order-of-accuracy test: a second-order error in the stationary variance).
//!
//! The same composition serves the scalar thermostat of SGNHT (A: dξ = (pᵀp/n − 1) dt, B with
//! the scalar ξ) and SGHMC (no thermostat, B: p ← e^{−Ah/2} p with the constant friction A).
//!
//! Implementation: the half-step position θ + p h/2 is written into the scratch buffer, not into
//! θ, and the gradient is evaluated there; only when it is finite is anything committed, so a
//! rejected step leaves θ, p and ξ bit-for-bit unchanged. The final position is then
//! θ + (p_old + p_new) h/2, which equals θ_{1/2} + p_new h/2. One gradient evaluation per step.

use super::pieces::{
    Friction, GeneralPieces, Phase, check_state, checked_gradient, theta_noise_factors,
};
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::kinetic::Kinetic;
use crate::lanes::{LANES, Lanes, finiteness_probe, reduce, zip_phase, zip3};
use crate::real::Real;
use crate::rng::fill_standard_normal;
use rand_core::Rng;

/// One A–B–O–B–A step. `noise_sd` is √(2Dh), the standard deviation of the O-step noise.
/// Returns pᵀp after the step.
pub(crate) fn splitting_step<T, G, R>(
    phase: &mut Phase<'_, T>,
    friction: Friction<'_, T>,
    h: T,
    noise_sd: T,
    model: &mut G,
    rng: &mut R,
) -> Result<T, StepError>
where
    T: Real,
    G: Gradient<T> + ?Sized,
    R: Rng + ?Sized,
{
    let n = phase.dim();
    let half_h = h * T::HALF;

    // A(h/2), position part, into scratch; Σ p² of the incoming momentum for a scalar thermostat.
    let mut acc = [T::ZERO; LANES];
    zip3(phase.scratch, phase.theta, phase.p, |j, s, t, p| {
        *s = t + p * half_h;
        acc[j] += p * p;
    });
    let sum_p2_old = reduce(acc);

    checked_gradient(model, phase.scratch, phase.grad)?;
    fill_standard_normal(rng, phase.scratch);

    let (sum_p2, finite) = match friction {
        Friction::Constant(a) => {
            let decay = (-a * half_h).exp();
            fused::<T, false>(phase, Lanes::Uniform(a), decay, h, noise_sd)
        }
        Friction::Scalar(xi) => {
            // A(h/2) for the scalar thermostat, then B–O–B with ξ_{1/2}, then the last A(h/2).
            let xi_half = *xi + (sum_p2_old / n - T::ONE) * half_h;
            let decay = (-xi_half * half_h).exp();
            let (s, finite) = fused::<T, false>(phase, Lanes::Uniform(xi_half), decay, h, noise_sd);
            *xi = xi_half + (s / n - T::ONE) * half_h;
            if !(finite && xi.is_finite()) {
                check_state(phase.theta, phase.p, Some(core::slice::from_ref(xi)))?;
            }
            (s, true)
        }
        Friction::PerCoordinate(xi) => {
            let (s, finite) =
                fused::<T, true>(phase, Lanes::PerCoordinate(xi), T::ONE, h, noise_sd);
            if !finite {
                check_state(phase.theta, phase.p, Some(xi))?;
            }
            (s, true)
        }
    };
    if !finite {
        check_state(phase.theta, phase.p, None)?;
    }
    Ok(sum_p2)
}

/// B(h/2) O(h) B(h/2) A(h/2) in one pass (the first A(h/2) is folded into θ's update).
/// With `PER_COORDINATE`, ξᵢ gets its first half drift here too and the decay is per coordinate;
/// otherwise `decay` = e^{−ξh/2} is shared and the slot writes are discarded.
/// Returns (Σ p_new², whether θ, p and ξ all stayed finite).
#[inline(always)]
fn fused<T: Real, const PER_COORDINATE: bool>(
    phase: &mut Phase<'_, T>,
    xi: Lanes<'_, T>,
    decay: T,
    h: T,
    noise_sd: T,
) -> (T, bool) {
    let half_h = h * T::HALF;
    let mut acc = [T::ZERO; LANES];
    let mut guard = [T::ZERO; LANES];
    zip_phase(
        phase.theta,
        phase.p,
        phase.grad,
        phase.scratch,
        xi,
        |j, t, p, g, z, x| {
            let p0 = *p;
            let (d, x_half) = if PER_COORDINATE {
                let x_half = *x + (p0 * p0 - T::ONE) * half_h;
                ((-x_half * half_h).exp(), x_half)
            } else {
                (decay, *x)
            };
            let p1 = d * (d * p0 - g * h + noise_sd * z);
            *t += (p0 + p1) * half_h;
            *p = p1;
            *x = x_half + (p1 * p1 - T::ONE) * half_h;
            acc[j] += p1 * p1;
            guard[j] += finiteness_probe(*t) + finiteness_probe(*x);
        },
    );
    let s = reduce(acc);
    (s, s.is_finite() && reduce(guard) == T::ZERO)
}

/// One symmetric splitting step of the generalized-kinetics SDE (SGMGT / SGMGT-D, 001 eq. 13),
/// over the same exactly solvable pieces as above, generalised, composed A–O–B–O–A:
///
/// ```text
/// A:  dθ = ∇K(p) dt,   dξ = γ(∇K(p)² − ∇²K(p)) dt            (p fixed: exact, linear in t)
/// O:  dp = −∇Ũ(θ) dt + √(2σ_p) dW                             (θ fixed: exact)
/// B:  dp = −(σ_p + γ∇F(ξ)) ⊙ ∇K(p) dt                        (ξ fixed: Kinetic::friction_flow)
/// L:  dθ = −σ_θ ∇Ũ(θ) dt + √(2σ_θ) dW                         (Euler–Maruyama, gradient at θ_{1/2})
///     dξ = −σ_ξ ∇F(ξ) dt + √(2σ_ξ) dW                         (flow and noise, composed symmetrically)
///
/// θ_{1/2} = θ + ∇K(p) h/2;   ξ_{1/2} = ξ + γ(∇K(p)² − ∇²K(p)) h/2          A(h/2)
/// p ← p − ∇Ũ(θ_{1/2}) h/2 + √(σ_p h) ζ₁                                    O(h/2)
/// ξ_{1/2} ← flow_F(ξ_{1/2}, σ_ξ h/2) + √(σ_ξ h) ζ₃                        L(h/2), ξ part
/// θ_{1/2} ← θ_{1/2} − σ_θ ∇Ũ(θ_{1/2}) h + √(2σ_θ h) ζ₅                    L(h), θ part
/// p ← flow_K(p, (σ_p + γ∇F(ξ_{1/2})) h)                                    B(h)
/// ξ_{1/2} ← flow_F(ξ_{1/2} + √(σ_ξ h) ζ₄, σ_ξ h/2)                        L(h/2), ξ part
/// p ← p − ∇Ũ(θ_{1/2}) h/2 + √(σ_p h) ζ₂                                    O(h/2)
/// θ ← θ_{1/2} + ∇K(p) h/2;   ξ ← ξ_{1/2} + γ(∇K(p)² − ∇²K(p)) h/2          A(h/2)
/// ```
///
/// 001 §3 ("More accurate numerical integrators") defers its splitting to the missing
/// supplement; this one is derived here from the sub-SDEs of eq. 13. Every piece is exact or
/// second-order and the composition is symmetric, so the scheme is second order — except the
/// first-order Langevin term on θ, which is frozen at θ_{1/2} (one gradient evaluation per step
/// allows no better) and contributes an O(σ_θ h) error; for σ_θ = 0 (SGMGT) it is O(h²).
///
/// **Why A–O–B–O–A and not the A–B–O–B–A of mSGNHT-S above.** The thermostat drift of A
/// contains −∇²K(p), which for eq. 12 with a = 2 grows like c²/(16√|p|) near p = 0. Evaluated
/// right after a B flow — which drives p to 0 in finite time, so its output has a density that
/// stays finite at s = √|p| = 0 — that term has an infinite mean (a Cauchy-like tail of ξ kicks),
/// and the chain heats without bound: we measured mean ξ = −71 and a kinetic temperature of 1.41
/// on a 10-d Gaussian with gradient noise. After an O step (a Gaussian kick) p has a smooth
/// density, the density of s vanishes at 0, and the kick has a finite mean, as in the Euler
/// scheme. For Gaussian K the two orders are different second-order schemes for the same SDE
/// (`tests/sgmgt.rs` checks both reach the same stationary moments); the A–O–B–O–A order costs one
/// extra normal per coordinate. One gradient evaluation per step, at θ_{1/2}, which lives in the
/// scratch buffer until the gradient is known to be finite, so a rejected step changes nothing.
/// `noise_estimates`, when given, holds a B̂ᵢ per coordinate that replaces the pieces' scalar
/// one in θ's velocity and injected noise (`Sgmgt::set_noise_estimates`).
/// Returns Σᵢ pᵢ ∂K/∂pᵢ after the step.
pub(crate) fn splitting_step_general<T, K, F, G, R>(
    phase: &mut Phase<'_, T>,
    xi: &mut [T],
    pieces: &GeneralPieces<K, F, T>,
    noise_estimates: Option<&[T]>,
    h: T,
    model: &mut G,
    rng: &mut R,
) -> Result<T, StepError>
where
    T: Real,
    K: Kinetic<T>,
    F: Kinetic<T>,
    G: Gradient<T> + ?Sized,
    R: Rng + ?Sized,
{
    let half_h = h * T::HALF;
    // θ moves with v ∇K(p), v = 1 − 2σ_θ B̂ (1 without a noise estimate; see
    // SgmgtParams::with_noise_estimate).
    let drift_h = half_h * pieces.velocity_scale;
    // Under per-coordinate B̂ᵢ, coordinate i's (velocity factor, injected share); else the
    // pieces' scalars. (b's length is checked in Sgmgt::set_noise_estimates.)
    let factors = |i: usize| {
        noise_estimates
            .map(|b| theta_noise_factors(pieces.sigma_theta, b.get(i).copied().unwrap_or(T::ZERO)))
    };
    let (kin, pot) = (&pieces.kinetic, &pieces.potential);
    // A(h/2), position part, into scratch.
    for (i, (s, (&t, &p))) in phase
        .scratch
        .iter_mut()
        .zip(phase.theta.iter().zip(phase.p.iter()))
        .enumerate()
    {
        let drift_h = factors(i).map_or(drift_h, |(v, _)| v * half_h);
        *s = t + kin.gradient(i, p) * drift_h;
    }
    checked_gradient(model, phase.scratch, phase.grad)?;
    fill_standard_normal(rng, phase.scratch);
    // O(h/2) noise sd √(2σ_p h/2); L(h/2) noise on ξ likewise; L(h) on θ √(2σ_θ h).
    let sd_p = (pieces.sigma_p * h).sqrt();
    // (θ's share reduced by σ_θ B̂ for the gradient noise its term carries; see
    // SgmgtParams::with_noise_estimate.)
    let sd_theta = (T::TWO * pieces.sigma_theta * pieces.theta_noise_fraction * h).sqrt();
    let sd_xi = (pieces.sigma_xi * h).sqrt();
    let xi_flow = pieces.sigma_xi * half_h;
    let mut virial = T::ZERO;
    let coords = phase
        .theta
        .iter_mut()
        .zip(phase.p.iter_mut())
        .zip(xi.iter_mut())
        .zip(phase.grad.iter().zip(phase.scratch.iter()))
        .enumerate();
    for (i, (((t, p), x), (&g, &z1))) in coords {
        let (drift_h, sd_theta) = factors(i).map_or((drift_h, sd_theta), |(v, share)| {
            (v * half_h, (T::TWO * pieces.sigma_theta * share * h).sqrt())
        });
        let p0 = *p;
        // A(h/2): θ and ξ drift with p0.
        let (k0, c0) = kin.gradient_and_curvature(i, p0);
        let mut t_half = *t + k0 * drift_h;
        let mut x_half = *x + pieces.gamma * (k0 * k0 - c0) * half_h;
        // O(h/2).
        let mut p1 = p0 - g * half_h + sd_p * z1;
        // L(h/2) on ξ, L(h) on θ, B(h), L(h/2) on ξ.
        if pieces.sigma_xi > T::ZERO {
            x_half = pot.friction_flow(i, x_half, xi_flow) + sd_xi * T::standard_normal(rng);
        }
        if pieces.sigma_theta > T::ZERO {
            t_half += -pieces.sigma_theta * g * h + sd_theta * T::standard_normal(rng);
        }
        let kappa = pieces.sigma_p + pieces.gamma * pot.gradient(i, x_half);
        p1 = kin.friction_flow(i, p1, kappa * h);
        if pieces.sigma_xi > T::ZERO {
            x_half = pot.friction_flow(i, x_half + sd_xi * T::standard_normal(rng), xi_flow);
        }
        // O(h/2).
        p1 = p1 - g * half_h + sd_p * T::standard_normal(rng);
        // A(h/2) with the new p.
        let (k1, c1) = kin.gradient_and_curvature(i, p1);
        *t = t_half + k1 * drift_h;
        *x = x_half + pieces.gamma * (k1 * k1 - c1) * half_h;
        *p = p1;
        virial += p1 * k1;
    }
    check_state(phase.theta, phase.p, Some(xi))?;
    Ok(virial)
}
