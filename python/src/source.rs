//! Where a chain's gradients come from: a built-in model, a C function pointer (numba `cfunc`, ctypes), or a Python callable.
//!
//! A source is one chain's [`sgmcmc::Gradient`] and [`sgmcmc::Energy`]. Built-in models and C
//! function pointers run without the GIL; a Python callable takes it for every call. A source
//! that fails (a Python exception, a result of the wrong length) writes NaN into the gradient, so
//! the sampler abandons the step with the state unchanged (the crate's state contract), and
//! keeps the error for the runner to raise.

use crate::models::{Builtin, BuiltinChain, Minibatches};
use numpy::PyArray1;
use pyo3::prelude::*;
use std::ffi::c_void;
use std::sync::Arc;

/// The C ABI's gradient: `void grad(const double* theta, double* grad, size_t n, void* ctx)`
/// (`sgmcmc_gradient_f64` in `ffi/include/sgmcmc.h`).
pub type CGradient = unsafe extern "C" fn(*const f64, *mut f64, usize, *mut c_void);
/// The potential: `double energy(const double* theta, size_t n, void* ctx)`.
pub type CEnergy = unsafe extern "C" fn(*const f64, usize, *mut c_void) -> f64;

/// The gradient on rows drawn by sgmcmc: `void grad(const double* theta, double* grad, size_t n,
/// const int64_t* rows, size_t batch, void* ctx)`.
pub type CRowsGradient =
    unsafe extern "C" fn(*const f64, *mut f64, usize, *const i64, usize, *mut c_void);
/// The potential on the rows of the last gradient: `double energy(const double* theta, size_t
/// n, const int64_t* rows, size_t batch, void* ctx)`.
pub type CRowsEnergy =
    unsafe extern "C" fn(*const f64, usize, *const i64, usize, *mut c_void) -> f64;

/// Minibatches that sgmcmc draws for a C function: b of N examples, with or without
/// replacement.
#[derive(Clone, Copy, Debug)]
pub struct RowSpec {
    pub examples: usize,
    pub batch: Option<usize>,
    pub replace: bool,
}

/// A gradient (and optionally a potential) given as C function-pointer addresses, with the
/// rows signature when `rows` is set.
#[derive(Clone, Copy, Debug)]
pub struct CFunctions {
    pub gradient: usize,
    pub energy: Option<usize>,
    /// The diagonal of ∇²Ũ (pSGLD's Γ correction), with the gradient's signature.
    pub hessian_diagonal: Option<usize>,
    pub context: usize,
    pub rows: Option<RowSpec>,
}

/// One chain's C functions, with its minibatches when sgmcmc draws them.
#[derive(Clone, Debug)]
pub struct CChain {
    pub functions: CFunctions,
    pub batches: Option<Minibatches>,
    /// The last minibatch as the C functions read it (int64).
    rows: Vec<i64>,
}

impl CChain {
    /// The chain's C functions on `batches` (a resumed sequence's last minibatch, if it has one,
    /// is copied for the functions at once, so a resumed step may start on it).
    pub fn new(functions: CFunctions, batches: Option<Minibatches>) -> Self {
        let mut chain = CChain {
            functions,
            batches,
            rows: Vec::new(),
        };
        chain.sync_rows();
        chain
    }

    /// Copies the minibatch's rows into the int64 buffer the C functions read.
    fn sync_rows(&mut self) {
        if let Some(b) = &self.batches {
            self.rows.clear();
            self.rows.extend(b.rows.iter().map(|&i| i as i64));
        }
    }

    /// Draws a fresh minibatch for a gradient (when sgmcmc draws the rows).
    fn fresh_rows(&mut self) {
        if let Some(b) = self.batches.as_mut() {
            b.draw();
            self.sync_rows();
        }
    }

    /// The last gradient's minibatch, for the energy and the Hessian diagonal at its θ (a
    /// fresh one if there was none).
    fn last_rows(&mut self) {
        if let Some(b) = self.batches.as_mut()
            && !b.drawn
        {
            b.draw();
            self.sync_rows();
        }
    }

