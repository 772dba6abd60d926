//! The monomial-gamma kinetic energies of Zhang et al. 2017: stiff (eq. 3), softened (eq. 12) and power-softened.
//!
//! [`MonomialGamma`] and [`Softening`] are re-exported by [`crate::kinetic`] (this module is
//! private). Every formula, its derivation, and the behaviour at the non-smooth points:
//! `docs/monomial-gamma.md`.

use super::Kinetic;
use crate::arith::{Arith, Plain};
use crate::error::{LayoutError, Param, ParamError};
use crate::lanes::either;
use crate::real::Real;
use crate::validate::{finite, positive};
use crate::variates::{gamma, scaled_ln_gamma_difference};
use rand_core::Rng;

/// Which form of the monomial-gamma kinetic energy a [`MonomialGamma`] is (formulas in
/// `docs/monomial-gamma.md`).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Softening {
    /// K(p) = |p|^{1/a} (Zhang et al. 2017, eq. 3 with M = I), any a ≥ ½.
    Stiff,
    /// Zhang et al. 2017, eq. 12, for a ∈ {1, 2}: K_c(p) = |p| + (2/c) ln(1 + e^{−c|p|}) (a = 1) or
    /// √|p| + 4/(c(1 + e^{c√|p|})) (a = 2).
    Eq12,
    /// K_c(p) = (p² + c^{−2a})^{1/(2a)}, any a ≥ ½.
    Power,
}

/// A monomial-gamma kinetic energy with identity mass (Zhang et al. 2017), for SGMGT and
/// SGMGT-D: a separable [`Kinetic`] with exact sampling from exp(−K).
///
/// Three kinds, each acting per coordinate with exponent `a` and softening `c` > 0:
///
/// * [`MonomialGamma::stiff`]: K(p) = |p|^{1/a} (eq. 3 with M = I), any a ≥ ½; a = ½ is the
///   Gaussian K = p².
/// * [`MonomialGamma::softened`]: the softened K_c of eq. 12, a ∈ {1, 2}; a = 1, c = 5 is
///   SGMGT's default kinetics.
/// * [`MonomialGamma::softened_power`]: K_c(p) = (p² + c^{−2a})^{1/(2a)}, a smooth softening
///   for any a ≥ ½ (ours).
///
/// A small `Copy` value; the constructors precompute the constants and the sampler's
/// constructor checks `a` and `c` ([`MonomialGamma::validate`]), so no method can fail, panic
/// or allocate. The formulas, the values returned at the non-smooth
/// point p = 0, the friction flows (exact, or second order for eq. 12 at a = 2 and the power
/// softening) and the rejection sampler of the softened kinds are derived in
/// `docs/monomial-gamma.md`.
///
/// # Example
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::kinetic::{Kinetic, MonomialGamma, Softening};
///
/// let k = MonomialGamma::softened(1.0f64, 5.0);
/// assert_eq!(k.softening(), Softening::Eq12);
/// assert_eq!((k.a(), k.c()), (1.0, 5.0));
/// // ∇K_c = tanh(cp/2), ∇²K_c = (c/2) sech²(cp/2)
/// assert!((k.gradient(0, 0.3) - (0.75f64).tanh()).abs() < 1e-15);
/// assert!((k.curvature(0, 0.0) - 2.5).abs() < 1e-15);
///
/// let mut rng = Pcg64::new(0xcafef00dd15ea5e5, 0xa02bdbf7bb3c0a7ac28fa16a64abf96);
/// let (p, proposals) = k.sample_counted(0, &mut rng);
/// assert!(p.is_finite() && proposals >= 1);
///
/// // a = 3/2 is not one of eq. 12's cases, but the stiff and power forms take any a ≥ ½.
/// // (Checked when a sampler is built; `validate` checks alone.)
/// assert!(MonomialGamma::softened(1.5f64, 5.0).validate().is_err());
/// assert!(MonomialGamma::softened_power(1.5f64, 5.0).validate().is_ok());
/// assert!(MonomialGamma::<f64>::stiff(0.4).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MonomialGamma<T> {
    kind: Softening,
    /// a ≥ ½
    a: T,
    /// c > 0, or +∞ for the stiff kind (its c → ∞ limit).
    c: T,
    /// 1/a
    inv_a: T,
    /// a = ½ (the Gaussian special case of every kind).
    half: bool,
    /// a = 1 and a = 2, decided once (a float comparison per call is a library call on a core
    /// without an FPU).
    a_one: bool,
    a_two: bool,
    /// Stiff flow: (2a − 1)/a², the constant rate of r^{2 − 1/a}.
    flow_rate: T,
    /// Stiff flow: 2 − 1/a.
    flow_q_exp: T,
    /// Stiff flow: a/(2a − 1).
    flow_r_exp: T,
    /// Power softening: ε = c^{−a} (0 otherwise).
    eps: T,
    /// What [`MonomialGamma::validate`] reports: the constructor's check, run once there and
    /// reported when the sampler is built. (Checking again in `validate` would link the check —
    /// logarithms, a square root — into every firmware that uses the default kinetics.)
    invalid: Option<ParamError>,
}

