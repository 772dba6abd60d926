//! The Euler integrator for SGHMC, SGNHT and mSGNHT.
//!
//! Ding et al. 2014, Alg. 1 (scalar thermostat), and Li et al. 2016, §2.2 (one thermostat per
//! coordinate), with the gradient taken at the current θ:
//!
//! ```text
//! p ← p − ξ ⊙ p h − ∇Ũ(θ) h + √(2Dh) ζ,   ζ ~ N(0, I)
//! θ ← θ + p h
//! ξ ← ξ + (p ⊙ p − 1) h        (per coordinate)   or   ξ ← ξ + (pᵀp/n − 1) h   (scalar)
//! ```
//!
//! For SGHMC (002, Alg. 2) ξ is the constant friction A and there is no thermostat update. Li et
//! al. write the same chain with θ updated first and the gradient taken at the new θ; it is the
//! same sequence of states read at a shifted index. One gradient evaluation per step. The
//! gradient is evaluated before anything changes, so a non-finite gradient leaves the state as it
//! was.

use super::pieces::{
    Friction, GeneralPieces, Phase, check_state, checked_gradient, theta_noise_factors,
};
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::kinetic::Kinetic;
use crate::lanes::{LANES, Lanes, finiteness_probe, reduce, zip_phase};
use crate::real::Real;
use crate::rng::fill_standard_normal;
use rand_core::Rng;

/// One Euler step. `noise_sd` is √(2Dh). Returns pᵀp after the step.
pub(crate) fn euler_step<T, G, R>(
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
    checked_gradient(model, phase.theta, phase.grad)?;
    fill_standard_normal(rng, phase.scratch);
    let n = phase.dim();
    let (sum_p2, finite) = match friction {
        Friction::Constant(a) => fused(phase, Lanes::Uniform(a), h, noise_sd),
        Friction::Scalar(xi) => {
            let (s, finite) = fused(phase, Lanes::Uniform(*xi), h, noise_sd);
            *xi += (s / n - T::ONE) * h;
            if !(finite && xi.is_finite()) {
                check_state(phase.theta, phase.p, Some(core::slice::from_ref(xi)))?;
            }
            (s, true)
        }
        Friction::PerCoordinate(xi) => {
            let (s, finite) = fused(phase, Lanes::PerCoordinate(xi), h, noise_sd);
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

/// The kick, drift and per-coordinate thermostat update in one pass (for a shared friction the
/// slot writes are discarded). Returns (Σ p_new², whether θ, p and ξ all stayed finite).
#[inline(always)]
fn fused<T: Real>(phase: &mut Phase<'_, T>, xi: Lanes<'_, T>, h: T, noise_sd: T) -> (T, bool) {
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
            let p1 = p0 - *x * p0 * h - g * h + noise_sd * z;
            *t += p1 * h;
            *p = p1;
            *x += (p1 * p1 - T::ONE) * h;
            acc[j] += p1 * p1;
            guard[j] += finiteness_probe(*t) + finiteness_probe(*x);
        },
    );
    let s = reduce(acc);
    (s, s.is_finite() && reduce(guard) == T::ZERO)
}

/// One Euler step of the generalized-kinetics SDE (SGMGT / SGMGT-D, 001 eq. 13; the paper's
/// supplement, which holds its Euler scheme, is not available, so this is the Euler–Maruyama
/// discretisation in the same order as the Gaussian scheme above — kick p, then drift θ and ξ
/// with the new p):
///
/// ```text
/// p ← p − (σ_p + γ∇F(ξ)) ⊙ ∇K(p) h − ∇Ũ(θ) h + √(2σ_p h) ζ_p
/// θ ← θ + ∇K(p) h − σ_θ ∇Ũ(θ) h + √(2σ_θ h) ζ_θ            (new p)
/// ξ ← ξ + γ(∇K(p)² − ∇²K(p)) h − σ_ξ ∇F(ξ) h + √(2σ_ξ h) ζ_ξ  (new p, old ξ in ∇F)
/// ```
///
/// With Gaussian K (M = I), σ_θ = σ_ξ = 0 and γ = 1 this is the mSGNHT Euler step above with
/// D = σ_p and ξ shifted by σ_p. The normals ζ_p fill the scratch buffer first (in the same
/// order as the Gaussian scheme), then ζ_θ and ζ_ξ are drawn per coordinate when σ_θ, σ_ξ > 0.
/// `noise_estimates`, when given, holds a B̂ᵢ per coordinate that replaces the pieces' scalar
/// one in θ's velocity and injected noise (`Sgmgt::set_noise_estimates`).
/// Returns Σᵢ pᵢ ∂K/∂pᵢ after the step (n times the generalized kinetic temperature).
pub(crate) fn euler_step_general<T, K, F, G, R>(
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
    checked_gradient(model, phase.theta, phase.grad)?;
    fill_standard_normal(rng, phase.scratch);
    let sd_p = (T::TWO * pieces.sigma_p * h).sqrt();
    // The θ term's gradient −σ_θ h ∇Ũ already carries variance ≈ 2σ_θ h · σ_θ B of noise;
    // inject the rest (SgmgtParams::with_noise_estimate).
    let sd_theta = (T::TWO * pieces.sigma_theta * pieces.theta_noise_fraction * h).sqrt();
    let sd_xi = (T::TWO * pieces.sigma_xi * h).sqrt();
    // θ moves with v ∇K(p), v = 1 − 2σ_θ B̂ (SgmgtParams::with_noise_estimate).
    let drift_h = pieces.velocity_scale * h;
    let (kin, pot) = (&pieces.kinetic, &pieces.potential);
    let mut virial = T::ZERO;
    let coords = phase
        .theta
        .iter_mut()
        .zip(phase.p.iter_mut())
        .zip(xi.iter_mut())
        .zip(phase.grad.iter().zip(phase.scratch.iter()))
        .enumerate();
    for (i, (((t, p), x), (&g, &z))) in coords {
        let fx = pot.gradient(i, *x);
        let friction = pieces.sigma_p + pieces.gamma * fx;
        let p1 = *p - friction * kin.gradient(i, *p) * h - g * h + sd_p * z;
        let (k1, c1) = kin.gradient_and_curvature(i, p1);
        let (drift_h, sd_theta) = match noise_estimates {
            None => (drift_h, sd_theta),
            Some(b) => {
                // (b's length is checked in Sgmgt::set_noise_estimates.)
                let b_i = b.get(i).copied().unwrap_or(T::ZERO);
                let (v, share) = theta_noise_factors(pieces.sigma_theta, b_i);
                (v * h, (T::TWO * pieces.sigma_theta * share * h).sqrt())
            }
        };
        let mut t1 = *t + k1 * drift_h;
        if pieces.sigma_theta > T::ZERO {
            t1 += -pieces.sigma_theta * g * h + sd_theta * T::standard_normal(rng);
        }
        let mut x1 = *x + pieces.gamma * (k1 * k1 - c1) * h;
        if pieces.sigma_xi > T::ZERO {
            x1 += -pieces.sigma_xi * fx * h + sd_xi * T::standard_normal(rng);
        }
        *t = t1;
        *p = p1;
        *x = x1;
        virial += p1 * k1;
    }
    check_state(phase.theta, phase.p, Some(xi))?;
    Ok(virial)
}
