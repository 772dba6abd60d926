//! The generalized leapfrog of the stochastic Nosé–Poincaré dynamics (SG-NPHMC; Roychowdhury & Parthasarathy 2017, §3.4, eq. 7).
//!
//! One step from (θ, p, s, q) with G = ∇Ũ(θ), Ũ = Ũ(θ), for H_NP = s[Ũ + pᵀM⁻¹p/(2s²) +
//! q²/(2Q) + g ln s − H₀] and the noise estimates A (on q) and B (on p):
//!
//! ```text
//! 1. p½ = (p − ε/2 · s G) ⊘ (1 + ε B M⁻¹ / (2√s))             elementwise (diagonal M)
//! 2. q½ solves ε/(4Q) q½² + (1 + εAs/(2Q)) q½ − c = 0,
//!        c = q + ε/2 [ −Ũ + p½ᵀM⁻¹p½/(2s²) − g(1 + ln s) + H₀ ]   (the root → c as ε → 0)
//! 3. s′ = s (1 + ε q½/(2Q)) / (1 − ε q½/(2Q))
//! 4. θ′ = θ + ε/2 (1/s + 1/s′) M⁻¹ p½
//! 5. G′ = ∇Ũ(θ′), Ũ′ = Ũ(θ′)                                    (one gradient + value)
//! 6. p′ = p½ − ε/2 [ s′ G′ + (B/√s′) M⁻¹ p½ ]
//! 7. q′ = q½ + ε/2 [ −Ũ′ + p½ᵀM⁻¹p½/(2s′²) − g(1 + ln s′) − q½²/(2Q) − A s′ q½/Q + H₀ ]
//! ```
//!
//! Derived from H_NP by the generalized leapfrog of Bond, Leimkuhler & Laird (1999); it departs
//! from the printed eq. 7 in the θ and s updates and in the A term of step 7 (PDF-garbled or
//! inconsistent as printed). The derivation and each departure: `docs/sgnphmc-generalized-leapfrog.md`.

use super::state::checked_gradient;
use crate::error::StepError;
use crate::gradient::Energy;
use crate::kinetic::Mass;
use crate::real::Real;

/// The constants of one generalized-leapfrog step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NpConstants<T> {
    /// ε
    pub eps: T,
    /// Q
    pub q_mass: T,
    /// A (value-noise estimate, on q)
    pub a: T,
    /// B (gradient-noise estimate, on p)
    pub b: T,
    /// g (degrees of freedom, D)
    pub g: T,
    /// H₀
    pub h0: T,
}

/// The scalar part of the state: thermostat s, its momentum q, and Ũ at the current θ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NpScalars<T> {
    pub s: T,
    pub q: T,
    pub u: T,
}

/// (M⁻¹)ᵢ for a diagonal inverse mass (`None` is the identity).
///
/// i < d, the diagonal's length (the sampler checks the mass against θ), so `get` never misses
/// (an index would link a panic path the compiler cannot rule out); a miss would be NaN, which
/// the step's finiteness checks refuse, never a plausible number.
#[inline]
fn inv_m<T: Real>(inv_mass: Option<&[T]>, i: usize) -> T {
    match inv_mass {
        None => T::ONE,
        Some(m) => m.get(i).copied().unwrap_or(T::ZERO * T::INFINITY),
    }
}

/// pᵀM⁻¹p for a diagonal inverse mass.
#[inline]
pub(crate) fn kinetic2<T: Real>(p: &[T], inv_mass: Option<&[T]>) -> T {
    let mut k = T::ZERO;
    for (i, &x) in p.iter().enumerate() {
        k += x * x * inv_m(inv_mass, i);
    }
    k
}

/// pᵀM⁻¹p for any mass (the identity/diagonal sum of [`kinetic2`], or 2K for a dense one).
#[inline]
pub(crate) fn kinetic2_mass<T: Real>(p: &[T], mass: Mass<'_, T>) -> T {
    match mass.diagonal_option() {
        Ok(m) => kinetic2(p, m),
        Err(()) => T::TWO * mass.energy(p),
    }
}

/// H_NP = s [Ũ + pᵀM⁻¹p/(2s²) + q²/(2Q) + g ln s − H₀] (Roychowdhury & Parthasarathy 2017,
/// eq. 6 with L = −U, k_B T = 1).
#[inline]
pub(crate) fn nose_poincare_energy<T: Real>(
    p: &[T],
    mass: Mass<'_, T>,
    x: NpScalars<T>,
    c: &NpConstants<T>,
) -> T {
    let k = kinetic2_mass(p, mass);
    x.s * (x.u + k / (T::TWO * x.s * x.s) + x.q * x.q / (T::TWO * c.q_mass) + c.g * x.s.ln() - c.h0)
}