impl<T: Real> MonomialGamma<T> {
    /// The cap on proposals per draw of the rejection sampler of eq. 12 with a = 2 and of the
    /// power softening (eq. 12 with a = 1 is sampled directly). Reaching it has probability
    /// below 10⁻⁷⁹ for c ≥ ½ (but 0.04 at c = ¼); then the last proposal, a draw from the stiff
    /// density, is returned with this count (`docs/monomial-gamma.md`).
    pub const MAX_PROPOSALS: u32 = 10_000;

    fn new(kind: Softening, a: T, c: T) -> Self {
        let inv_a = T::ONE / a;
        let two_a_m1 = T::TWO * a - T::ONE;
        MonomialGamma {
            kind,
            a,
            c,
            inv_a,
            half: a == T::HALF,
            a_one: a == T::ONE,
            a_two: a == T::TWO,
            flow_rate: two_a_m1 * inv_a * inv_a,
            flow_q_exp: T::TWO - inv_a,
            flow_r_exp: a / two_a_m1,
            eps: T::ZERO,
            invalid: None,
        }
    }

    /// Eq. 12 with a = 1, c = 5: the kinetics SGMGT uses unless told otherwise.
    pub(crate) fn default_softened() -> Self {
        Self::new(Softening::Eq12, T::ONE, T::from_f32(5.0))
    }

    /// Validates a: finite, ≥ ½, and small enough that the draws p = ±u^a, u ~ Gamma(a), stay
    /// finite in `T`: u^a ≤ `T::MAX` for u up to a + 13√a + 50, beyond which Gamma(a) has
    /// probability below 10⁻²⁵. That is a ≤ 18.4 in `f32` and a ≤ 123 in `f64` (without the cap
    /// a draw overflowed to ±∞ from about a ≈ 30 in `f32` and a ≈ 140 in `f64`).
    fn check_a(a: T) -> Result<T, ParamError> {
        let a = finite(a, Param::MonomialExponent)?;
        let quantile = a + T::from_f32(13.0) * a.sqrt() + T::from_f32(50.0);
        if a >= T::HALF && a * quantile.ln() <= T::MAX.ln() {
            Ok(a)
        } else {
            Err(ParamError::OutOfRange(Param::MonomialExponent))
        }
    }

    /// The stiff kinetics K(p) = |p|^{1/a} of Zhang et al. 2017, eq. 3 (M = I). At a = ½ this is
    /// K = p², i.e. p ~ N(0, ½). Draws are exact (p = ±u^a, u ~ Gamma(a)).
    ///
    /// Checked when a sampler is built, or by [`MonomialGamma::validate`]:
    /// [`Param::MonomialExponent`] when `a` is not finite, below ½, or so large that draws could
    /// overflow `T` (a > 18.4 in `f32`, a > 123 in `f64`; see `docs/monomial-gamma.md`).
    pub fn stiff(a: T) -> Self {
        let mut k = Self::new(Softening::Stiff, a, T::INFINITY);
        k.invalid = k.check().err();
        k
    }

    /// The softened kinetics K_c of Zhang et al. 2017, eq. 12, for a = 1 or a = 2 and a
    /// softening c > 0.
    ///
    /// At a = 1 momenta are drawn directly for every c (two Gamma(1/c) variates per draw); at
    /// a = 2 by rejection from the stiff density, on average Z/Z_c ≤ e^{2/c} proposals per
    /// draw (`docs/monomial-gamma.md`), so there c well below 1 is not recommended. At a = 2
    /// the curvature is unbounded near p = 0 and the friction flow is second order, not exact.
    ///
    /// Checked when a sampler is built, or by [`MonomialGamma::validate`]:
    /// [`Param::MonomialExponent`] when `a` is not finite, or not 1 or 2; [`Param::Softening`]
    /// when `c` is not finite, ≤ 0, so small that 1/c overflows, or, at a = 1, below the
    /// smallest c whose exact draws keep their resolution: c < 6.4·10⁻²³ in `f64`,
    /// c < 1.3·10⁻⁶ in `f32` (`docs/monomial-gamma.md`, *The smallest c*).
    pub fn softened(a: T, c: T) -> Self {
        let mut k = Self::new(Softening::Eq12, a, c);
        k.invalid = k.check().err();
        k
    }

    /// Whether eq. 12's a = 1 draws p = (ln G₁ − ln G₂)/c, Gᵢ ~ Gamma(1/c), resolve their own
    /// spread at this c. For small c, ln Gᵢ ≈ ln(1/c) is rounded with an absolute error of about
    /// ε·ln(1/c) while its spread is only √c, so p, whose sd is √(2/c), carries a rounding error
    /// of about ε·ln(1/c)/c: relative to the sd, ε·ln(1/c)/√(2c). Accepted while that is at
    /// most 10⁻³. Below, the draws degrade as the adversarial probe of issue 33 found (f64 at
    /// c = 10⁻²⁸: 37 % of draws exactly 0; f32 at c = 10⁻¹³: sd 2.95× too large), and a
    /// subnormal c made 1/c = ∞ and every redrawn momentum NaN.
    fn draws_resolved(c: T) -> bool {
        T::EPSILON * (T::ONE / c).ln() <= T::from_f32(1e-3) * (T::TWO * c).sqrt()
    }

