//! Hand-written scalar references of every sampler's update: the same equations as the crate, written as a firmware author would write them.
//!
//! One plain function per update, over caller slices (θ, p, ξ, the gradient, and for HMC the
//! copies that undo a rejection), with `for` loops over zipped slices, constants that depend
//! only on the settings computed once in each `new`, one standard normal per use from the
//! crate's scalar ziggurat ([`Ziggurat`]: `T::standard_normal`), and the crate's math shim for
//! the transcendental functions (`Real::exp`, `ln`, `sqrt`: libm, or micromath for `f32` with
//! that feature). No SIMD or lanes, no backups for a failed step, no finiteness checks: what
//! is left is the arithmetic of the update itself, so that the crate's step can be costed
//! against it (`src/curve/main.rs`).
//!
//! Every equation is the crate's, read from its source at commit aece37a (the files are named
//! at each function; B̂ = 0, identity mass, the derived SGNHT thermostat rule). Where the
//! crate fuses or reorders (it merges the splitting scheme's two half drifts of θ into one
//! update, sums in 8 or 16 lanes, and evaluates exp, tanh and the friction flows by its own
//! polynomials), these functions follow the equations in their natural order, so the states
//! agree to rounding, not bit for bit.
//!
//! Normals are drawn in coordinate order: coordinate i's z, then (SGMGT only) its further
//! normals in the order the update uses them, then coordinate i + 1. The only seam is
//! [`Noise`], through which the host check (`examples/firmware/reference-check`) replays the
//! crate's own noise stream to compare states step by step.
//!
//! Compiled both into the firmware (no_std) and on the host; it uses nothing but `sgmcmc`'s
//! public API and `rand_core`, and links no panic path (zipped loops, no indexing, no
//! division by a run-time integer).

use rand_core::Rng;
use sgmcmc::{Energy, Gradient, Real};

/// Where a reference step's draws come from: its standard normals one at a time, and the
/// generator for everything else (HMC's uniform, SGMGT's redraws of p and ξ).
pub trait Noise<T> {
    /// The generator.
    type Rng: Rng + ?Sized;
    /// The next standard normal of the step's noise.
    fn normal(&mut self) -> T;
    /// The generator, for the draws that are not the step's noise.
    fn rng(&mut self) -> &mut Self::Rng;
}

/// The firmware's draws: each normal from the crate's scalar ziggurat on the generator
/// (`sgmcmc::rng::standard_normal_f32` / `_f64` through `Real::standard_normal`).
pub struct Ziggurat<'r, R: ?Sized>(pub &'r mut R);

impl<T: Real, R: Rng + ?Sized> Noise<T> for Ziggurat<'_, R> {
    type Rng = R;
    #[inline(always)]
    fn normal(&mut self) -> T {
        T::standard_normal(&mut *self.0)
    }
    #[inline(always)]
    fn rng(&mut self) -> &mut R {
        self.0
    }
}

/// Σ xᵢ² over a slice, in order.
#[inline(always)]
fn sum_sq<T: Real>(x: &[T]) -> T {
    let mut s = T::ZERO;
    for &v in x {
        s += v * v;
    }
    s
}

/// SGLD (`src/sampler/sgld.rs`, the update of `Sgld::step`):
///
/// ```text
/// θ ← θ + √(2h) z − h ∇Ũ(θ)
/// ```
pub struct Sgld<T> {
    h: T,
    /// √(2h)
    sd: T,
}

impl<T: Real> Sgld<T> {
    /// Step size h.
    pub fn new(h: T) -> Self {
        Sgld {
            h,
            sd: (T::TWO * h).sqrt(),
        }
    }

    /// One step; `g` receives ∇Ũ(θ).
    pub fn step<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        theta: &mut [T],
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        model.gradient(theta, g);
        let (h, sd) = (self.h, self.sd);
        for (t, &gi) in theta.iter_mut().zip(g.iter()) {
            *t += sd * noise.normal() - h * gi;
        }
    }
}

