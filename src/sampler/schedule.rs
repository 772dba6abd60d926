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

    /// The polynomial decay a (b + t)^−γ with a > 0, b > 0 and 0 < γ ≤ 1.
    pub fn polynomial(a: T, b: T, gamma: T) -> Result<Self, ParamError> {
        let a = positive(a, Param::DecayScale)?;
        let b = positive(b, Param::DecayOffset)?;
        let gamma = finite(gamma, Param::DecayExponent)?;
        if !(gamma > T::ZERO && gamma <= T::ONE) {
            return Err(ParamError::OutOfRange(Param::DecayExponent));
        }
        Ok(StepSchedule::Polynomial { a, b, gamma })
    }

    /// The step at iteration `t` (always finite and > 0 for a validated schedule, though it may
    /// underflow towards 0 for astronomically large t).
    #[inline]
    pub fn at(&self, t: u64) -> T {
        match *self {
            StepSchedule::Constant(h) => h,
            StepSchedule::Polynomial { a, b, gamma } => a * (b + T::from_u64(t)).powf(-gamma),
        }
    }
}