    /// The power-softened kinetics K_c(p) = (p² + ε²)^{1/(2a)}, ε = c^{−a}, for any a ≥ ½ and
    /// c > 0: C^∞, with the stiff tails, K ≤ K_c ≤ K + 1/c (at a = 1 the relativistic kinetic
    /// energy). Its friction flow is second order, not exact (`docs/monomial-gamma.md`).
    ///
    /// Checked when a sampler is built, or by [`MonomialGamma::validate`]:
    /// [`Param::MonomialExponent`] when `a` is not finite, below ½, or above the cap of
    /// [`MonomialGamma::stiff`]; [`Param::Softening`] when `c` is not finite, ≤ 0, or so extreme
    /// that ε² = c^{−2a} underflows to 0 or overflows in `T`.
    pub fn softened_power(a: T, c: T) -> Self {
        let mut k = Self::new(Softening::Power, a, c);
        k.eps = c.powf(-a);
        k.invalid = k.check().err();
        k
    }

    /// What is wrong with a and c, if anything (each constructor above says what it refuses).
    /// The sampler's constructor reports it with its other settings, so that every setting is
    /// checked at one time; until then a bad value is only held.
    ///
    /// # Errors
    ///
    /// [`Param::MonomialExponent`] or [`Param::Softening`], as the constructor that made it says.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self.invalid {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The checks [`MonomialGamma::validate`] reports, run by the constructors.
    fn check(&self) -> Result<(), ParamError> {
        let a = Self::check_a(self.a)?;
        match self.kind {
            Softening::Stiff => Ok(()),
            Softening::Eq12 => {
                if a != T::ONE && a != T::TWO {
                    return Err(ParamError::OutOfRange(Param::MonomialExponent));
                }
                let c = positive(self.c, Param::Softening)?;
                if !(T::ONE / c).is_finite() || (a == T::ONE && !Self::draws_resolved(c)) {
                    return Err(ParamError::OutOfRange(Param::Softening));
                }
                Ok(())
            }
            Softening::Power => {
                positive(self.c, Param::Softening)?;
                let eps2 = self.eps * self.eps;
                if !(eps2 > T::ZERO && eps2.is_finite()) {
                    return Err(ParamError::OutOfRange(Param::Softening));
                }
                Ok(())
            }
        }
    }

    /// The monomial exponent a.
    pub fn a(&self) -> T {
        self.a
    }

    /// The softening parameter c (+∞ for the stiff kinetics, the c → ∞ limit of both
    /// softenings).
    pub fn c(&self) -> T {
        self.c
    }

    /// Which kind of kinetics this is.
    pub fn softening(&self) -> Softening {
        self.kind
    }

    /// K_c(p) − K(p) ≥ 0 for the softened kinds (0 for the stiff one), evaluated without
    /// cancellation; exp(−(K_c − K)) is the rejection sampler's acceptance probability.
    pub fn softening_excess(&self, p: T) -> T {
        let r = p.abs();
        match self.kind {
            Softening::Stiff => T::ZERO,
            Softening::Eq12 => {
                if self.a_one {
                    // (2/c) ln(1 + e^{−c|p|})
                    T::TWO / self.c * log1p((-self.c * r).exp())
                } else {
                    // 4/(c(1 + e^{cs})) = (4/c) y/(1 + y), y = e^{−cs}
                    let y = (-self.c * r.sqrt()).exp();
                    T::TWO * T::TWO / self.c * y / (T::ONE + y)
                }
            }
            Softening::Power => {
                if self.half {
                    // (p² + ε²) − p² = ε² exactly.
                    return self.eps * self.eps;
                }
                if self.a_one || self.a_two {
                    // h − |p| = ε²/(h + |p|) (from h² − p² = ε²), and at a = 2
                    // √h − √|p| = (h − |p|)/(√h + √|p|): no cancellation and no powf.
                    let h = self.power_h(r);
                    let d = self.eps * self.eps / (h + r);
                    return if self.a_one {
                        d
                    } else {
                        d / (h.sqrt() + r.sqrt())
                    };
                }
                if r >= self.eps {
                    // |p|^{1/a} ((1 + ρ²)^{1/(2a)} − 1), ρ = ε/|p| ≤ 1: no cancellation.
                    let rho = self.eps / r;
                    let rel = expm1(log1p(rho * rho) * T::HALF * self.inv_a);
                    r.powf(self.inv_a) * rel
                } else {
                    // |p| < ε: both terms are at most 2^{1/(2a)} ε^{1/a}; no large cancellation.
                    self.power_h(r).powf(self.inv_a) - r.powf(self.inv_a)
                }
            }
        }
    }

    /// hypot(p, ε) for the power softening, without overflow of p².
    #[inline]
    fn power_h(&self, p: T) -> T {
        let r = p.abs();
        let (big, small) = if r > self.eps {
            (r, self.eps)
        } else {
            (self.eps, r)
        };
        let q = small / big;
        big * (T::ONE + q * q).sqrt()
    }