/// SGHMC with the identity mass, friction A and B̂ = 0, so the injected diffusion is D = A
/// (`src/sampler/sghmc.rs`, `step_discounted`; the schemes of `src/integrator/euler.rs` and
/// `src/integrator/splitting.rs` with `UnitMass` and `ConstantFriction`).
///
/// Euler (`EulerCoordinate::kick` and `drift`):
///
/// ```text
/// p ← p − A p h − h ∇Ũ(θ) + √(2Dh) z = (1 − Ah) p − h ∇Ũ(θ) + √(2Dh) z
/// θ ← θ + h p
/// ```
///
/// Splitting, A–B–O–B–A (`aboba_coordinate`; the crate merges the two θ half drifts into
/// θ + (p₀ + p₁) h/2 and evaluates the gradient at θ½ in a scratch buffer; here θ moves in
/// place):
///
/// ```text
/// θ ← θ + p h/2;   g = ∇Ũ(θ)
/// p ← e^{−Ah/2} (e^{−Ah/2} p − h g + √(2Dh) z)
/// θ ← θ + p h/2
/// ```
pub struct Sghmc<T> {
    h: T,
    half_h: T,
    /// √(2Dh), D = A
    sd: T,
    /// Euler: 1 − Ah
    damp: T,
    /// Splitting: e^{−Ah/2} (A is constant: one exp for the chain)
    decay: T,
}

impl<T: Real> Sghmc<T> {
    /// Step size h, friction A.
    pub fn new(h: T, friction: T) -> Self {
        let half_h = h * T::HALF;
        Sghmc {
            h,
            half_h,
            sd: (T::TWO * friction * h).sqrt(),
            damp: T::ONE - friction * h,
            decay: (-friction * half_h).exp(),
        }
    }

    /// One Euler step; `g` receives ∇Ũ(θ).
    pub fn euler<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        theta: &mut [T],
        p: &mut [T],
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        model.gradient(theta, g);
        let (h, sd, damp) = (self.h, self.sd, self.damp);
        for ((t, pi), &gi) in theta.iter_mut().zip(p.iter_mut()).zip(g.iter()) {
            *pi = damp * *pi - h * gi + sd * noise.normal();
            *t += h * *pi;
        }
    }

    /// One splitting step; `g` receives ∇Ũ at the half-drifted θ.
    pub fn splitting<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        theta: &mut [T],
        p: &mut [T],
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        let (h, half_h, sd, decay) = (self.h, self.half_h, self.sd, self.decay);
        for (t, &pi) in theta.iter_mut().zip(p.iter()) {
            *t += half_h * pi;
        }
        model.gradient(theta, g);
        for ((t, pi), &gi) in theta.iter_mut().zip(p.iter_mut()).zip(g.iter()) {
            *pi = decay * (decay * *pi - h * gi + sd * noise.normal());
            *t += half_h * *pi;
        }
    }
}

/// SGNHT: one scalar thermostat ξ, diffusion D (`src/sampler/sgnht.rs`; `ScalarThermostat` of
/// `src/integrator/sde.rs` with the derived rule, rate = Σ (∂K/∂pᵢ)²/tr M⁻¹ − 1 = |p|²/n − 1
/// for the identity mass).
///
/// Euler (the friction is the old ξ; ξ moves after the pass, `drift_scalar`):
///
/// ```text
/// p ← (1 − ξh) p − h ∇Ũ(θ) + √(2Dh) z
/// θ ← θ + h p
/// ξ ← ξ + (|p|²/n − 1) h
/// ```
///
/// Splitting, A–B–O–B–A (ξ's half drifts from the incoming and the new p, the flow with the
/// half-drifted ξ, one exp per step):
///
/// ```text
/// θ ← θ + p h/2;   ξ ← ξ + (|p|²/n − 1) h/2;   g = ∇Ũ(θ)
/// p ← e^{−ξh/2} (e^{−ξh/2} p − h g + √(2Dh) z)
/// θ ← θ + p h/2;   ξ ← ξ + (|p|²/n − 1) h/2
/// ```
pub struct Sgnht<T> {
    h: T,
    half_h: T,
    /// √(2Dh)
    sd: T,
}

impl<T: Real> Sgnht<T> {
    /// Step size h, diffusion D.
    pub fn new(h: T, diffusion: T) -> Self {
        Sgnht {
            h,
            half_h: h * T::HALF,
            sd: (T::TWO * diffusion * h).sqrt(),
        }
    }

