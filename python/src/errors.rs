//! The package's exceptions: a bad setting names its parameter, a bad buffer names the buffer, a failed step names the chain and the step.

use pyo3::prelude::*;

pyo3::create_exception!(
    _sgmcmc,
    SettingError,
    pyo3::exceptions::PyValueError,
    "A sampler setting out of its range; `param` names it (as the Rust API's `Param::name`)."
);
pyo3::create_exception!(
    _sgmcmc,
    LayoutError,
    pyo3::exceptions::PyValueError,
    "An array of the wrong shape or with an invalid value; `buffer` names it."
);
pyo3::create_exception!(
    _sgmcmc,
    StepError,
    pyo3::exceptions::PyRuntimeError,
    "A step was abandoned (a non-finite gradient, a refused step size, ...): the chain's state \
     is as it was before that step; `chain` and `step` say where, `partial` holds the draws of \
     every chain up to that point when it came from `sample`."
);

/// A [`SettingError`] naming `param`.
pub fn setting_error(param: &str, message: String) -> PyErr {
    let err = SettingError::new_err(message);
    Python::attach(|py| {
        let _ = err.value(py).setattr("param", param);
    });
    err
}

/// A [`LayoutError`] naming `buffer`.
pub fn layout_error(buffer: &str, message: String) -> PyErr {
    let err = LayoutError::new_err(message);
    Python::attach(|py| {
        let _ = err.value(py).setattr("buffer", buffer);
    });
    err
}

/// The Python exception of a rejected setting.
pub fn param_error(e: sgmcmc::ParamError) -> PyErr {
    let param = match e {
        sgmcmc::ParamError::NonFinite(p) | sgmcmc::ParamError::OutOfRange(p) => p.name(),
        _ => "?",
    };
    setting_error(param, e.to_string())
}

/// The Python exception of a constructor's error.
pub fn build_error(e: sgmcmc::Error) -> PyErr {
    match e {
        sgmcmc::Error::Param(p) => param_error(p),
        sgmcmc::Error::Layout(l) => {
            let buffer = match l {
                sgmcmc::LayoutError::LengthMismatch { buffer, .. }
                | sgmcmc::LayoutError::InvalidValue { buffer, .. } => buffer.name(),
                _ => "θ",
            };
            layout_error(buffer, l.to_string())
        }
        _ => pyo3::exceptions::PyValueError::new_err(e.to_string()),
    }
}
