//! Euler and splitting steps of SGHMC and SGNHT with a diagonal or dense mass M (004 Alg. 2–3).
//!
//! With K(p) = ½ pᵀM⁻¹p the SDEs are (v = M⁻¹p = ∇K):
//!
//! ```text
//! SGHMC (004 Alg. 3):  dθ = v dt,  dp = −∇Ũ(θ) dt − C v dt + √(2(C − B̂)) dW
//! SGNHT (004 Alg. 2):  dθ = v dt,  dp = −∇Ũ(θ) dt − ξ v dt + √(2A) dW,
//!                      dξ = (|v|²/tr M⁻¹ − 1) dt                      (derived, see below)
//! ```
//!
//! SGHMC: with the injected noise √(2C) I and the friction −C M⁻¹p, the momentum's
//! Ornstein–Uhlenbeck part has stationary covariance Σ solving C M⁻¹Σ + Σ M⁻¹ C = 2C I, i.e.
//! Σ = M: p ~ N(0, M), as the kinetics K require.
//!
//! SGNHT: **this departs from the print.** 004 Alg. 2 updates ξ ← ξ + ε(pᵀM⁻¹p/D − 1). With
//! H = U(θ) + ½pᵀM⁻¹p and the candidate density ρ ∝ exp(−H − (μ/2)(ξ − A)²) for a constant
//! μ > 0, the Fokker–Planck operator of the friction, the noise and dξ = f(p) dt gives (the
//! Hamiltonian part preserves ρ; ∇ₚρ = −vρ, Δₚρ = (|v|² − tr M⁻¹)ρ)
//!
//! ```text
//! ∇ₚ·(ξ v ρ) + A Δₚρ − ∂_ξ(f ρ) = ρ (ξ − A) [tr M⁻¹ − |v|² + μ f]
//! ```
//!
//! which vanishes for every (θ, p, ξ) iff f = (|v|² − tr M⁻¹)/μ = (pᵀM⁻²p − tr M⁻¹)/μ. Any
//! μ > 0 gives the same θ- and p-marginals (μ is the thermostat's inverse variance, 1/Var ξ);
//! we take μ = tr M⁻¹, so f = |v|²/tr M⁻¹ − 1: it is scale-free (multiplying M by a constant
//! does not change how fast ξ reacts to a temperature error — with μ = D the rate would scale
//! with M⁻², and a learned mass that grows would slow the thermostat down), it reduces to
//! pᵀp/D − 1 for M = I and equals the printed pᵀM⁻¹p/D − 1 exactly for every M = mI. Its mean
//! under p ~ N(0, M) is 0. For any other M the printed rule leaves no density of this form
//! stationary (tests/mass_samplers.rs measures its bias on a diagonal M). Both rules are
//! available ([`ThermostatRule`]); the derived one is the default. μ changes only when the mass
//! does (an MCEM M-step), between which it is a constant, as the derivation needs.
//!
//! Euler (the order of 004 Alg. 2–3, as in the identity-mass Euler step): kick p with the
//! friction at the old p, the gradient at the old θ and the noise; drift θ with the new
//! M⁻¹p; update ξ with the new p. Splitting: A(h/2) B(h/2) O(h) B(h/2) A(h/2) with the exact
//! friction flow p ← exp(−c t M⁻¹) p: per coordinate for a diagonal M, and V e^{−ctΛ} Vᵀp for a
//! dense M⁻¹ = VΛVᵀ whose eigendecomposition the caller's buffer holds
//! (`MassBuffer::dense_with_eigen`); a dense mass without it is refused with the splitting
//! integrator ([`crate::LayoutError::UnsupportedMass`]). One gradient evaluation per step; a
//! non-finite gradient leaves the state unchanged.

use super::pieces::{Phase, check_state, checked_gradient};
use crate::error::StepError;
use crate::gradient::Gradient;
use crate::kinetic::Mass;
use crate::real::Real;
use crate::rng::fill_standard_normal;
use rand_core::Rng;

