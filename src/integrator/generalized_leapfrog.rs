//! The generalized leapfrog of the stochastic Nosé–Poincaré dynamics (SG-NPHMC, 004 §3.4).
//!
//! # The Hamiltonian
//!
//! With U(θ) = −L(θ) the potential (L the log-likelihood of 004), a diagonal mass M, the
//! thermostat s > 0 with momentum q and mass Q, g = D degrees of freedom (D = dim θ) and
//! k_B T = 1, the Nosé–Poincaré energy (004 eq. 6; Bond, Leimkuhler & Laird 1999) is
//!
//! ```text
//! H_NP(θ, p, s, q) = s · [ U(θ) + pᵀM⁻¹p / (2s²) + q²/(2Q) + g ln s − H₀ ]
//! ```
//!
//! with H₀ chosen so that H_NP = 0 on the trajectory. Its canonical equations, with the
//! stochastic-gradient corrections of the proof of Proposition 2 (004 App. 6.2.2), are
//!
//! ```text
//! dθ/dt = M⁻¹p / s
//! dp/dt = −s ∇Ũ(θ) − (B/√s) M⁻¹p                       (= s∇L̃ − √s B M⁻¹ p/s)
//! ds/dt = s q / Q
//! dq/dt = −Ũ(θ) + pᵀM⁻¹p/(2s²) − g(1 + ln s) − q²/(2Q) − A s q / Q + H₀
//! ```
//!
//! where ∇Ũ, Ũ are the minibatch estimates and A, B the user's noise estimates for the value and
//! the gradient. Without the A and B terms these are exactly −∂H_NP/∂(θ, s) and ∂H_NP/∂(p, q).
//!
//! # The generalized leapfrog
//!
//! The generalized leapfrog (Störmer–Verlet for a non-separable H(x, y) with positions
//! x = (θ, s) and momenta y = (p, q)) is
//!
//! ```text
//! y½   = y  − ε/2 ∂ₓH(x, y½)                    (implicit in y½)
//! x′   = x  + ε/2 [∂ᵧH(x, y½) + ∂ᵧH(x′, y½)]     (implicit in x′)
//! y′   = y½ − ε/2 ∂ₓH(x′, y½)                    (explicit)
//! ```
//!
//! Bond, Leimkuhler & Laird (1999, §3) apply it to H_NP; with the A and B terms evaluated in
//! the same places (the friction on p at p½ in the first half kick, a linear solve), one step
//! from (θ, p, s, q) with G = ∇Ũ(θ), Ũ = Ũ(θ) is:
//!
//! ```text
//! 1. p½ = (p − ε/2 · s G) ⊘ (1 + ε B M⁻¹ / (2√s))             elementwise (diagonal M)
//! 2. K½ = p½ᵀ M⁻¹ p½
//!    ε/(4Q) · q½² + (1 + ε A s/(2Q)) · q½ − c = 0,
//!        c = q + ε/2 [ −Ũ + K½/(2s²) − g(1 + ln s) + H₀ ]
//!    q½ = 2c / (b + √(b² + 4ac))   with a = ε/(4Q), b = 1 + εAs/(2Q)
//! 3. s′ = s (1 + ε q½/(2Q)) / (1 − ε q½/(2Q))
//! 4. θ′ = θ + ε/2 (1/s + 1/s′) M⁻¹ p½
//! 5. G′ = ∇Ũ(θ′), Ũ′ = Ũ(θ′)                                    (one gradient + value)
//! 6. p′ = p½ − ε/2 [ s′ G′ + (B/√s′) M⁻¹ p½ ]
//! 7. q′ = q½ + ε/2 [ −Ũ′ + K½/(2s′²) − g(1 + ln s′) − q½²/(2Q) − A s′ q½/Q + H₀ ]
//! ```
//!
//! Step 2 is the quadratic of 004 eq. 7 (second line). Of its two roots
//! (−b ± √(b² + 4ac))/(2a) we take the + root, written as 2c/(b + √(b² + 4ac)) to avoid
//! cancellation: as ε → 0 (a → 0, b → 1) it tends to c → q, the explicit update, while the
//! other root tends to −b/a → −∞. A negative discriminant, or |ε q½/(2Q)| ≥ 1 in step 3 (which
//! would make s′ ≤ 0 or infinite), is [`StepError::ThermostatBreakdown`]. Step 3 is the
//! implicit s-equation s′ = s + ε/2 (s q½/Q + s′ q½/Q) solved exactly; step 4 is then explicit.
//!
//! # Departures from the printed eq. 7 of 004
//!
//! * θ update: the print has θ′ = θ + ε M⁻¹p (1/s + 1/s′); the generalized leapfrog has the
//!   factor ε/2 and the half-step momentum p½ (step 4).
//! * s update: the print has s′ = s + ε q½/Q (s + s^{t+ε/2}), mixing a full step with a
//!   "half-step s" that the scheme never defines; the generalized leapfrog gives
//!   s′ = s + ε/2 · q½/Q · (s + s′), solved for s′ in step 3.
//! * the A term of the final q half-step: the print has −A s′ q½/(2Q) inside the ε/2 bracket,
//!   half of what the SDE (−A s q/Q) and the print's own first half-step (the coefficient
//!   εAs/(2Q) of q½ in the quadratic) give; we use −A s′ q½/Q (step 7).
//! * the friction of the final p half-step is evaluated at (s′, p½), as printed; the first
//!   half-step's friction at (s, p½) is implicit, as printed (step 1, a diagonal solve).
//!
//! Everything else (the p half-steps, the quadratic, the final q half-step's other terms) is
//! as printed, with L̃ = −Ũ.

use super::pieces::checked_gradient;
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
#[inline]
fn inv_m<T: Real>(inv_mass: Option<&[T]>, i: usize) -> T {
    match inv_mass {
        None => T::ONE,
        Some(m) => m[i],
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

/// H_NP = s [Ũ + pᵀM⁻¹p/(2s²) + q²/(2Q) + g ln s − H₀] (004 eq. 6 with L = −U, k_B T = 1).
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