    /// A draw from the stiff density exp(−|p|^{1/a}) (exact, one proposal).
    #[inline]
    fn stiff_draw<R: Rng + ?Sized>(&self, rng: &mut R) -> T {
        if self.half {
            // K = p²: p ~ N(0, ½).
            return T::standard_normal(rng) * T::HALF.sqrt();
        }
        let u = gamma(rng, self.a);
        // a = 1 and a = 2 (Zhang et al. 2017's choices) without powf: exact, faster, and
        // independent of the accuracy of micromath's powf.
        let r = if self.a_one {
            u
        } else if self.a_two {
            u * u
        } else {
            u.powf(self.a)
        };
        // `check_a` makes an overflow of u^a a 10⁻²⁵ event; should it happen, the draw is
        // clamped to ±MAX so that a redraw never leaves a non-finite momentum.
        let r = clamp_finite(r);
        if rng.next_u32() & 1 == 0 { r } else { -r }
    }

    /// The stiff ∇K and ∇²K (with the documented values at p = 0 and clamping to ±MAX).
    #[inline]
    fn stiff_derivatives(&self, p: T) -> (T, T) {
        if self.half {
            return (T::TWO * p, T::TWO);
        }
        if self.a_one {
            return (sgn(p), T::ZERO);
        }
        let r = p.abs();
        if r == T::ZERO {
            return (T::ZERO, T::ZERO);
        }
        if self.a_two {
            // ½ r^{−1/2} and −¼ r^{−3/2} through sqrt (correctly rounded under every feature).
            let s = r.sqrt();
            let g = clamp_finite(T::HALF / s);
            let h = clamp_finite(-T::HALF * T::HALF / (r * s));
            return (if p < T::ZERO { -g } else { g }, h);
        }
        let g = clamp_finite(self.inv_a * r.powf(self.inv_a - T::ONE));
        let h = clamp_finite(self.inv_a * (self.inv_a - T::ONE) * r.powf(self.inv_a - T::TWO));
        (if p < T::ZERO { -g } else { g }, h)
    }

    /// The exact stiff friction flow (`docs/monomial-gamma.md`).
    #[inline]
    fn stiff_flow(&self, p: T, kt: T) -> T {
        if self.half {
            return p * (-T::TWO * kt).exp();
        }
        let r = p.abs();
        if r == T::ZERO || kt == T::ZERO {
            return p;
        }
        let r_new = if self.a_one {
            (r - kt).max(T::ZERO)
        } else {
            let q = r.powf(self.flow_q_exp);
            let delta = kt * self.flow_rate;
            if q == T::ZERO {
                // r^{2 − 1/a} underflowed: the exact formula from q = 0.
                if delta >= T::ZERO {
                    T::ZERO
                } else {
                    (-delta).powf(self.flow_r_exp)
                }
            } else {
                let w = delta / q;
                if w >= T::ONE {
                    T::ZERO
                } else {
                    r * (self.flow_r_exp * log1p(-w)).exp()
                }
            }
        };
        if p < T::ZERO { -r_new } else { r_new }
    }

    /// eq. 12, a = 1: (∇K_c, ∇²K_c) = (tanh(cp/2), (c/2) sech²(cp/2)).
    #[inline]
    fn eq12_a1_derivatives<A: Arith>(&self, p: T) -> (T, T) {
        let x = T::HALF * self.c * p;
        let (t, sech2) = tanh_sech2::<T, A>(x.abs());
        (if p < T::ZERO { -t } else { t }, T::HALF * self.c * sech2)
    }

    /// eq. 12, a = 2: (∇K_c, ∇²K_c) in the tanh x / x forms of `docs/monomial-gamma.md`.
    #[inline]
    fn eq12_a2_derivatives<A: Arith>(&self, p: T) -> (T, T) {
        let s = p.abs().sqrt();
        let x = T::HALF * self.c * s;
        if x == T::ZERO {
            return (T::ZERO, T::ZERO);
        }
        let (t, sech2) = tanh_sech2::<T, A>(x);
        let t_over_x = t / x;
        let quarter = T::HALF * T::HALF;
        let g = quarter * self.c * t * t_over_x;
        let c3_32 = self.c * self.c * self.c * quarter * quarter * T::HALF;
        let h = clamp_finite(c3_32 * t_over_x * (T::TWO * sech2 - t_over_x) / x);
        (if p < T::ZERO { -g } else { g }, h)
    }

    /// eq. 12, a = 1: the exact flow sinh(cp(t)/2) = e^{−cκt/2} sinh(cp/2), in log space:
    /// x = c|p|/2, l = ln sinh x − cκt/2, x(t) = asinh eˡ. Branch-free on vector targets
    /// (both sides of every case computed and one selected, [`either`]; polynomial exp and ln),
    /// so that the splitting integrator's loop vectorises; p itself for x = 0, κt = 0 or a non-finite p. As accurate
    /// as the libm form it replaced (`tests/kinetics.rs`, `eq12_a1_flow_matches_libm_reference`:
    /// errors in units of the flow's conditioning; `docs/monomial-gamma.md`).
    ///
    /// On a scalar core, where a branch costs nothing and every transcendental call counts:
    /// x(t) = asinh(e^{−cκt/2} sinh x) by libm directly, and the log-space form only where
    /// sinh x overflows.
    #[inline(always)]
    fn eq12_a1_flow<A: Arith>(&self, p: T, kt: T) -> T {
        if crate::lanes::SCALAR_CORE {
            let x = T::HALF * self.c * p.abs();
            if x == T::ZERO || kt == T::ZERO || !p.is_finite() {
                return p;
            }
            // Direct while sinh x, the decay and their product are normal numbers (every
            // typical momentum and step); in log space where one would overflow or lose
            // precision below the normal range (x or cκt extreme).
            let (s, decay) = (x.sinh(), (-T::HALF * self.c * kt).exp_in::<A>());
            let v = s * decay;
            let normal = |y: T| y >= T::MIN_POSITIVE && y.is_finite();
            let x_new = if normal(s) && normal(decay) && normal(v) {
                v.asinh()
            } else {
                asinh_exp::<T, A>(ln_sinh::<T, A>(x) - T::HALF * self.c * kt)
            };
            let r_new = T::TWO * x_new / self.c;
            return if p < T::ZERO { -r_new } else { r_new };
        }
        let x = T::HALF * self.c * p.abs();
        let l = ln_sinh::<T, A>(x) - T::HALF * self.c * kt;
        let r_new = T::TWO * asinh_exp::<T, A>(l) / self.c;
        let r_new = if p < T::ZERO { -r_new } else { r_new };
        if x == T::ZERO || kt == T::ZERO || !p.is_finite() {
            p
        } else {
            r_new
        }
    }