/// The thermostat update of SGNHT with a general mass M.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ThermostatRule {
    /// dξ = (|M⁻¹p|²/tr M⁻¹ − 1) dt: derived from the Fokker–Planck equation (module docs of
    /// `src/integrator/mass_sde.rs`); stationary for every M. The default.
    #[default]
    Derived,
    /// dξ = (pᵀM⁻¹p/D − 1) dt as printed in 004 Alg. 2: stationary only for M ∝ I (kept for
    /// comparison; biased for other masses).
    Printed,
}

/// The friction piece: SGHMC's constant C, or SGNHT's scalar thermostat with its rule.
pub(crate) enum MassFriction<'a, T> {
    Constant(T),
    Thermostat(&'a mut T, ThermostatRule),
}

/// dξ/dt from Σ pᵢvᵢ = pᵀM⁻¹p, Σ vᵢ² = |M⁻¹p|², tr M⁻¹ and D.
#[inline]
fn thermostat_rate<T: Real>(rule: ThermostatRule, pv: T, vv: T, trace: T, n: T) -> T {
    match rule {
        ThermostatRule::Derived => vv / trace - T::ONE,
        ThermostatRule::Printed => pv / n - T::ONE,
    }
}

/// (M⁻¹)ᵢ for a diagonal inverse mass (`None` is the identity).
#[inline]
fn inv_m<T: Real>(m: Option<&[T]>, i: usize) -> T {
    m.map_or(T::ONE, |m| m[i])
}

/// One Euler step with a general mass; `inv_mass_p` (length d) is used for a dense mass only.
/// Returns pᵀM⁻¹p after the step.
#[allow(clippy::too_many_arguments)]
pub(crate) fn mass_euler_step<T, G, R>(
    phase: &mut Phase<'_, T>,
    mass: Mass<'_, T>,
    inv_mass_p: &mut [T],
    friction: MassFriction<'_, T>,
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
    let c = match &friction {
        MassFriction::Constant(c) => *c,
        MassFriction::Thermostat(xi, _) => **xi,
    };
    let (mut pv, mut vv) = (T::ZERO, T::ZERO);
    match mass.diagonal_option() {
        Ok(m) => {
            // p ← p − h c M⁻¹p − h ∇Ũ(θ) + √(2Dh) ζ;  θ ← θ + h M⁻¹p_new   (004 Alg. 2/3)
            for i in 0..phase.theta.len() {
                let mi = inv_m(m, i);
                let p0 = phase.p[i];
                let p1 = p0 - h * c * mi * p0 - h * phase.grad[i] + noise_sd * phase.scratch[i];
                let v1 = mi * p1;
                phase.theta[i] += h * v1;
                phase.p[i] = p1;
                pv += p1 * v1;
                vv += v1 * v1;
            }
        }
        Err(()) => {
            mass.kinetic_gradient(phase.p, inv_mass_p);
            for (((p, &v), &g), &z) in phase
                .p
                .iter_mut()
                .zip(inv_mass_p.iter())
                .zip(phase.grad.iter())
                .zip(phase.scratch.iter())
            {
                *p = *p - h * c * v - h * g + noise_sd * z;
            }
            mass.kinetic_gradient(phase.p, inv_mass_p);
            for ((t, &p), &v) in phase
                .theta
                .iter_mut()
                .zip(phase.p.iter())
                .zip(inv_mass_p.iter())
            {
                *t += h * v;
                pv += p * v;
                vv += v * v;
            }
        }
    }
    if let MassFriction::Thermostat(xi, rule) = friction {
        let n = phase.dim();
        let trace = mass.trace_inverse(phase.theta.len());
        *xi += h * thermostat_rate(rule, pv, vv, trace, n);
        check_state(phase.theta, phase.p, Some(core::slice::from_ref(xi)))?;
    } else {
        check_state(phase.theta, phase.p, None)?;
    }
    Ok(pv)
}