/// One generalized-leapfrog step (steps 1–7 of the module docs) from (θ, p, s, q) with
/// `grad` = ∇Ũ(θ) and `x.u` = Ũ(θ) on entry; on success they hold the values at θ′.
///
/// A dense mass (its M⁻¹p½ formed in `inv_mass_p`, length d; unused otherwise) is only taken
/// with B = 0, where the friction of steps 1 and 6 vanishes (the sampler's constructor refuses
/// a dense mass with B > 0: step 1 would be a d × d solve).
///
/// On error the state is partly updated; the caller restores its saved copy.
#[allow(clippy::too_many_arguments)]
pub(crate) fn generalized_leapfrog_step<T, M>(
    theta: &mut [T],
    p: &mut [T],
    grad: &mut [T],
    mass: Mass<'_, T>,
    inv_mass_p: &mut [T],
    x: &mut NpScalars<T>,
    c: &NpConstants<T>,
    model: &mut M,
) -> Result<(), StepError>
where
    T: Real,
    M: Energy<T> + ?Sized,
{
    let half = c.eps * T::HALF;
    let NpScalars { s, q, u } = *x;
    // A dense mass comes with B = 0 (checked by the constructor): its steps 1 and 6 have no
    // friction term.
    let diag = mass.diagonal_option();
    let inv_mass = diag.unwrap_or(None);
    // 1. Half kick of p, friction implicit (a diagonal solve).
    let kick = half * s;
    let fr = half * c.b / s.sqrt();
    for (i, (pi, &gi)) in p.iter_mut().zip(grad.iter()).enumerate() {
        *pi = (*pi - kick * gi) / (T::ONE + fr * inv_m(inv_mass, i));
    }
    // 2. Half step of q: the quadratic a q½² + b q½ − c = 0, root tending to c as ε → 0.
    let k_half = kinetic2_mass(p, mass);
    let one_plus_ln = |s: T| T::ONE + s.ln();
    let cc = q + half * (c.h0 - u + k_half / (T::TWO * s * s) - c.g * one_plus_ln(s));
    let qa = c.eps / (T::from_f64(4.0) * c.q_mass);
    let qb = T::ONE + half * c.a * s / c.q_mass;
    let disc = qb * qb + T::from_f64(4.0) * qa * cc;
    // `is_finite` also catches NaN.
    if !disc.is_finite() || disc < T::ZERO {
        return Err(StepError::ThermostatBreakdown);
    }
    let q_half = T::TWO * cc / (qb + disc.sqrt());
    // 3. Full step of s, solved exactly from s′ = s + ε/2 · q½/Q · (s + s′).
    let r = half * q_half / c.q_mass;
    if !(r < T::ONE && r > -T::ONE) {
        return Err(StepError::ThermostatBreakdown);
    }
    let s_new = s * (T::ONE + r) / (T::ONE - r);
    if !(s_new > T::ZERO && s_new.is_finite()) {
        return Err(StepError::ThermostatBreakdown);
    }
    // 4. Full drift of θ with p½.
    let drift = half * (T::ONE / s + T::ONE / s_new);
    if diag.is_ok() {
        for (i, (ti, &pi)) in theta.iter_mut().zip(p.iter()).enumerate() {
            *ti += drift * inv_m(inv_mass, i) * pi;
        }
    } else {
        mass.kinetic_gradient(p, inv_mass_p);
        for (ti, &vi) in theta.iter_mut().zip(inv_mass_p.iter()) {
            *ti += drift * vi;
        }
    }
    // 5. The step's one gradient (and value) evaluation.
    checked_gradient(model, theta, grad)?;
    let u_new = model.energy(theta);
    if !u_new.is_finite() {
        return Err(StepError::NonFiniteEnergy);
    }
    // 6. Half kick of p, friction explicit at (s′, p½).
    let kick = half * s_new;
    let fr = half * c.b / s_new.sqrt();
    for (i, (pi, &gi)) in p.iter_mut().zip(grad.iter()).enumerate() {
        *pi -= kick * gi + fr * inv_m(inv_mass, i) * *pi;
    }
    // 7. Half step of q, explicit at (θ′, p½, s′, q½).
    let q_new = q_half
        + half
            * (c.h0 - u_new + k_half / (T::TWO * s_new * s_new)
                - c.g * one_plus_ln(s_new)
                - q_half * q_half / (T::TWO * c.q_mass)
                - c.a * s_new * q_half / c.q_mass);
    *x = NpScalars {
        s: s_new,
        q: q_new,
        u: u_new,
    };
    Ok(())
}