    /// One Euler step; `g` receives ∇Ũ(θ).
    pub fn euler<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        theta: &mut [T],
        p: &mut [T],
        xi: &mut T,
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        model.gradient(theta, g);
        let (h, sd) = (self.h, self.sd);
        let damp = T::ONE - *xi * h;
        let mut p2 = T::ZERO;
        for ((t, pi), &gi) in theta.iter_mut().zip(p.iter_mut()).zip(g.iter()) {
            *pi = damp * *pi - h * gi + sd * noise.normal();
            *t += h * *pi;
            p2 += *pi * *pi;
        }
        *xi += (p2 / T::from_usize(theta.len()) - T::ONE) * h;
    }

    /// One splitting step; `g` receives ∇Ũ at the half-drifted θ.
    pub fn splitting<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        theta: &mut [T],
        p: &mut [T],
        xi: &mut T,
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        let (h, half_h, sd) = (self.h, self.half_h, self.sd);
        let n = T::from_usize(theta.len());
        for (t, &pi) in theta.iter_mut().zip(p.iter()) {
            *t += half_h * pi;
        }
        *xi += (sum_sq(p) / n - T::ONE) * half_h;
        model.gradient(theta, g);
        let decay = (-*xi * half_h).exp();
        let mut p2 = T::ZERO;
        for ((t, pi), &gi) in theta.iter_mut().zip(p.iter_mut()).zip(g.iter()) {
            *pi = decay * (decay * *pi - h * gi + sd * noise.normal());
            *t += half_h * *pi;
            p2 += *pi * *pi;
        }
        *xi += (p2 / n - T::ONE) * half_h;
    }
}

/// mSGNHT: one thermostat ξᵢ per coordinate, diffusion D (`src/sampler/sgnht.rs`, `MSgnht`;
/// `NoseLaw` of `src/integrator/sde.rs`: κᵢ = ξᵢ, dξᵢ = (pᵢ² − 1) dt).
///
/// Euler (the friction is the old ξᵢ):
///
/// ```text
/// pᵢ ← (1 − ξᵢh) pᵢ − h ∇ᵢŨ(θ) + √(2Dh) zᵢ
/// θᵢ ← θᵢ + h pᵢ
/// ξᵢ ← ξᵢ + (pᵢ² − 1) h
/// ```
///
/// Splitting, A–B–O–B–A (one exp per coordinate, of the half-drifted ξᵢ):
///
/// ```text
/// θᵢ ← θᵢ + pᵢ h/2;   ξᵢ ← ξᵢ + (pᵢ² − 1) h/2;   g = ∇Ũ(θ)
/// pᵢ ← e^{−ξᵢh/2} (e^{−ξᵢh/2} pᵢ − h gᵢ + √(2Dh) zᵢ)
/// θᵢ ← θᵢ + pᵢ h/2;   ξᵢ ← ξᵢ + (pᵢ² − 1) h/2
/// ```
pub struct MSgnht<T> {
    h: T,
    half_h: T,
    /// √(2Dh)
    sd: T,
}

impl<T: Real> MSgnht<T> {
    /// Step size h, diffusion D.
    pub fn new(h: T, diffusion: T) -> Self {
        MSgnht {
            h,
            half_h: h * T::HALF,
            sd: (T::TWO * diffusion * h).sqrt(),
        }
    }

