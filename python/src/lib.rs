//! The extension module `sgmcmc._sgmcmc`: chains of the Rust samplers on Rust threads with the GIL released, the built-in models, and ask/tell stepping.
//!
//! The Python package (`python/python/sgmcmc`) wraps it; its README is the user's guide.

mod built;
mod errors;
mod models;
mod rng;
mod runner;
mod settings;
mod source;
mod stepper;

use models::{Builtin, BuiltinChain, DataModel, GaussianTarget, Likelihood};
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rng::CountedPcg;
use std::sync::{Arc, Mutex};

/// The generator of chain `chain`'s minibatches: `Pcg64::new(seed, 2⁶⁴ + chain)` (its
/// sampler's noise is `Pcg64::new(seed, chain)`).
pub fn minibatch_rng(seed: u64, chain: u64) -> CountedPcg {
    CountedPcg::new(u128::from(seed), (1u128 << 64) + u128::from(chain))
}

/// The generator of chain `chain`'s noise: `Pcg64::new(seed, chain)`, as a Rust caller writes it.
pub fn chain_rng(seed: u64, chain: u64) -> CountedPcg {
    CountedPcg::new(u128::from(seed), u128::from(chain))
}

fn to_vec1(a: &PyReadonlyArray1<'_, f64>) -> Vec<f64> {
    a.as_array().iter().copied().collect()
}

fn check_finite(name: &str, values: &[f64]) -> PyResult<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(errors::layout_error(
            name,
            format!("{name} holds a non-finite value at index {i}"),
        )),
        None => Ok(()),
    }
}

fn positive(name: &str, v: f64) -> PyResult<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(errors::setting_error(
            name,
            format!("{name} must be finite and > 0, not {v}"),
        ))
    }
}

/// A built-in model: its Rust data and an evaluator for calls from Python.
#[pyclass(module = "sgmcmc._sgmcmc", frozen)]
pub struct BuiltinModel {
    pub model: Arc<Builtin>,
    evaluator: Mutex<BuiltinChain>,
}

impl BuiltinModel {
    fn wrap(model: Builtin, seed: u64) -> Self {
        let model = Arc::new(model);
        BuiltinModel {
            evaluator: Mutex::new(BuiltinChain::new(
                Arc::clone(&model),
                minibatch_rng(seed, 0),
            )),
            model,
        }
    }
}

fn data_model(
    likelihood: Likelihood,
    x: PyReadonlyArray2<'_, f64>,
    y: Option<PyReadonlyArray1<'_, f64>>,
    prior_variance: f64,
    batch_size: Option<usize>,
    replace: bool,
) -> PyResult<DataModel> {
    let shape = x.shape();
    let (examples, dim) = (shape[0], shape[1]);
    if examples == 0 || dim == 0 {
        return Err(errors::layout_error(
            "X",
            format!("X must have at least one row and one column, not shape {shape:?}"),
        ));
    }
    let xs: Vec<f64> = x.as_array().iter().copied().collect();
    check_finite("X", &xs)?;
    let ys = match y {
        Some(y) => {
            let ys = to_vec1(&y);
            if ys.len() != examples {
                return Err(errors::layout_error(
                    "y",
                    format!("y has {} entries for {examples} rows of X", ys.len()),
                ));
            }
            check_finite("y", &ys)?;
            ys
        }
        None => Vec::new(),
    };
    if likelihood == Likelihood::Logistic
        && let Some(i) = ys.iter().position(|&v| v != 0.0 && v != 1.0)
    {
        return Err(errors::layout_error(
            "y",
            format!(
                "logistic regression needs labels 0 or 1; y[{i}] = {}",
                ys[i]
            ),
        ));
    }
    positive("prior_variance", prior_variance)?;
    if batch_size == Some(0) {
        return Err(errors::setting_error(
            "batch_size",
            "batch_size must be ≥ 1 (or None for the full data)".into(),
        ));
    }
    if !replace && batch_size.is_some_and(|b| b > examples) {
        return Err(errors::setting_error(
            "batch_size",
            format!("batch_size {batch_size:?} exceeds the {examples} rows (without replacement)"),
        ));
    }
    Ok(DataModel {
        likelihood,
        x: xs,
        y: ys,
        examples,
        dim,
        prior_variance,
        batch: batch_size,
        replace,
    })
}

#[pymethods]
impl BuiltinModel {
    /// The number of parameters d.
    #[getter]
    fn dim(&self) -> usize {
        self.model.dim()
    }

