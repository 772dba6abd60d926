//! Ask/tell stepping: the sampler says where it needs the next gradient (or potential), the caller computes it anywhere (JAX on a GPU, another process) and hands it back, and the step is taken.
//!
//! A step is run from its saved starting state with the answers told so far, replayed in
//! order ([`Replay`]); the first request without an answer records its kind and point and is
//! answered with NaN, and the run is thrown away (the sampler is rebuilt from the saved state
//! for every run, and the generator is a copy). `ask` returns that point; `tell` adds its answer
//! and runs the step again, which either asks for more or reaches the end and is kept. The
//! stochastic-gradient samplers make one request per step (two for pSGLD with its Γ
//! correction: the gradient, then the Hessian diagonal); HMC and SG-NPHMC make one per leapfrog
//! step and the potentials, so an L-step trajectory takes L + 2 asks and O(L²) replayed
//! leapfrog steps, cheap beside the gradients themselves. With the same answers, the chain is
//! bit for bit the chain `sample` draws (`tests/test_gradients.py`).

use crate::built::{Buffers, Built, SavedScalars};
use crate::errors::{self, build_error};
use crate::rng::CountedPcg;
use crate::settings::{self, Kind};
use crate::source::{Answer, ChainSource, Need, Replay, Source};
use crate::{chain_rng, to_vec1};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sgmcmc::prelude::StepStats;

/// A chain stepped by ask/tell.
#[pyclass(module = "sgmcmc._sgmcmc")]
pub struct Stepper {
    kind: Kind,
    buffers: Buffers,
    /// The sampler's scalars and buffers at the start of the next step.
    saved: (SavedScalars, Vec<f64>),
    rng: CountedPcg,
    /// The next step's told answers and its pending request.
    replay: Replay,
    steps: u64,
}

/// The sampler of `kind` over `buffers`, restored to `saved`.
fn restored<'b>(
    buffers: &'b mut Buffers,
    kind: &Kind,
    saved: &(SavedScalars, Vec<f64>),
) -> PyResult<Built<'b>> {
    let mut built = buffers.build(kind, None).map_err(build_error)?;
    built
        .restore(&saved.0, &saved.1)
        .map_err(|e| build_error(sgmcmc::Error::Layout(e)))?;
    Ok(built)
}

impl Stepper {
    /// Runs the next step with the answers told so far: `Some` with its statistics when it
    /// reached its end (then kept), `None` when it asked for one more answer (`replay.pending`).
    fn attempt(&mut self) -> PyResult<Option<StepStats<f64>>> {
        self.replay.rewind();
        let mut rng = self.rng.clone();
        let (result, saved) = {
            let mut sampler = restored(&mut self.buffers, &self.kind, &self.saved)?;
            let mut source = ChainSource::new(Source::Replay(&mut self.replay));
            let result = sampler.step(&mut source, &mut rng);
            let saved = sampler.save();
            (result, saved)
        };
        if self.replay.mismatch {
            self.replay = Replay::default();
            return Err(errors::StepError::new_err(format!(
                "step {}: the replayed step asked for another quantity or point than was told \
                 (its answers were dropped; ask again)",
                self.steps
            )));
        }
        if self.replay.pending.is_some() {
            return Ok(None);
        }
        match (result, saved) {
            (Ok(stats), Some(saved)) => {
                self.saved = saved;
                self.rng = rng;
                self.replay = Replay::default();
                self.steps += 1;
                Ok(Some(stats))
            }
            (Ok(_), None) => Err(errors::StepError::new_err(
                "the sampler's state could not be saved after the step",
            )),
            (Err(e), _) => {
                // The last answer made the step fail (a non-finite gradient, say): it is taken
                // back, so the same request is pending again.
                if let Some((point, answer)) = self.replay.answers.pop() {
                    let need = match answer {
                        Answer::Vector(need, _) => need,
                        Answer::Energy(_) => Need::Energy,
                    };
                    self.replay.pending = Some((need, point));
                }
                Err(errors::StepError::new_err(format!(
                    "step {}: {e} (the chain is as before the step; tell again)",
                    self.steps
                )))
            }
        }
    }
}

