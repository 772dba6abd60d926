//! Ask/tell stepping: the sampler says where it needs the next gradient, the caller computes it anywhere (JAX on a GPU, another process) and hands it back, and the step is taken.
//!
//! `ask` runs the next step with a probe for a gradient: the probe records the point and
//! answers NaN, so the sampler abandons the step and leaves its state as it was (the crate's
//! state contract), and the generator is put back. `tell` runs the same step again from the same
//! generator state with the told gradient; the step is computed exactly as with a built-in
//! gradient, so the chain is bit for bit the chain `sample` draws (`tests/test_ask_tell.py`).
//! The six stochastic-gradient samplers take one gradient per step; HMC and SG-NPHMC, which
//! take several and the potential, are not offered here.

use crate::built::{Buffers, Built};
use crate::errors::{self, build_error};
use crate::rng::CountedPcg;
use crate::settings::{self, Kind};
use crate::source::{ChainSource, Source};
use crate::{chain_rng, to_vec1};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sgmcmc::sampler::Scalars;

/// A chain stepped by ask/tell.
#[pyclass(module = "sgmcmc._sgmcmc")]
pub struct Stepper {
    kind: Kind,
    buffers: Buffers,
    /// The sampler's scalars and buffers after the last step (`None` before the first).
    saved: Option<(Scalars<f64>, Vec<f64>)>,
    rng: CountedPcg,
    asked: Option<Vec<f64>>,
    steps: u64,
}

impl Stepper {
    /// Builds the sampler over the buffers and restores the last step's state.
    fn sampler(&mut self) -> PyResult<Built<'_>> {
        let mut built = self.buffers.build(&self.kind, None).map_err(build_error)?;
        if let Some((state, data)) = &self.saved {
            built
                .restore(state, data)
                .map_err(|e| build_error(sgmcmc::Error::Layout(e)))?;
        }
        Ok(built)
    }
}

#[pymethods]
impl Stepper {
    /// A chain of `sampler` (one of the stochastic-gradient samplers) from `init`, with the noise
    /// generator `Pcg64::new(seed, chain)` as in `sample`; `settings` as `sample` takes them.
    #[new]
    #[pyo3(signature = (sampler, init, *, seed=0, chain=0, **settings))]
    fn new(
        sampler: &str,
        init: PyReadonlyArray1<'_, f64>,
        seed: u64,
        chain: u64,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let kind = settings::parse(sampler, settings)?;
        if kind.needs_energy() {
            return Err(errors::setting_error(
                "sampler",
                format!(
                    "{sampler} takes several gradients and the potential per step: ask/tell \
                     offers the stochastic-gradient samplers (sgld, psgld, sghmc, sgnht, msgnht, \
                     sgmgt, sgmgt_d)"
                ),
            ));
        }
        let init = to_vec1(&init);
        let mut stepper = Stepper {
            buffers: Buffers::new(&kind, None, &init),
            kind,
            saved: None,
            rng: chain_rng(seed, chain),
            asked: None,
            steps: 0,
        };
        // Build once now, so that a bad θ fails here rather than at the first ask.
        stepper.sampler()?;
        Ok(stepper)
    }

    /// The point θ' at which the next step needs ∇Ũ (for the splitting integrators, not the
    /// current θ). Asking again without a tell returns the same point.
    fn ask<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        if let Some(point) = &self.asked {
            return Ok(PyArray1::from_slice(py, point));
        }
        let mut rng = self.rng.clone();
        let mut point = Vec::new();
        let result = {
            let mut sampler = self.sampler()?;
            let mut source = ChainSource::new(Source::Probe(&mut point));
            sampler.step(&mut source, &mut rng).map(|_| ())
        };
        if result.is_ok() || point.is_empty() {
            return Err(errors::StepError::new_err(
                "the sampler took a step without asking for a gradient",
            ));
        }
        let out = PyArray1::from_slice(py, &point);
        self.asked = Some(point);
        Ok(out)
    }

    /// Takes the step with ∇Ũ(θ') = `gradient` at the point `ask` returned; returns the step's
    /// statistics. A non-finite gradient raises `StepError` and leaves the chain as it was
    /// (ask again, tell again).
    fn tell<'py>(
        &mut self,
        py: Python<'py>,
        gradient: PyReadonlyArray1<'_, f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if self.asked.is_none() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "tell before ask: call ask() for the point of the next gradient first",
            ));
        }
        let told = to_vec1(&gradient);
        let n = self.buffers.theta.len();
        if told.len() != n {
            return Err(errors::layout_error(
                "gradient",
                format!("the gradient has length {}, θ {n}", told.len()),
            ));
        }
        let mut rng = self.rng.clone();
        let (result, saved) = {
            let mut sampler = self.sampler()?;
            let mut source = ChainSource::new(Source::Told(&told));
            let result = sampler.step(&mut source, &mut rng);
            let saved = if result.is_ok() { sampler.save() } else { None };
            (result, saved)
        };
        match result {
            Ok(stats) => {
                self.saved = saved;
                self.rng = rng;
                self.asked = None;
                self.steps += 1;
                let d = PyDict::new(py);
                d.set_item("step_size", stats.step_size)?;
                d.set_item("kinetic_temperature", stats.kinetic_temperature)?;
                d.set_item("thermostat", stats.thermostat)?;
                Ok(d)
            }
            Err(e) => {
                // The buffers were rebuilt from `saved` at the next call; nothing to undo.
                Err(errors::StepError::new_err(format!(
                    "step {}: {e}",
                    self.steps
                )))
            }
        }
    }

    /// The current θ.
    #[getter]
    fn position<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let sampler = self.sampler()?;
        Ok(PyArray1::from_slice(py, sampler.position()))
    }

    /// The steps taken.
    #[getter]
    fn steps(&self) -> u64 {
        self.steps
    }
}