    /// eq. 12, a = 2: ds/dt = −κ f(s), f(s) = (c²/16)(tanh x / x)², x = cs/2.
    #[inline]
    fn eq12_a2_rate<A: Arith>(&self, s: T) -> T {
        let x = T::HALF * self.c * s;
        let t_over_x = if x == T::ZERO {
            T::ONE
        } else {
            tanh_sech2::<T, A>(x).0 / x
        };
        let quarter = T::HALF * T::HALF;
        self.c * self.c * quarter * quarter * t_over_x * t_over_x
    }

    /// eq. 12, a = 2: one explicit-midpoint step in s = √|p|, clamped at 0, sign kept.
    #[inline]
    fn eq12_a2_flow<A: Arith>(&self, p: T, kt: T) -> T {
        let s = p.abs().sqrt();
        if s == T::ZERO || kt == T::ZERO {
            return p;
        }
        let s_half = (s - T::HALF * kt * self.eq12_a2_rate::<A>(s)).max(T::ZERO);
        let s_new = (s - kt * self.eq12_a2_rate::<A>(s_half)).max(T::ZERO);
        let r_new = s_new * s_new;
        if p < T::ZERO { -r_new } else { r_new }
    }

    /// Power softening: the rate ρ(p) = (1/a) h^{1/a − 2}, h = hypot(p, ε).
    #[inline]
    fn power_rate(&self, p: T) -> T {
        self.inv_a * self.h_pow_inv_a_minus_2(self.power_h(p))
    }

    /// h^{1/a} (without powf at a ∈ {½, 1, 2}, Zhang et al. 2017's cases).
    #[inline]
    fn h_pow_inv_a(&self, h: T) -> T {
        if self.half {
            h * h
        } else if self.a_one {
            h
        } else if self.a_two {
            h.sqrt()
        } else {
            h.powf(self.inv_a)
        }
    }

    /// h^{1/a − 2} (without powf at a ∈ {½, 1, 2}).
    #[inline]
    fn h_pow_inv_a_minus_2(&self, h: T) -> T {
        if self.half {
            T::ONE
        } else if self.a_one {
            T::ONE / h
        } else if self.a_two {
            T::ONE / (h * h.sqrt())
        } else {
            h.powf(self.inv_a - T::TWO)
        }
    }

    /// Power softening: (∇K_c, ∇²K_c) through h = hypot(p, ε).
    #[inline]
    fn power_derivatives(&self, p: T) -> (T, T) {
        let h = self.power_h(p);
        let hp = self.h_pow_inv_a_minus_2(h);
        let (u, e) = (p / h, self.eps / h);
        // ∇K = (1/a) p h^{1/a − 2} = (1/a) (p/h) h^{1/a − 1}; written with h^{1/a − 2}·h.
        let g = self.inv_a * u * (hp * h);
        let c2 = self.inv_a * hp * ((self.inv_a - T::ONE) * u * u + e * e);
        (g, c2)
    }
}

impl<T: Real> Kinetic<T> for MonomialGamma<T> {
    /// Always fits: the identity mass has no buffer.
    fn check_dim(&self, _n: usize) -> Result<(), LayoutError> {
        Ok(())
    }

    fn validate(&self) -> Result<(), ParamError> {
        MonomialGamma::validate(self)
    }

    #[inline]
    fn energy(&self, _i: usize, p: T) -> T {
        let r = p.abs();
        match self.kind {
            Softening::Stiff => {
                if self.half {
                    p * p
                } else if self.a_one {
                    r
                } else if self.a_two {
                    r.sqrt()
                } else {
                    r.powf(self.inv_a)
                }
            }
            Softening::Eq12 => {
                let stiff = if self.a_one { r } else { r.sqrt() };
                stiff + self.softening_excess(p)
            }
            Softening::Power => self.h_pow_inv_a(self.power_h(p)),
        }
    }

    /// ∇K; ∇K(0) = 0 for the stiff kinds (`docs/monomial-gamma.md`).
    #[inline]
    fn gradient(&self, i: usize, p: T) -> T {
        self.gradient_and_curvature(i, p).0
    }