    /// One Euler step; `g` receives ∇Ũ(θ).
    pub fn euler<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        theta: &mut [T],
        p: &mut [T],
        xi: &mut [T],
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        model.gradient(theta, g);
        let (h, sd) = (self.h, self.sd);
        let state = theta.iter_mut().zip(p.iter_mut()).zip(xi.iter_mut());
        for (((t, pi), x), &gi) in state.zip(g.iter()) {
            *pi = (T::ONE - *x * h) * *pi - h * gi + sd * noise.normal();
            *t += h * *pi;
            *x += (*pi * *pi - T::ONE) * h;
        }
    }

    /// One splitting step; `g` receives ∇Ũ at the half-drifted θ.
    pub fn splitting<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        theta: &mut [T],
        p: &mut [T],
        xi: &mut [T],
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        let (h, half_h, sd) = (self.h, self.half_h, self.sd);
        for ((t, &pi), x) in theta.iter_mut().zip(p.iter()).zip(xi.iter_mut()) {
            *t += half_h * pi;
            *x += (pi * pi - T::ONE) * half_h;
        }
        model.gradient(theta, g);
        let state = theta.iter_mut().zip(p.iter_mut()).zip(xi.iter_mut());
        for (((t, pi), x), &gi) in state.zip(g.iter()) {
            let decay = (-*x * half_h).exp();
            *pi = decay * (decay * *pi - h * gi + sd * noise.normal());
            *t += half_h * *pi;
            *x += (*pi * *pi - T::ONE) * half_h;
        }
    }
}

/// The softened monomial-gamma kinetics of Zhang et al. 2017, eq. 12 with a = 1 (SGMGT's
/// default, `MonomialGamma::default_softened()`, c = 5; `src/kinetic/monomial_gamma.rs`),
/// per coordinate:
///
/// ```text
/// K(p) = |p| + (2/c) ln(1 + e^{−c|p|})
/// ∇K(p) = tanh(cp/2),   ∇²K(p) = (c/2) sech²(cp/2)
/// friction flow of dp/dt = −κ ∇K(p) over t:   sinh(c p(t)/2) = e^{−cκt/2} sinh(cp/2)
/// exp(−K):   p = (1/c) ln(G₁/G₂),   G₁, G₂ ~ Gamma(1/c)
/// ```
///
/// tanh and sech² come from one exp, y = e^{−c|p|}: tanh(c|p|/2) = (1 − y)/(1 + y) and
/// (c/2) sech² = 2c y/(1 + y)²; the flow is p(t) = sgn(p) (2/c) asinh(e^{−cκt/2} sinh(c|p|/2))
/// with sinh x = (eˣ − e⁻ˣ)/2 and asinh s = ln(s + √(s² + 1)) (the crate evaluates the same
/// flow in log space by its own polynomials, `eq12_a1_flow`).
#[derive(Clone, Copy)]
struct SoftenedMonomialGamma<T> {
    c: T,
    /// c/2
    half_c: T,
    /// 2c
    two_c: T,
    /// 2/c
    two_over_c: T,
    /// 1/c, the Gamma shape of a redraw
    inv_c: T,
}

impl<T: Real> SoftenedMonomialGamma<T> {
    fn new(c: T) -> Self {
        SoftenedMonomialGamma {
            c,
            half_c: c * T::HALF,
            two_c: T::TWO * c,
            two_over_c: T::TWO / c,
            inv_c: T::ONE / c,
        }
    }

    /// ∇K(p).
    #[inline(always)]
    fn gradient(&self, p: T) -> T {
        let y = (-self.c * p.abs()).exp();
        let t = (T::ONE - y) / (T::ONE + y);
        if p < T::ZERO { -t } else { t }
    }

    /// (∇K(p), ∇²K(p)).
    #[inline(always)]
    fn gradient_and_curvature(&self, p: T) -> (T, T) {
        let y = (-self.c * p.abs()).exp();
        let r = T::ONE / (T::ONE + y);
        let t = (T::ONE - y) * r;
        (if p < T::ZERO { -t } else { t }, self.two_c * y * r * r)
    }

    /// The friction flow over t, given κt.
    #[inline(always)]
    fn flow(&self, p: T, kt: T) -> T {
        let e = (self.half_c * p.abs()).exp();
        let s = T::HALF * (e - T::ONE / e) * (-self.half_c * kt).exp();
        let r = self.two_over_c * (s + (s * s + T::ONE).sqrt()).ln();
        if p < T::ZERO { -r } else { r }
    }

    /// One draw from exp(−K).
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> T {
        let g1 = sgmcmc::rng::gamma(&mut *rng, self.inv_c);
        let g2 = sgmcmc::rng::gamma(&mut *rng, self.inv_c);
        self.inv_c * (g1 / g2).ln()
    }
}