    /// Calls the function at `address` (the gradient or the Hessian diagonal) with the
    /// gradient's signature, the rows one when sgmcmc draws the rows: n values at `out`.
    fn call_vector(&self, address: usize, theta: &[f64], out: &mut [f64]) {
        let context = self.functions.context as *mut c_void;
        if self.batches.is_some() {
            // SAFETY: as below, with the rows signature `sgmcmc.CFunction` documents for a
            // model given `examples`: it also reads `batch` int64 row indices at `rows`, each
            // in 0..examples (drawn by `fresh_rows` or `last_rows`).
            unsafe {
                let f: CRowsGradient = std::mem::transmute::<usize, CRowsGradient>(address);
                f(
                    theta.as_ptr(),
                    out.as_mut_ptr(),
                    theta.len(),
                    self.rows.as_ptr(),
                    self.rows.len(),
                    context,
                );
            }
        } else {
            // SAFETY: the caller of `sgmcmc.CFunction` promised that `gradient` (and
            // `hessian_diagonal`) is the address of a function with the C ABI's gradient
            // signature that reads n doubles at `theta`, writes n at its second argument, may
            // be called from any thread, and that `context` stays valid for the run
            // (documented there). The slices are both of length n.
            unsafe {
                let f: CGradient = std::mem::transmute::<usize, CGradient>(address);
                f(theta.as_ptr(), out.as_mut_ptr(), theta.len(), context);
            }
        }
    }
}

/// A gradient (and optionally a potential) given as Python callables.
#[derive(Debug)]
pub struct PyFunctions {
    pub gradient: Py<PyAny>,
    pub energy: Option<Py<PyAny>>,
    /// `hessian_diagonal(theta) -> array` (pSGLD's Γ correction).
    pub hessian_diagonal: Option<Py<PyAny>>,
}

/// Where the gradients come from (shared by every chain).
#[derive(Debug)]
pub enum Spec {
    Builtin(Arc<Builtin>),
    C(CFunctions),
    Python(PyFunctions),
}

impl Spec {
    /// Whether the potential U is available (HMC and SG-NPHMC need it).
    pub fn has_energy(&self) -> bool {
        match self {
            Spec::Builtin(_) => true,
            Spec::C(c) => c.energy.is_some(),
            Spec::Python(p) => p.energy.is_some(),
        }
    }

    /// Whether the diagonal of ∇²Ũ is available (pSGLD's Γ correction needs it).
    pub fn has_hessian_diagonal(&self) -> bool {
        match self {
            Spec::Builtin(_) => true,
            Spec::C(c) => c.hessian_diagonal.is_some(),
            Spec::Python(p) => p.hessian_diagonal.is_some(),
        }
    }
}

/// What a step asks of ask/tell's caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// ∇Ũ at the point.
    Gradient,
    /// Ũ at the point (HMC, SG-NPHMC).
    Energy,
    /// The diagonal of ∇²Ũ at the point (pSGLD's Γ correction).
    HessianDiagonal,
}

impl Need {
    pub fn name(self) -> &'static str {
        match self {
            Need::Gradient => "gradient",
            Need::Energy => "energy",
            Need::HessianDiagonal => "hessian_diagonal",
        }
    }
}

/// Ask/tell's source for one step: every request of the step (a gradient, the potential, a
/// Hessian diagonal, at a point) is answered from `answers` in order; the first request past
/// them is recorded as `pending` and answered with NaN, and so is everything after it. A step
/// run from the same state and generator makes the same requests, so a step re-run with one
/// more answer each time reaches its end after as many runs as it has requests.
#[derive(Debug, Default)]
pub struct Replay {
    /// The answers told in this step, each with the point it was asked at.
    pub answers: Vec<(Vec<f64>, Answer)>,
    /// The requests served in the current run of the step.
    served: usize,
    /// The first request without an answer in the current run.
    pub pending: Option<(Need, Vec<f64>)>,
    /// A request that did not match its told answer (another kind, or another point): the
    /// step cannot be replayed.
    pub mismatch: bool,
}