    /// ∇Ũ(θ): on a fresh minibatch of the model's own generator for a data model.
    fn gradient<'py>(
        &self,
        py: Python<'py>,
        theta: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let theta = self.check_theta(&theta)?;
        let mut g = vec![0.0; theta.len()];
        self.evaluator
            .lock()
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("model lock poisoned"))?
            .gradient(&theta, &mut g);
        Ok(PyArray1::from_vec(py, g))
    }

    /// U(θ) (the full data's for a full-batch model, the last minibatch's otherwise).
    fn energy(&self, theta: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
        let theta = self.check_theta(&theta)?;
        Ok(self
            .evaluator
            .lock()
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("model lock poisoned"))?
            .energy(&theta))
    }

    fn __repr__(&self) -> String {
        match &*self.model {
            Builtin::Gaussian(g) => format!("Gaussian(dim={})", g.mean.len()),
            Builtin::Data(m) => format!(
                "{}(rows={}, dim={}, batch_size={:?}, replace={})",
                match m.likelihood {
                    Likelihood::Logistic => "LogisticRegression",
                    Likelihood::Linear { .. } => "LinearRegression",
                    Likelihood::GaussianMean { .. } => "GaussianMean",
                },
                m.examples,
                m.dim,
                m.batch,
                m.replace
            ),
        }
    }
}

impl BuiltinModel {
    fn check_theta(&self, theta: &PyReadonlyArray1<'_, f64>) -> PyResult<Vec<f64>> {
        let t = to_vec1(theta);
        if t.len() != self.model.dim() {
            return Err(errors::layout_error(
                "θ",
                format!("θ has length {}, the model {}", t.len(), self.model.dim()),
            ));
        }
        Ok(t)
    }
}

/// N(mean, cov): U(θ) = ½(θ − μ)ᵀΣ⁻¹(θ − μ). `cov` is a d × d symmetric positive-definite
/// matrix or a length-d vector of variances.
#[pyfunction]
fn gaussian(mean: PyReadonlyArray1<'_, f64>, cov: &Bound<'_, PyAny>) -> PyResult<BuiltinModel> {
    let mean = to_vec1(&mean);
    let d = mean.len();
    if d == 0 {
        return Err(errors::layout_error("mean", "mean is empty".into()));
    }
    check_finite("mean", &mean)?;
    let target = if let Ok(v) = cov.extract::<PyReadonlyArray1<'_, f64>>() {
        let var = to_vec1(&v);
        if var.len() != d {
            return Err(errors::layout_error(
                "cov",
                format!("cov has {} variances for a mean of length {d}", var.len()),
            ));
        }
        if let Some(i) = var.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(errors::layout_error(
                "cov",
                format!("variance cov[{i}] = {} is not finite and > 0", var[i]),
            ));
        }
        let diagonal: Vec<f64> = var.iter().map(|v| 1.0 / v).collect();
        let mut precision = vec![0.0; d * d];
        for i in 0..d {
            precision[i * d + i] = diagonal[i];
        }
        GaussianTarget {
            mean,
            precision,
            diagonal: Some(diagonal),
        }
    } else {
        let m: PyReadonlyArray2<'_, f64> = cov.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "cov must be a float array of shape (d,) or (d, d)",
            )
        })?;
        if m.shape() != [d, d] {
            return Err(errors::layout_error(
                "cov",
                format!("cov has shape {:?}, expected ({d}, {d})", m.shape()),
            ));
        }
        let mut a: Vec<f64> = m.as_array().iter().copied().collect();
        check_finite("cov", &a)?;
        for i in 0..d {
            for j in 0..i {
                if (a[i * d + j] - a[j * d + i]).abs()
                    > 1e-12 * (a[i * d + i] * a[j * d + j]).sqrt()
                {
                    return Err(errors::layout_error("cov", "cov is not symmetric".into()));
                }
            }
        }
        let precision = invert_spd(&mut a, d)
            .ok_or_else(|| errors::layout_error("cov", "cov is not positive definite".into()))?;
        GaussianTarget {
            mean,
            precision,
            diagonal: None,
        }
    };
    Ok(BuiltinModel::wrap(Builtin::Gaussian(target), 0))
}

/// The inverse of a symmetric positive-definite d × d matrix (Cholesky), or `None`.
fn invert_spd(a: &mut [f64], d: usize) -> Option<Vec<f64>> {
    // L Lᵀ = A in the lower triangle.
    for j in 0..d {
        let mut s = a[j * d + j];
        for k in 0..j {
            s -= a[j * d + k] * a[j * d + k];
        }
        if !(s > 0.0 && s.is_finite()) {
            return None;
        }
        let l = s.sqrt();
        a[j * d + j] = l;
        for i in j + 1..d {
            let mut s = a[i * d + j];
            for k in 0..j {
                s -= a[i * d + k] * a[j * d + k];
            }
            a[i * d + j] = s / l;
        }
    }
    // Columns of A⁻¹ = L⁻ᵀ L⁻¹ eᵢ.
    let mut inv = vec![0.0; d * d];
    let mut col = vec![0.0; d];
    for c in 0..d {
        col.fill(0.0);
        col[c] = 1.0;
        for i in 0..d {
            let mut s = col[i];
            for k in 0..i {
                s -= a[i * d + k] * col[k];
            }
            col[i] = s / a[i * d + i];
        }
        for i in (0..d).rev() {
            let mut s = col[i];
            for k in i + 1..d {
                s -= a[k * d + i] * col[k];
            }
            col[i] = s / a[i * d + i];
        }
        for i in 0..d {
            inv[i * d + c] = col[i];
        }
    }
    Some(inv)
}