/// SGMGT-D with the softened monomial-gamma kinetics (a = 1, c), the thermostat potential
/// F(ξ) = ξ²/2 (`Gaussian::identity()`), σ_p, γ, the first-order Langevin terms σ_θ, σ_ξ, and
/// redraws of p from exp(−K) and of ξ from exp(−F) = N(0, 1) every T_p and T_ξ steps
/// (`src/sampler/sgmgt.rs`; `MonomialGammaLaw` and `ThetaTerm` of `src/integrator/sde.rs`:
/// κᵢ = σ_p + γξᵢ, the θ velocity factor 1 and noise share 1 at B̂ = 0).
///
/// Euler (`EulerCoordinate`; the Langevin term on ξ reads ∇F at the old ξ), normals z, ζ_θ,
/// ζ_ξ per coordinate:
///
/// ```text
/// pᵢ ← pᵢ − (σ_p + γξᵢ) ∇K(pᵢ) h − h gᵢ + √(2σ_p h) z
/// θᵢ ← θᵢ + ∇K(pᵢ) h − σ_θ h gᵢ + √(2σ_θ h) ζ_θ                    (new p)
/// ξᵢ ← ξᵢ + γ(∇K(pᵢ)² − ∇²K(pᵢ)) h − σ_ξ h ξᵢ + √(2σ_ξ h) ζ_ξ      (new p, old ξ)
/// ```
///
/// Splitting, A–O–B–O–A (`aoboa_coordinate`: A(h/2) O(h/2) Lξ(h/2) Lθ(h) B(h) Lξ(h/2) O(h/2)
/// A(h/2); the first A(h/2) moves θ to θ½, where the gradient is taken, and ξ; the crate
/// keeps θ½ in a scratch buffer and redoes ∇K(p₀) in the second pass, here both move in
/// place), normals z, ζ_ξ, ζ_θ, ζ′_ξ, z′ per coordinate:
///
/// ```text
/// θᵢ ← θᵢ + ∇K(pᵢ) h/2;   ξᵢ ← ξᵢ + γ(∇K(pᵢ)² − ∇²K(pᵢ)) h/2;   g = ∇Ũ(θ)
/// pᵢ ← pᵢ − gᵢ h/2 + √(σ_p h) z                          O(h/2)
/// ξᵢ ← e^{−σ_ξh/2} ξᵢ + √(σ_ξ h) ζ_ξ                      Lξ(h/2): flow, then noise
/// θᵢ ← θᵢ − σ_θ h gᵢ + √(2σ_θ h) ζ_θ                      Lθ(h)
/// pᵢ ← flow of −(σ_p + γξᵢ) ∇K over h                     B(h)
/// ξᵢ ← e^{−σ_ξh/2} (ξᵢ + √(σ_ξ h) ζ′_ξ)                   Lξ(h/2): noise, then flow
/// pᵢ ← pᵢ − gᵢ h/2 + √(σ_p h) z′                          O(h/2)
/// θᵢ ← θᵢ + ∇K(pᵢ) h/2;   ξᵢ ← ξᵢ + γ(∇K(pᵢ)² − ∇²K(pᵢ)) h/2       A(h/2)
/// ```
///
/// After either, the step count t advances, and p is redrawn when T_p divides t, then ξ when
/// T_ξ does (`Sgmgt::step_with_estimates`).
pub struct SgmgtD<T> {
    kinetic: SoftenedMonomialGamma<T>,
    h: T,
    half_h: T,
    sigma_p: T,
    gamma: T,
    /// γh, γh/2
    gamma_h: T,
    gamma_half_h: T,
    /// σ_θ h, σ_ξ h
    sigma_theta_h: T,
    sigma_xi_h: T,
    /// Euler: √(2σ_p h), √(2σ_θ h), √(2σ_ξ h)
    sd_p: T,
    sd_theta: T,
    sd_xi: T,
    /// Splitting: √(σ_p h) (each O(h/2)), √(σ_ξ h) (each Lξ(h/2)), e^{−σ_ξ h/2}
    half_sd_p: T,
    half_sd_xi: T,
    xi_decay: T,
    /// T_p, T_ξ (0: never)
    periods: (u32, u32),
}