/// A told answer.
#[derive(Clone, Debug)]
pub enum Answer {
    Vector(Need, Vec<f64>),
    Energy(f64),
}

impl Replay {
    /// Starts a run of the step (the answers stay).
    pub fn rewind(&mut self) {
        self.served = 0;
        self.pending = None;
        self.mismatch = false;
    }

    /// The answer to request `served` if it is told and matches `need` at `theta`.
    fn next(&mut self, need: Need, theta: &[f64]) -> Option<&Answer> {
        if self.pending.is_some() || self.mismatch {
            return None;
        }
        let Some((point, answer)) = self.answers.get(self.served) else {
            self.pending = Some((need, theta.to_vec()));
            return None;
        };
        let kind = match answer {
            Answer::Vector(n, _) => *n,
            Answer::Energy(_) => Need::Energy,
        };
        // Bitwise: a replayed step computes the same points exactly.
        let same_point = point.len() == theta.len()
            && point
                .iter()
                .zip(theta)
                .all(|(a, b)| a.to_bits() == b.to_bits());
        if kind != need || !same_point {
            self.mismatch = true;
            return None;
        }
        self.served += 1;
        Some(answer)
    }

    fn vector(&mut self, need: Need, theta: &[f64], out: &mut [f64]) {
        match self.next(need, theta) {
            Some(Answer::Vector(_, v)) if v.len() == out.len() => out.copy_from_slice(v),
            _ => out.fill(f64::NAN),
        }
    }

    fn energy(&mut self, theta: &[f64]) -> f64 {
        match self.next(Need::Energy, theta) {
            Some(Answer::Energy(u)) => *u,
            _ => f64::NAN,
        }
    }
}

/// Why a source abandoned a step.
#[derive(Debug)]
pub enum SourceError {
    /// The Python callable raised (or returned something unusable).
    Python(PyErr),
}

/// One chain's source.
pub enum Source<'s> {
    Builtin(BuiltinChain),
    C(CChain),
    Python(&'s PyFunctions),
    /// Ask/tell: the answers told so far in this step, replayed in order, and a probe at the
    /// first request without one.
    Replay(&'s mut Replay),
}

/// One chain's source with the error it met, if any.
pub struct ChainSource<'s> {
    pub source: Source<'s>,
    pub error: Option<SourceError>,
}

impl<'s> ChainSource<'s> {
    pub fn new(source: Source<'s>) -> Self {
        ChainSource {
            source,
            error: None,
        }
    }
}

/// `f(theta)` into `grad`: the gradient or (`what` = "hessian_diagonal") the Hessian's
/// diagonal, a 1-d array of θ's length.
fn call_vector(f: &Py<PyAny>, what: &str, theta: &[f64], grad: &mut [f64]) -> PyResult<()> {
    Python::attach(|py| {
        let x = PyArray1::from_slice(py, theta);
        let out = f.bind(py).call1((x,))?;
        let array = out
            .extract::<numpy::PyArrayLike1<'_, f64, numpy::AllowTypeChange>>()
            .map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "the {what} function must return a 1-d array of floats"
                ))
            })?;
        let view = array.as_array();
        if view.len() != grad.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "the {what} function returned {} values for θ of length {}",
                view.len(),
                grad.len()
            )));
        }
        for (g, v) in grad.iter_mut().zip(view.iter()) {
            *g = *v;
        }
        Ok(())
    })
}

fn call_energy(f: &Py<PyAny>, theta: &[f64]) -> PyResult<f64> {
    Python::attach(|py| {
        let x = PyArray1::from_slice(py, theta);
        let out = f.bind(py).call1((x,))?;
        let value: f64 = out.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "the energy function must return a float, not {}",
                out.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })?;
        Ok(value)
    })
}