#[pymethods]
impl Stepper {
    /// A chain of `sampler` from `init` (any 1-d array-like of real numbers), with the noise
    /// generator `Pcg64::new(seed, chain)` as in `sample` (both 0 by default); `settings` as
    /// `sample` takes them.
    #[new]
    // (`seed` and `chain` arrive as Python objects, `None` for the default 0, so that a bad one
    // is a SettingError naming it.)
    #[pyo3(signature = (sampler, init, *, seed=None, chain=None, **settings))]
    fn new(
        sampler: &str,
        init: &Bound<'_, PyAny>,
        seed: Option<&Bound<'_, PyAny>>,
        chain: Option<&Bound<'_, PyAny>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let seed = seed.map_or(Ok(0), |v| index(v, "seed"))?;
        let chain = chain.map_or(Ok(0), |v| index(v, "chain"))?;
        let kind = settings::parse(sampler, settings)?;
        let init = real_vector(init, "init")?;
        let mut buffers = Buffers::new(&kind, None, &init);
        // Build once now, so that a bad θ fails here rather than at the first ask.
        let saved = buffers
            .build(&kind, None)
            .map_err(build_error)?
            .save()
            .ok_or_else(|| errors::StepError::new_err("the sampler's state cannot be saved"))?;
        Ok(Stepper {
            buffers,
            kind,
            saved,
            rng: chain_rng(seed, chain),
            replay: Replay::default(),
            steps: 0,
        })
    }

    /// The point θ' at which the next step needs something (`needs` says what: for the
    /// splitting integrators a gradient not at the current θ). Asking again without a tell
    /// returns the same point.
    fn ask<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        if self.replay.pending.is_none() && self.attempt()?.is_some() {
            return Err(errors::StepError::new_err(
                "the sampler took a step without asking for anything",
            ));
        }
        match &self.replay.pending {
            Some((_, point)) => Ok(PyArray1::from_slice(py, point)),
            None => Err(errors::StepError::new_err("the step asked for nothing")),
        }
    }

    /// What the point `ask` returned needs: "gradient" (∇Ũ), "energy" (Ũ, for HMC and
    /// SG-NPHMC) or "hessian_diagonal" (pSGLD's Γ correction); `None` before `ask`.
    #[getter]
    fn needs(&self) -> Option<&'static str> {
        self.replay.pending.as_ref().map(|(need, _)| need.name())
    }

    /// Hands back what `needs` asked for at the point `ask` returned: an array of θ's length,
    /// or a float for "energy". Returns the step's statistics when this completed the step,
    /// `None` when the step needs more (ask again). A non-finite answer raises `StepError` and
    /// leaves the chain as it was (tell again).
    fn tell<'py>(
        &mut self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some((need, point)) = self.replay.pending.clone() else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "tell before ask: call ask() for the point of the next request first",
            ));
        };
        let answer = match need {
            Need::Energy => Answer::Energy(value.extract::<f64>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(
                    "the step needs the potential Ũ here: tell a float",
                )
            })?),
            Need::Gradient | Need::HessianDiagonal => {
                let told = real_vector(value, need.name())?;
                let n = self.buffers.theta.len();
                if told.len() != n {
                    return Err(errors::layout_error(
                        need.name(),
                        format!("the {} has length {}, θ {n}", need.name(), told.len()),
                    ));
                }
                Answer::Vector(need, told)
            }
        };
        self.replay.answers.push((point, answer));
        self.replay.pending = None;
        let Some(stats) = self.attempt()? else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("step_size", stats.step_size)?;
        d.set_item("kinetic_temperature", stats.kinetic_temperature)?;
        d.set_item("thermostat", stats.thermostat)?;
        d.set_item("acceptance_rate", stats.acceptance)?;
        Ok(Some(d))
    }

    /// The current θ.
    #[getter]
    fn position<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let sampler = restored(&mut self.buffers, &self.kind, &self.saved)?;
        Ok(PyArray1::from_slice(py, sampler.position()))
    }

    /// The steps taken.
    #[getter]
    fn steps(&self) -> u64 {
        self.steps
    }
}

/// `value` as a vector of f64 through the package's `_floats`, as `sample` converts its arrays:
/// any 1-d array-like of real numbers (a list, float32, a JAX or PyTorch CPU array; float32
/// widens exactly), a `LayoutError` naming `name` for anything else (complex, strings, another
/// shape).
fn real_vector(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
    let array = value
        .py()
        .import("sgmcmc")?
        .getattr("_floats")?
        .call1((value, name, 1))?;
    let array: PyReadonlyArray1<'_, f64> = array.extract()?;
    Ok(to_vec1(&array))
}

/// `value` as a u64, or a `SettingError` naming `name` (instead of PyO3's unnamed
/// `OverflowError` or `TypeError`).
fn index(value: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    value.extract::<u64>().map_err(|_| {
        errors::setting_error(
            name,
            format!("{name} must be an integer in [0, 2**64 - 1], not {value}"),
        )
    })
}