    /// ∇²K; at p = 0 the stiff kinetics with a > ½ and eq. 12 with a = 2 return 0 (the limits
    /// are ±∞, or the jump of a = 1); values are clamped to ±`T::MAX`.
    #[inline]
    fn curvature(&self, i: usize, p: T) -> T {
        self.gradient_and_curvature(i, p).1
    }

    #[inline]
    fn gradient_and_curvature(&self, i: usize, p: T) -> (T, T) {
        self.gradient_and_curvature_in::<Plain>(i, p)
    }

    #[inline]
    fn gradient_in<A: Arith>(&self, i: usize, p: T) -> T {
        self.gradient_and_curvature_in::<A>(i, p).0
    }

    #[inline]
    fn gradient_and_curvature_in<A: Arith>(&self, _i: usize, p: T) -> (T, T) {
        match self.kind {
            Softening::Stiff => self.stiff_derivatives(p),
            Softening::Eq12 if self.a_one => self.eq12_a1_derivatives::<A>(p),
            Softening::Eq12 => self.eq12_a2_derivatives::<A>(p),
            Softening::Power => self.power_derivatives(p),
        }
    }

    /// Stiff: one exact draw (p = ±u^a, u ~ Gamma(a)). Eq. 12 with a = 1: one exact draw,
    /// p = (ln G₁ − ln G₂)/c with G₁, G₂ ~ Gamma(1/c), as exp(−K_c) ∝ sech(cp/2)^{2/c} is the
    /// law of a scaled logit of a Beta(1/c, 1/c) variable (`docs/monomial-gamma.md`); every c.
    /// The other softened kinds: rejection from the stiff proposals with acceptance
    /// exp(K − K_c), at most [`MonomialGamma::MAX_PROPOSALS`] proposals (then the last proposal
    /// is returned with that count).
    #[inline]
    fn sample_counted<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> (T, u32) {
        self.sample_tempered_counted(i, rng, T::ONE)
    }

    #[inline]
    fn tempered_sampling(&self) -> bool {
        true
    }

    /// [`sample_counted`](Kinetic::sample_counted) at temperature T: the stiff draw scaled by
    /// T^a (exp(−|p|^{1/a}/T) is the law of T^a times a draw at T = 1); eq. 12 with a = 1 from
    /// Gamma(1/(cT)) variables, p = (ln G₁ − ln G₂)/c = T·ν(ln G₁ − ln G₂) with ν = 1/(cT); the
    /// other softened kinds by rejection from the stiff proposal at T with acceptance
    /// exp((K − K_c)/T) (`docs/temperature.md`). T = 1 is the untempered draw bit for bit (no
    /// factor is applied); T = 0 returns the mode, 0.
    #[inline]
    fn sample_tempered_counted<R: Rng + ?Sized>(
        &self,
        _i: usize,
        rng: &mut R,
        temperature: T,
    ) -> (T, u32) {
        let untempered = temperature == T::ONE;
        if temperature == T::ZERO {
            return (T::ZERO, 1);
        }
        // T^a, the stiff draw's scale at T (not formed at T = 1: a powf need not return 1).
        let scale = if untempered {
            T::ONE
        } else if self.half {
            temperature.sqrt()
        } else if self.a_one {
            temperature
        } else if self.a_two {
            temperature * temperature
        } else {
            temperature.powf(self.a)
        };
        let stiff = |rng: &mut R| {
            let p = self.stiff_draw(rng);
            if untempered {
                p
            } else {
                clamp_finite(scale * p)
            }
        };
        // At a = ½ the power softening is K + ε²: the same density, every proposal accepted.
        if self.kind == Softening::Stiff || (self.kind == Softening::Power && self.half) {
            return (stiff(rng), 1);
        }
        if self.kind == Softening::Eq12 && self.a_one {
            // p = (ln G₁ − ln G₂)/c = T·ν(ln G₁ − ln G₂) with ν = 1/(cT), formed by
            // `scaled_ln_gamma_difference` so that it is finite for every finite c > 0.
            if untempered {
                let nu = T::ONE / self.c;
                return (scaled_ln_gamma_difference(rng, nu), 1);
            }
            let nu = T::ONE / (self.c * temperature);
            return (
                clamp_finite(temperature * scaled_ln_gamma_difference(rng, nu)),
                1,
            );
        }
        let mut p = T::ZERO;
        for k in 1..=Self::MAX_PROPOSALS {
            p = stiff(rng);
            let excess = self.softening_excess(p);
            let accept = if untempered {
                (-excess).exp()
            } else {
                (-(excess / temperature)).exp()
            };
            if T::uniform(rng) < accept {
                return (p, k);
            }
        }
        (p, Self::MAX_PROPOSALS)
    }

    /// Exact for the stiff kinds and eq. 12 with a = 1; second order (explicit midpoint in
    /// √|p|, resp. exponential midpoint) for eq. 12 with a = 2 and the power softening
    /// (`docs/monomial-gamma.md`).
    /// Eq. 12 with a = 1 (SGMGT-D's default) runs as [`Eq12A1`], whose derivatives and flow
    /// carry no branch on the kind, on targets whose loops vectorise; every other kind, and
    /// every kind elsewhere, runs as itself (the same values, one copy of the code).
    #[inline(always)]
    fn specialise<V: super::specialise::Visitor<T>>(&self, visitor: V) -> V::Output {
        if crate::lanes::VECTOR_TARGET && self.kind == Softening::Eq12 && self.a_one {
            visitor.run(Eq12A1(*self))
        } else {
            visitor.run(*self)
        }
    }

