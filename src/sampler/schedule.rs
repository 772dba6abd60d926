//! Step-size schedules: constant, or the polynomial decay h_t = a (b + t)^−γ of SGLD.

use crate::error::{Param, ParamError};
use crate::real::Real;
use crate::validate::{finite, positive};

/// A step size per iteration t = 0, 1, 2, …
///
/// Welling & Teh's SGLD (2011; Chen 2016, Alg. 1) uses a decreasing sequence h_t with Σ h_t = ∞ and
/// Σ h_t² < ∞, in practice h_t = a (b + t)^−γ with γ ∈ (0.5, 1]; γ ∈ (0, 0.5] is accepted too
/// (a slower decay that keeps more mixing at the cost of a bias that vanishes more slowly).
///
/// ```
/// use sgmcmc::sampler::StepSchedule;
/// let s = StepSchedule::polynomial(0.1, 1.0, 0.55).unwrap();
/// assert_eq!(s.at(0), 0.1);
/// assert!(s.at(100) < s.at(10));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum StepSchedule<T> {
    /// h_t = h.
    Constant(T),
    /// h_t = a (b + t)^−γ.
    Polynomial {
        /// Scale a > 0.
        a: T,
        /// Offset b > 0.
        b: T,
        /// Exponent γ ∈ (0, 1].
        gamma: T,
    },
}

impl<T: Real> StepSchedule<T> {
    /// A constant step h > 0.
    pub fn constant(h: T) -> Result<Self, ParamError> {
        Ok(StepSchedule::Constant(positive(h, Param::StepSize)?))
    }

    /// The polynomial decay a (b + t)^−γ with a > 0, b > 0 and 0 < γ ≤ 1, whose first step
    /// h₀ = a b^−γ (the largest) must be finite and positive in `T`: a large a over a tiny b
    /// overflows it to ∞, a tiny a over a large b underflows it to 0 (a frozen chain), and both
    /// are [`Param::DecayScale`].
    pub fn polynomial(a: T, b: T, gamma: T) -> Result<Self, ParamError> {
        let a = positive(a, Param::DecayScale)?;
        let b = positive(b, Param::DecayOffset)?;
        let gamma = finite(gamma, Param::DecayExponent)?;
        if !(gamma > T::ZERO && gamma <= T::ONE) {
            return Err(ParamError::OutOfRange(Param::DecayExponent));
        }
        let schedule = StepSchedule::Polynomial { a, b, gamma };
        let first = schedule.at(0);
        if !(first.is_finite() && first > T::ZERO) {
            return Err(ParamError::OutOfRange(Param::DecayScale));
        }
        Ok(schedule)
    }

    /// The step at iteration `t`: finite and > 0 for a validated schedule (h_t ≤ h₀), though a
    /// tiny h₀ may underflow to 0 after very many steps (h₀ = 10⁻³⁰ with γ = 1 in `f32` reaches
    /// the smallest normal number near t = 10⁸ and 0 near t = 10¹⁵), and from there on SGLD's
    /// steps no longer move θ.
    #[inline]
    pub fn at(&self, t: u64) -> T {
        match *self {
            StepSchedule::Constant(h) => h,
            StepSchedule::Polynomial { a, b, gamma } => a * (b + T::from_u64(t)).powf(-gamma),
        }
    }
}