impl<T: Real> SgmgtD<T> {
    /// The settings: step h, softening c, σ_p, γ, σ_θ, σ_ξ, and the redraw periods (T_p, T_ξ).
    pub fn new(
        h: T,
        c: T,
        (sigma_p, gamma): (T, T),
        (sigma_theta, sigma_xi): (T, T),
        periods: (u32, u32),
    ) -> Self {
        let half_h = h * T::HALF;
        SgmgtD {
            kinetic: SoftenedMonomialGamma::new(c),
            h,
            half_h,
            sigma_p,
            gamma,
            gamma_h: gamma * h,
            gamma_half_h: gamma * half_h,
            sigma_theta_h: sigma_theta * h,
            sigma_xi_h: sigma_xi * h,
            sd_p: (T::TWO * sigma_p * h).sqrt(),
            sd_theta: (T::TWO * sigma_theta * h).sqrt(),
            sd_xi: (T::TWO * sigma_xi * h).sqrt(),
            half_sd_p: (sigma_p * h).sqrt(),
            half_sd_xi: (sigma_xi * h).sqrt(),
            xi_decay: (-sigma_xi * half_h).exp(),
            periods,
        }
    }

    /// One Euler step; `g` receives ∇Ũ(θ).
    #[allow(clippy::too_many_arguments)]
    pub fn euler<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        steps: &mut u32,
        theta: &mut [T],
        p: &mut [T],
        xi: &mut [T],
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        model.gradient(theta, g);
        let k = self.kinetic;
        let (h, sigma_p, gamma) = (self.h, self.sigma_p, self.gamma);
        let state = theta.iter_mut().zip(p.iter_mut()).zip(xi.iter_mut());
        for (((t, pi), x), &gi) in state.zip(g.iter()) {
            let kappa = sigma_p + gamma * *x;
            *pi = *pi - kappa * k.gradient(*pi) * h - h * gi + self.sd_p * noise.normal();
            let (k1, c1) = k.gradient_and_curvature(*pi);
            *t += k1 * h - self.sigma_theta_h * gi + self.sd_theta * noise.normal();
            *x +=
                self.gamma_h * (k1 * k1 - c1) - self.sigma_xi_h * *x + self.sd_xi * noise.normal();
        }
        self.redraw(steps, p, xi, noise.rng());
    }

    /// One splitting step; `g` receives ∇Ũ at the half-drifted θ.
    #[allow(clippy::too_many_arguments)]
    pub fn splitting<M: Gradient<T> + ?Sized, N: Noise<T>>(
        &self,
        steps: &mut u32,
        theta: &mut [T],
        p: &mut [T],
        xi: &mut [T],
        g: &mut [T],
        model: &mut M,
        noise: &mut N,
    ) {
        let k = self.kinetic;
        let (h, half_h, gamma_half_h) = (self.h, self.half_h, self.gamma_half_h);
        let (half_sd_p, half_sd_xi, xi_decay) = (self.half_sd_p, self.half_sd_xi, self.xi_decay);
        // A(h/2) of θ and ξ with the incoming p.
        let state = theta.iter_mut().zip(p.iter()).zip(xi.iter_mut());
        for ((t, &pi), x) in state {
            let (k0, c0) = k.gradient_and_curvature(pi);
            *t += k0 * half_h;
            *x += gamma_half_h * (k0 * k0 - c0);
        }
        model.gradient(theta, g);
        let state = theta.iter_mut().zip(p.iter_mut()).zip(xi.iter_mut());
        for (((t, pi), x), &gi) in state.zip(g.iter()) {
            let kick = gi * half_h;
            let mut q = *pi - kick + half_sd_p * noise.normal();
            *x = xi_decay * *x + half_sd_xi * noise.normal();
            *t += self.sd_theta * noise.normal() - self.sigma_theta_h * gi;
            q = k.flow(q, (self.sigma_p + self.gamma * *x) * h);
            *x = xi_decay * (*x + half_sd_xi * noise.normal());
            q = q - kick + half_sd_p * noise.normal();
            let (k1, c1) = k.gradient_and_curvature(q);
            *pi = q;
            *t += k1 * half_h;
            *x += gamma_half_h * (k1 * k1 - c1);
        }
        self.redraw(steps, p, xi, noise.rng());
    }

    /// Counts the step; redraws p from exp(−K) every T_p steps, then ξ from N(0, 1) every T_ξ.
    #[inline(always)]
    fn redraw<R: Rng + ?Sized>(&self, steps: &mut u32, p: &mut [T], xi: &mut [T], rng: &mut R) {
        *steps += 1;
        let (tp, tx) = self.periods;
        if tp != 0 && steps.is_multiple_of(tp) {
            for pi in p.iter_mut() {
                *pi = self.kinetic.draw(rng);
            }
        }
        if tx != 0 && steps.is_multiple_of(tx) {
            for x in xi.iter_mut() {
                *x = T::standard_normal(&mut *rng);
            }
        }
    }
}