    #[inline]
    fn friction_flow(&self, i: usize, p: T, kt: T) -> T {
        self.friction_flow_in::<Plain>(i, p, kt)
    }

    #[inline]
    fn friction_flow_in<A: Arith>(&self, _i: usize, p: T, kt: T) -> T {
        // ±∞ and NaN pass through unchanged (the clamps below use NaN-ignoring `max`, which
        // would otherwise turn a NaN momentum into 0 and hide a diverged state).
        if !p.is_finite() {
            return p;
        }
        match self.kind {
            Softening::Stiff => self.stiff_flow(p, kt),
            Softening::Eq12 if self.a_one => self.eq12_a1_flow::<A>(p, kt),
            Softening::Eq12 => self.eq12_a2_flow::<A>(p, kt),
            Softening::Power => {
                // p = 0 is a fixed point; skipping it also avoids 0·∞ when e^{κt ρ} overflows.
                if p == T::ZERO || kt == T::ZERO {
                    return p;
                }
                let p_half = p * (-T::HALF * kt * self.power_rate(p)).exp();
                p * (-kt * self.power_rate(p_half)).exp()
            }
        }
    }
}

/// sgn(x) with sgn(0) = 0 (and NaN for NaN, so a broken state is not hidden).
#[inline]
fn sgn<T: Real>(x: T) -> T {
    if x > T::ZERO {
        T::ONE
    } else if x < T::ZERO {
        -T::ONE
    } else {
        // ±0, or NaN passed through.
        x
    }
}

/// x clamped to \[−MAX, MAX\] (±∞ become ±MAX; NaN stays NaN).
#[inline]
fn clamp_finite<T: Real>(x: T) -> T {
    if x > T::MAX {
        T::MAX
    } else if x < -T::MAX {
        -T::MAX
    } else {
        x
    }
}

/// ln(1 + x) for x > −1, accurate also for tiny |x| (Goldberg's trick: with u = 1 + x rounded,
/// ln(u)·x/(u − 1) cancels the rounding of u; Higham, *Accuracy and Stability*, §1.14.1).
#[inline]
fn log1p<T: Real>(x: T) -> T {
    let u = T::ONE + x;
    let d = u - T::ONE;
    if d == T::ZERO { x } else { u.ln() * (x / d) }
}

/// eˣ − 1, accurate also for tiny |x| (Kahan's trick: with u = eˣ rounded,
/// (u − 1)·x/ln(u); Higham §1.14.1).
#[inline]
fn expm1<T: Real>(x: T) -> T {
    let u = x.exp_poly();
    if u == T::ONE {
        return x;
    }
    let d = u - T::ONE;
    if d == -T::ONE {
        return d;
    }
    let l = u.ln();
    // u = ∞ (x large): d·x/ln u would be ∞·x/∞ = NaN.
    if !l.is_finite() { d } else { d * (x / l) }
}

/// ln sinh x for x > 0, branch-free on vector targets ([`either`]). Below 1: ln x + ln(sinh x / x), with sinh x / x =
/// 1 + x²S(x²) by its Taylor series to x¹⁸/19! (below half an `f64` ulp for x < 1) and a
/// subnormal x scaled by 2⁶⁴ before its logarithm; from 1 on: x − ln 2 + ln(1 − e^{−2x}),
/// where e^{−2x} ≤ e^{−2} leaves no cancellation. (Unspecified for x = 0, ∞ or NaN; the caller
/// selects p itself there.)
#[inline(always)]
fn ln_sinh<T: Real, A: Arith>(x: T) -> T {
    // 1/(2k + 1)! for k = 9 … 1, Horner from the top: written out, each constant a literal
    // (a loop over an f64 table is not unrolled at the firmware's opt-level "s", and its
    // f64 → f32 conversions would link software double routines into the f32 builds).
    let z = x * x;
    let mut s = T::from_f64(1.0 / 121_645_100_408_832_000.0);
    s = s * z + T::from_f64(1.0 / 355_687_428_096_000.0);
    s = s * z + T::from_f64(1.0 / 1_307_674_368_000.0);
    s = s * z + T::from_f64(1.0 / 6_227_020_800.0);
    s = s * z + T::from_f64(1.0 / 39_916_800.0);
    s = s * z + T::from_f64(1.0 / 362_880.0);
    s = s * z + T::from_f64(1.0 / 5_040.0);
    s = s * z + T::from_f64(1.0 / 120.0);
    s = s * z + T::from_f64(1.0 / 6.0);
    let below = || {
        let sinhc = T::ONE + z * s;
        let scale = T::from_f64(18_446_744_073_709_551_616.0); // 2⁶⁴
        let ln_scale = T::from_f64(44.361_419_555_836_5); // 64 ln 2
        // (Selects between cheap values: `either` for the arms that compute.)
        let tiny = x < T::MIN_POSITIVE;
        let scaled = if tiny { x * scale } else { x };
        let ln_x = scaled.ln_in::<A>() - if tiny { ln_scale } else { T::ZERO };
        ln_x + sinhc.ln_in::<A>()
    };
    let above = || {
        x - T::from_f64(core::f64::consts::LN_2)
            + (T::ONE - (-T::TWO * x).exp_in::<A>()).ln_in::<A>()
    };
    either(x < T::ONE, below, above)
}

