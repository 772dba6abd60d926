//! Validation of hyperparameters: finite, positive, non-negative, each failure naming its [`Param`].

use crate::error::{Param, ParamError};
use crate::real::Real;

/// `x` if finite.
#[inline]
pub(crate) fn finite<T: Real>(x: T, param: Param) -> Result<T, ParamError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ParamError::NonFinite(param))
    }
}

/// `x` if finite and > 0.
#[inline]
pub(crate) fn positive<T: Real>(x: T, param: Param) -> Result<T, ParamError> {
    if finite(x, param)? > T::ZERO {
        Ok(x)
    } else {
        Err(ParamError::OutOfRange(param))
    }
}

/// `x` if finite and ≥ 0.
#[inline]
pub(crate) fn non_negative<T: Real>(x: T, param: Param) -> Result<T, ParamError> {
    if finite(x, param)? >= T::ZERO {
        Ok(x)
    } else {
        Err(ParamError::OutOfRange(param))
    }
}