impl sgmcmc::Gradient<f64> for ChainSource<'_> {
    fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        match &mut self.source {
            Source::Builtin(chain) => chain.gradient(theta, grad),
            Source::C(chain) => {
                chain.fresh_rows();
                chain.call_vector(chain.functions.gradient, theta, grad);
            }
            Source::Python(f) => {
                if self.error.is_some() {
                    grad.fill(f64::NAN);
                } else if let Err(e) = call_vector(&f.gradient, "gradient", theta, grad) {
                    self.error = Some(SourceError::Python(e));
                    grad.fill(f64::NAN);
                }
            }
            Source::Replay(replay) => replay.vector(Need::Gradient, theta, grad),
        }
    }

    /// The diagonal of ∇²Ũ at θ, on the last gradient's minibatch where sgmcmc draws the rows;
    /// `false` for a model without one (the step is then refused; `sample` refuses such a
    /// model up front).
    fn hessian_diagonal(&mut self, theta: &[f64], diagonal: &mut [f64]) -> bool {
        match &mut self.source {
            Source::Replay(replay) => replay.vector(Need::HessianDiagonal, theta, diagonal),
            Source::Builtin(chain) => chain.hessian_diagonal(theta, diagonal),
            Source::C(chain) => {
                let Some(address) = chain.functions.hessian_diagonal else {
                    return false;
                };
                chain.last_rows();
                chain.call_vector(address, theta, diagonal);
            }
            Source::Python(f) => {
                let Some(h) = &f.hessian_diagonal else {
                    return false;
                };
                if self.error.is_some() {
                    diagonal.fill(f64::NAN);
                } else if let Err(e) = call_vector(h, "hessian_diagonal", theta, diagonal) {
                    self.error = Some(SourceError::Python(e));
                    diagonal.fill(f64::NAN);
                }
            }
        }
        true
    }
}

impl sgmcmc::Energy<f64> for ChainSource<'_> {
    fn energy(&mut self, theta: &[f64]) -> f64 {
        match &mut self.source {
            Source::Builtin(chain) => chain.energy(theta),
            Source::C(chain) if chain.batches.is_some() => match chain.functions.energy {
                Some(address) => {
                    chain.last_rows();
                    let c = &chain.functions;
                    // SAFETY: as for the rows gradient: the documented signature, thread
                    // safety, a context valid for the run; θ has n entries, `rows` batch.
                    unsafe {
                        let f: CRowsEnergy = std::mem::transmute::<usize, CRowsEnergy>(address);
                        f(
                            theta.as_ptr(),
                            theta.len(),
                            chain.rows.as_ptr(),
                            chain.rows.len(),
                            c.context as *mut c_void,
                        )
                    }
                }
                None => f64::NAN,
            },
            Source::C(chain) => match chain.functions.energy {
                // SAFETY: as for the gradient: the documented signature, thread safety, and a
                // context valid for the run; θ has n entries.
                Some(address) => unsafe {
                    let f: CEnergy = std::mem::transmute::<usize, CEnergy>(address);
                    f(
                        theta.as_ptr(),
                        theta.len(),
                        chain.functions.context as *mut c_void,
                    )
                },
                None => f64::NAN,
            },
            Source::Python(f) => match (&f.energy, self.error.is_some()) {
                (Some(e), false) => match call_energy(e, theta) {
                    Ok(v) => v,
                    Err(err) => {
                        self.error = Some(SourceError::Python(err));
                        f64::NAN
                    }
                },
                _ => f64::NAN,
            },
            Source::Replay(replay) => replay.energy(theta),
        }
    }
}

impl sgmcmc::MinibatchGradient<f64> for ChainSource<'_> {
    fn gradient_with_moments(
        &mut self,
        theta: &[f64],
        grad: &mut [f64],
        moments: sgmcmc::Moments<'_, f64>,
    ) -> sgmcmc::Batch {
        // `sample` allows calibration with built-in data models only; any other source
        // reports a batch of 0 examples, which the wrapper refuses with the state unchanged.
        let batch = match &mut self.source {
            Source::Builtin(chain) => chain.gradient_with_moments(theta, grad, moments),
            _ => None,
        };
        batch.unwrap_or(sgmcmc::Batch {
            size: 0,
            population: 0,
            sampling: sgmcmc::Sampling::WithoutReplacement,
        })
    }
}