/// asinh eˡ for any finite l, branch-free on vector targets: l + ln(1 + √(1 + e^{−2l})) for l > 0 (no overflow
/// of eˡ), ln(1 + w) with w = y + y²/(1 + √(1 + y²)), y = eˡ, at or below 0 (the rounding of
/// 1 + w cancelled as in [`log1p`]; w = y once y is below half an ulp of 1).
#[inline(always)]
fn asinh_exp<T: Real, A: Arith>(l: T) -> T {
    let above = || {
        let e = (-T::TWO * l).exp_in::<A>();
        l + (T::ONE + (T::ONE + e).sqrt()).ln_in::<A>()
    };
    let below = || {
        let y = l.exp_in::<A>();
        let w = y + y * y / (T::ONE + (T::ONE + y * y).sqrt());
        let u = T::ONE + w;
        let d = u - T::ONE;
        either(d == T::ZERO, || w, || u.ln_in::<A>() * (w / d))
    };
    either(l > T::ZERO, above, below)
}

/// A [`MonomialGamma`] of eq. 12 with a = 1, known to be so at compile time
/// ([`Kinetic::specialise`]): the same values as the general type, method by method, without
/// its `match` on the kind in every call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Eq12A1<T>(MonomialGamma<T>);

impl<T: Real> Kinetic<T> for Eq12A1<T> {
    /// Branch-free derivatives and flow (polynomial tanh, exp and ln), on a target that
    /// vectorises them.
    const UNROLL: bool = crate::lanes::VECTOR_TARGET;
    fn check_dim(&self, n: usize) -> Result<(), LayoutError> {
        self.0.check_dim(n)
    }
    #[inline]
    fn energy(&self, i: usize, p: T) -> T {
        self.0.energy(i, p)
    }
    #[inline(always)]
    fn gradient(&self, i: usize, p: T) -> T {
        self.gradient_in::<Plain>(i, p)
    }
    #[inline(always)]
    fn curvature(&self, _i: usize, p: T) -> T {
        self.0.eq12_a1_derivatives::<Plain>(p).1
    }
    #[inline(always)]
    fn gradient_and_curvature(&self, i: usize, p: T) -> (T, T) {
        self.gradient_and_curvature_in::<Plain>(i, p)
    }
    #[inline(always)]
    fn gradient_in<A: Arith>(&self, _i: usize, p: T) -> T {
        self.0.eq12_a1_derivatives::<A>(p).0
    }
    #[inline(always)]
    fn gradient_and_curvature_in<A: Arith>(&self, _i: usize, p: T) -> (T, T) {
        self.0.eq12_a1_derivatives::<A>(p)
    }
    #[inline]
    fn sample_counted<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> (T, u32) {
        self.0.sample_counted(i, rng)
    }
    #[inline]
    fn tempered_sampling(&self) -> bool {
        true
    }
    #[inline]
    fn sample_tempered_counted<R: Rng + ?Sized>(
        &self,
        i: usize,
        rng: &mut R,
        temperature: T,
    ) -> (T, u32) {
        self.0.sample_tempered_counted(i, rng, temperature)
    }
    /// As `MonomialGamma::friction_flow` (±∞ and NaN pass through unchanged: selected inside
    /// the branch-free flow).
    #[inline(always)]
    fn friction_flow(&self, i: usize, p: T, kt: T) -> T {
        self.friction_flow_in::<Plain>(i, p, kt)
    }
    #[inline(always)]
    fn friction_flow_in<A: Arith>(&self, _i: usize, p: T, kt: T) -> T {
        self.0.eq12_a1_flow::<A>(p, kt)
    }
}

/// (tanh x, sech² x) for x ≥ 0 without overflow or cancellation: tanh by the crate's
/// branch-free polynomial form ([`Real::tanh_poly`]: a small-argument polynomial below 0.625,
/// (1 − y)/(1 + y) above), and sech² x = 4y/(1 + y)² with y = e^{−2x} (y → 0 for a large x,
/// never ∞). Both go through the inline polynomial exp rather than libm calls (which dominated
/// an SGMGT-D step's profile: `docs/performance-notes.md`), and have no branch.
///
/// On a scalar core both come from one libm eᵘ − 1 at u = −2x instead (`m`): tanh x = −m/(2 + m)
/// and sech² x = 4(1 + m)/(2 + m)², accurate near 0 as m is, and one transcendental call per
/// coordinate where the vector form's tanh and sech² take two (without an FPU, a library call
/// each; the same form on every scalar core, so that they all draw one chain).
#[inline(always)]
fn tanh_sech2<T: Real, A: Arith>(x: T) -> (T, T) {
    if crate::lanes::SCALAR_CORE {
        let m = (-T::TWO * x).expm1();
        let inv = T::ONE / (T::TWO + m);
        return (-m * inv, T::TWO * T::TWO * (T::ONE + m) * inv * inv);
    }
    let y = (-T::TWO * x).exp_in::<A>();
    let one_y = T::ONE + y;
    (x.tanh_in::<A>(), T::TWO * T::TWO * y / (one_y * one_y))
}