/// Bayesian logistic regression, labels 0/1, prior N(0, prior_variance·I).
#[pyfunction]
#[pyo3(signature = (x, y, *, prior_variance=10.0, batch_size=None, replace=false, seed=0))]
fn logistic_regression(
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    prior_variance: f64,
    batch_size: Option<usize>,
    replace: bool,
    seed: u64,
) -> PyResult<BuiltinModel> {
    let m = data_model(
        Likelihood::Logistic,
        x,
        Some(y),
        prior_variance,
        batch_size,
        replace,
    )?;
    Ok(BuiltinModel::wrap(Builtin::Data(m), seed))
}

/// Bayesian linear regression y ~ N(Xθ, noise_variance), prior N(0, prior_variance·I).
#[pyfunction]
#[pyo3(signature = (x, y, *, noise_variance=1.0, prior_variance=10.0, batch_size=None, replace=false, seed=0))]
#[allow(clippy::too_many_arguments)]
fn linear_regression(
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    noise_variance: f64,
    prior_variance: f64,
    batch_size: Option<usize>,
    replace: bool,
    seed: u64,
) -> PyResult<BuiltinModel> {
    let noise_variance = positive("noise_variance", noise_variance)?;
    let m = data_model(
        Likelihood::Linear { noise_variance },
        x,
        Some(y),
        prior_variance,
        batch_size,
        replace,
    )?;
    Ok(BuiltinModel::wrap(Builtin::Data(m), seed))
}

/// The mean θ of points xᵢ ~ N(θ, noise_variance·I), prior N(0, prior_variance·I).
#[pyfunction]
#[pyo3(signature = (x, *, noise_variance=1.0, prior_variance=10.0, batch_size=None, replace=false, seed=0))]
fn gaussian_mean(
    x: PyReadonlyArray2<'_, f64>,
    noise_variance: f64,
    prior_variance: f64,
    batch_size: Option<usize>,
    replace: bool,
    seed: u64,
) -> PyResult<BuiltinModel> {
    let noise_variance = positive("noise_variance", noise_variance)?;
    let m = data_model(
        Likelihood::GaussianMean { noise_variance },
        x,
        None,
        prior_variance,
        batch_size,
        replace,
    )?;
    Ok(BuiltinModel::wrap(Builtin::Data(m), seed))
}

#[pymodule]
fn _sgmcmc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SettingError", py.get_type::<errors::SettingError>())?;
    m.add("LayoutError", py.get_type::<errors::LayoutError>())?;
    m.add("StepError", py.get_type::<errors::StepError>())?;
    m.add_class::<BuiltinModel>()?;
    m.add_class::<stepper::Stepper>()?;
    m.add_class::<runner::ChainStates>()?;
    m.add_function(wrap_pyfunction!(gaussian, m)?)?;
    m.add_function(wrap_pyfunction!(logistic_regression, m)?)?;
    m.add_function(wrap_pyfunction!(linear_regression, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_mean, m)?)?;
    m.add_function(wrap_pyfunction!(settings::defaults, m)?)?;
    m.add_function(wrap_pyfunction!(runner::run, m)?)?;
    m.add_function(wrap_pyfunction!(sgmcmc_dispatch_level, m)?)?;
    m.add_function(wrap_pyfunction!(set_max_isa, m)?)?;
    Ok(())
}

/// The instruction-set level the kernel dispatches to on this CPU.
#[pyfunction]
fn sgmcmc_dispatch_level() -> String {
    format!("{:?}", sgmcmc::dispatch::active())
}

/// Caps the instruction-set level of every later step and built-in gradient in this process
/// ("Baseline", "Avx2" or "Avx512"; a cap above this CPU's level changes nothing): for checking
/// that results do not depend on the CPU, and for timing one level against another.
#[pyfunction]
fn set_max_isa(level: &str) -> PyResult<()> {
    use sgmcmc::dispatch::Isa;
    let isa = match level {
        "Baseline" => Isa::Baseline,
        "Avx2" => Isa::Avx2,
        "Avx512" => Isa::Avx512,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown level {level:?}: \"Baseline\", \"Avx2\" or \"Avx512\""
            )));
        }
    };
    sgmcmc::dispatch::set_max(isa);
    Ok(())
}