/// One A–B–O–B–A splitting step with any mass whose friction flow is exact (identity,
/// diagonal, or dense with its eigendecomposition, [`crate::kinetic::MassBuffer::dense_with_eigen`];
/// the samplers' constructors refuse a dense mass without it). `inv_mass_p` (length d) is used
/// for a dense mass only. Returns pᵀM⁻¹p after the step.
#[allow(clippy::too_many_arguments)]
pub(crate) fn mass_splitting_step<T, G, R>(
    phase: &mut Phase<'_, T>,
    mass: Mass<'_, T>,
    inv_mass_p: &mut [T],
    friction: MassFriction<'_, T>,
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
    let trace = mass.trace_inverse(phase.theta.len());
    let diag = mass.diagonal_option();
    // A(h/2), position part, into scratch: θ½ = θ + (h/2) M⁻¹p; and pᵀM⁻¹p, |M⁻¹p|² of the old p.
    let (mut pv0, mut vv0) = (T::ZERO, T::ZERO);
    if let Ok(m) = diag {
        for i in 0..phase.theta.len() {
            let v = inv_m(m, i) * phase.p[i];
            phase.scratch[i] = phase.theta[i] + half_h * v;
            pv0 += phase.p[i] * v;
            vv0 += v * v;
        }
    } else {
        mass.kinetic_gradient(phase.p, inv_mass_p);
        for (((s, &t), &p), &v) in phase
            .scratch
            .iter_mut()
            .zip(phase.theta.iter())
            .zip(phase.p.iter())
            .zip(inv_mass_p.iter())
        {
            *s = t + half_h * v;
            pv0 += p * v;
            vv0 += v * v;
        }
    }
    checked_gradient(model, phase.scratch, phase.grad)?;
    // A(h/2), thermostat part: ξ½ = ξ + (h/2) f(p).
    let c = match &friction {
        MassFriction::Constant(c) => *c,
        MassFriction::Thermostat(xi, rule) => {
            **xi + half_h * thermostat_rate(*rule, pv0, vv0, trace, n)
        }
    };
    let (mut pv, mut vv) = (T::ZERO, T::ZERO);
    if let Ok(m) = diag {
        fill_standard_normal(rng, phase.scratch);
        // B(h/2) O(h) B(h/2): p ← d (d p − h ∇Ũ(θ½) + √(2Dh) ζ), d = exp(−c m⁻¹ᵢ h/2) (exact
        // flow of dp = −c M⁻¹p dt per coordinate); then A(h/2): θ ← θ½ + (h/2) M⁻¹p_new.
        for i in 0..phase.theta.len() {
            let mi = inv_m(m, i);
            let d = (-c * mi * half_h).exp();
            let p0 = phase.p[i];
            let p1 = d * (d * p0 - h * phase.grad[i] + noise_sd * phase.scratch[i]);
            phase.theta[i] += half_h * mi * (p0 + p1);
            phase.p[i] = p1;
            let v = mi * p1;
            pv += p1 * v;
            vv += v * v;
        }
    } else {
        // Dense: θ ← θ½ (the gradient is known to be finite now), then
        // B(h/2): p ← V e^{−cΛh/2} Vᵀp;  O(h): p ← p − h∇Ũ(θ½) + √(2Dh) ζ;  B(h/2);
        // A(h/2): θ ← θ½ + (h/2) M⁻¹p.
        phase.theta.copy_from_slice(phase.scratch);
        fill_standard_normal(rng, phase.scratch);
        let ct = c * half_h;
        mass.friction_flow(phase.p, ct, inv_mass_p);
        for ((p, &g), &z) in phase
            .p
            .iter_mut()
            .zip(phase.grad.iter())
            .zip(phase.scratch.iter())
        {
            *p = *p - h * g + noise_sd * z;
        }
        mass.friction_flow(phase.p, ct, inv_mass_p);
        mass.kinetic_gradient(phase.p, inv_mass_p);
        for ((t, &p), &v) in phase
            .theta
            .iter_mut()
            .zip(phase.p.iter())
            .zip(inv_mass_p.iter())
        {
            *t += half_h * v;
            pv += p * v;
            vv += v * v;
        }
    }
    if let MassFriction::Thermostat(xi, rule) = friction {
        *xi = c + half_h * thermostat_rate(rule, pv, vv, trace, n);
        check_state(phase.theta, phase.p, Some(core::slice::from_ref(xi)))?;
    } else {
        check_state(phase.theta, phase.p, None)?;
    }
    Ok(pv)
}