/// HMC with the identity mass and L leapfrog steps of size ε per proposal
/// (`src/sampler/hmc.rs`, `src/sampler/proposal.rs`, `src/integrator/leapfrog.rs`): U(θ) and
/// ∇U(θ) are cached between proposals (`start` fills the cache), so a proposal costs L
/// gradients and one energy:
///
/// ```text
/// p ~ N(0, I);   H₀ = U(θ) + |p|²/2;   keep θ and ∇U(θ)
/// p ← p − ε/2 ∇U(θ);   L times: θ ← θ + ε p, g = ∇U(θ), p ← p − ε g (ε/2 the last time)
/// H₁ = U(θ) + |p|²/2;   accept iff u < exp(min(0, H₀ − H₁)), u ~ U[0, 1)
/// rejected: θ and ∇U(θ) back as kept (U stays cached); accepted: U ← U(θ)
/// ```
pub struct Hmc<T> {
    eps: T,
    half_eps: T,
    steps: u32,
}

impl<T: Real> Hmc<T> {
    /// Leapfrog step ε, L leapfrog steps per proposal.
    pub fn new(eps: T, steps: u32) -> Self {
        Hmc {
            eps,
            half_eps: eps * T::HALF,
            steps,
        }
    }

    /// ∇U(θ) into `g` and U(θ): the cache of the first proposal.
    pub fn start<M: Energy<T> + ?Sized>(model: &mut M, theta: &[T], g: &mut [T]) -> T {
        model.gradient(theta, g);
        model.energy(theta)
    }

    /// One proposal; `u` and `g` hold U(θ) and ∇U(θ) on entry and on return; `saved_theta`,
    /// `saved_g` receive the copies that undo a rejection. Returns whether it was accepted.
    pub fn step<M: Energy<T> + ?Sized, N: Noise<T>>(
        &self,
        (theta, p, g): (&mut [T], &mut [T], &mut [T]),
        u: &mut T,
        (saved_theta, saved_g): (&mut [T], &mut [T]),
        model: &mut M,
        noise: &mut N,
    ) -> bool {
        for pi in p.iter_mut() {
            *pi = noise.normal();
        }
        let h0 = *u + T::HALF * sum_sq(p);
        for (s, &t) in saved_theta.iter_mut().zip(theta.iter()) {
            *s = t;
        }
        for (s, &gi) in saved_g.iter_mut().zip(g.iter()) {
            *s = gi;
        }
        let (eps, half_eps) = (self.eps, self.half_eps);
        for (pi, &gi) in p.iter_mut().zip(g.iter()) {
            *pi -= half_eps * gi;
        }
        for l in 0..self.steps {
            for (t, &pi) in theta.iter_mut().zip(p.iter()) {
                *t += eps * pi;
            }
            model.gradient(theta, g);
            let kick = if l + 1 == self.steps { half_eps } else { eps };
            for (pi, &gi) in p.iter_mut().zip(g.iter()) {
                *pi -= kick * gi;
            }
        }
        let u1 = model.energy(theta);
        let h1 = u1 + T::HALF * sum_sq(p);
        let accept = T::uniform(noise.rng()) < (h0 - h1).min(T::ZERO).exp();
        if accept {
            *u = u1;
        } else {
            for (t, &s) in theta.iter_mut().zip(saved_theta.iter()) {
                *t = s;
            }
            for (gi, &s) in g.iter_mut().zip(saved_g.iter()) {
                *gi = s;
            }
        }
        accept
    }
}
