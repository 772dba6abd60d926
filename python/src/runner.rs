//! `run`: chains on Rust threads with the GIL released, stopped cleanly by Ctrl-C, their draws and sample statistics returned as numpy arrays.
//!
//! Chain c steps with the noise generator `Pcg64::new(seed, c)` and (built-in data models) the
//! minibatch generator `Pcg64::new(seed, 2⁶⁴ + c)`: a Rust program that builds the same sampler
//! with the same settings draws the same chain.

use crate::built::{Buffers, Built, SavedScalars};
use crate::errors::{self, build_error};
use crate::models::Minibatches;
use crate::rng::CountedPcg;
use crate::settings::{self, Kind};
use crate::source::{
    CChain, CFunctions, ChainSource, PyFunctions, RowSpec, Source, SourceError, Spec,
};
use crate::{BuiltinModel, chain_rng, minibatch_rng};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sgmcmc::adapt::McemParams;
use sgmcmc::kinetic::MassShape;
use sgmcmc::prelude::*;
use sgmcmc::sampler::Scalars;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// What one chain produced.
#[derive(Default)]
struct ChainOutput {
    draws: Vec<f64>,
    step_size: Vec<f64>,
    kinetic_temperature: Vec<f64>,
    thermostat: Vec<f64>,
    acceptance: Vec<f64>,
    kept: usize,
    sampling_stage: Vec<f64>,
    /// MCEM: the learned M⁻¹ at the end, and the M-steps taken.
    learned: Option<(Vec<f64>, u64)>,
    failure: Option<Failure>,
    saved: Option<SavedChain>,
}

enum Failure {
    Build(sgmcmc::Error),
    Source { step: u64, error: SourceError },
    Step { step: u64, error: sgmcmc::StepError },
}

struct Plan {
    warmup: u64,
    draws: u64,
    thin: u64,
    /// A step-size schedule, and whether its exploration stages run at T = 0 (cSG-MCMC).
    schedule: Option<(StepSchedule<f64>, bool)>,
}

/// Where a chain stopped: its sampler's checkpoint, its generators and the steps it took, for
/// `sample(..., resume=fit.state)` to continue it exactly.
#[derive(Clone, Debug)]
pub struct SavedChain {
    state: SavedScalars,
    data: Vec<f64>,
    rng: CountedPcg,
    minibatches: Option<crate::models::MinibatchState>,
    steps: u64,
    position: Vec<f64>,
}

/// The saved chains of a run (`Fit.state`).
#[pyclass(module = "sgmcmc._sgmcmc", frozen)]
pub struct ChainStates {
    sampler: String,
    chains: Vec<SavedChain>,
}

#[pymethods]
impl ChainStates {
    /// The number of chains.
    fn __len__(&self) -> usize {
        self.chains.len()
    }

    /// The sampler the chains were run with.
    #[getter]
    fn sampler(&self) -> &str {
        &self.sampler
    }

    /// The steps each chain has taken in all.
    #[getter]
    fn steps(&self) -> Vec<u64> {
        self.chains.iter().map(|c| c.steps).collect()
    }

    /// The chains `start..stop` (a slice with step 1), e.g. one task's share of a run.
    fn __getitem__(&self, index: &Bound<'_, pyo3::types::PySlice>) -> PyResult<Self> {
        let idx = index.indices(self.chains.len() as isize)?;
        if idx.step != 1 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "ChainStates takes slices of consecutive chains (step 1)",
            ));
        }
        let (start, stop) = (idx.start as usize, (idx.stop.max(idx.start)) as usize);
        Ok(ChainStates {
            sampler: self.sampler.clone(),
            chains: self.chains[start..stop].to_vec(),
        })
    }

    /// The chains of `states`, one after another (the states of one sampler).
    #[staticmethod]
    fn concat(states: Vec<PyRef<'_, ChainStates>>) -> PyResult<Self> {
        let Some(first) = states.first() else {
            return Err(errors::layout_error(
                "state",
                "nothing to concatenate".into(),
            ));
        };
        let sampler = first.sampler.clone();
        if let Some(other) = states.iter().find(|s| s.sampler != sampler) {
            return Err(errors::layout_error(
                "state",
                format!("states of {sampler} and {} cannot be joined", other.sampler),
            ));
        }
        Ok(ChainStates {
            sampler,
            chains: states.iter().flat_map(|s| s.chains.clone()).collect(),
        })
    }

    /// The state as bytes (a versioned little-endian format that `from_bytes` reads back),
    /// e.g. to write it to a file. `pickle` uses it too.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.encode())
    }

    /// The state `to_bytes` wrote; `LayoutError` (buffer "state") for anything else.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        ChainStates::decode(data)
            .map_err(|why| errors::layout_error("state", format!("not a saved state: {why}")))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, pyo3::types::PyBytes>,))> {
        let py = slf.py();
        let rebuild = slf.get_type().getattr("from_bytes")?;
        Ok((rebuild, (slf.get().to_bytes(py),)))
    }

    fn __repr__(&self) -> String {
        format!(
            "ChainStates(sampler={:?}, chains={}, steps={:?})",
            self.sampler,
            self.chains.len(),
            self.steps()
        )
    }
}

/// The first bytes of [`ChainStates::encode`]: a name, then the format's version.
const STATE_MAGIC: &[u8; 12] = b"sgmcmc-state";
const STATE_VERSION: u32 = 1;

impl ChainStates {
    /// The state as bytes: the magic and version, the sampler's name, then per chain its steps,
    /// the sampler's scalars (a kind byte, then `Scalars::to_words` or, for a calibrated
    /// sampler, `CalibratedScalars::to_words`, for MCEM `McemScalars::to_words`) and
    /// checkpoint data, its noise generator
    /// (state, stream, steps taken), its position and, for a built-in data model, its
    /// minibatch generator, permutation, last minibatch and whether it was drawn. Integers and
    /// floats little-endian, lengths as u64.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(STATE_MAGIC);
        out.extend_from_slice(&STATE_VERSION.to_le_bytes());
        put_u64(&mut out, self.sampler.len() as u64);
        out.extend_from_slice(self.sampler.as_bytes());
        put_u64(&mut out, self.chains.len() as u64);
        for c in &self.chains {
            put_u64(&mut out, c.steps);
            // The scalars' kind, then their words (`Scalars` 9, `CalibratedScalars` 14).
            match &c.state {
                SavedScalars::Plain(s) => {
                    out.push(0);
                    s.to_words().iter().for_each(|&w| put_u64(&mut out, w));
                }
                SavedScalars::Calibrated(s) => {
                    out.push(1);
                    s.to_words().iter().for_each(|&w| put_u64(&mut out, w));
                }
                SavedScalars::Mcem(s) => {
                    out.push(2);
                    s.to_words().iter().for_each(|&w| put_u64(&mut out, w));
                }
            }
            put_floats(&mut out, &c.data);
            put_rng(&mut out, &c.rng);
            put_floats(&mut out, &c.position);
            match &c.minibatches {
                None => out.push(0),
                Some(m) => {
                    out.push(1);
                    put_rng(&mut out, &m.rng);
                    put_u64(&mut out, m.permutation.len() as u64);
                    m.permutation
                        .iter()
                        .for_each(|&i| put_u64(&mut out, i as u64));
                    put_u64(&mut out, m.rows.len() as u64);
                    m.rows.iter().for_each(|&i| put_u64(&mut out, i as u64));
                    out.push(u8::from(m.drawn));
                }
            }
        }
        out
    }

    /// Reads [`ChainStates::encode`]'s bytes, or says what is wrong with them. The sampler's
    /// checkpoint data is checked when a run restores it (`Checkpoint::restore`), the
    /// minibatch state against the model then too.
    fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(STATE_MAGIC.len())? != STATE_MAGIC {
            return Err("it does not start with \"sgmcmc-state\"".into());
        }
        let version = u32::from_le_bytes(r.array()?);
        if version != STATE_VERSION {
            return Err(format!(
                "format version {version}; this sgmcmc reads {STATE_VERSION}"
            ));
        }
        let name_len = r.len()?;
        let sampler = std::str::from_utf8(r.take(name_len)?)
            .map_err(|_| "the sampler's name is not UTF-8")?
            .to_string();
        let count = r.len()?;
        let mut chains = Vec::new();
        for chain in 0..count {
            let steps = r.u64()?;
            let bad = |e: sgmcmc::LayoutError| format!("chain {chain}'s sampler scalars: {e}");
            let state = match r.take(1)?[0] {
                0 => SavedScalars::Plain(Scalars::from_words(&r.words()?).map_err(bad)?),
                1 => SavedScalars::Calibrated(
                    sgmcmc::adapt::CalibratedScalars::from_words(&r.words()?).map_err(bad)?,
                ),
                2 => SavedScalars::Mcem(
                    sgmcmc::adapt::McemScalars::from_words(&r.words()?).map_err(bad)?,
                ),
                b => return Err(format!("chain {chain}: a scalars kind byte of {b}")),
            };
            let data = r.floats()?;
            let rng = r.rng()?;
            let position = r.floats()?;
            if let Some(i) = position.iter().position(|v| !v.is_finite()) {
                return Err(format!("chain {chain}'s position is not finite at {i}"));
            }
            let minibatches = match r.take(1)?[0] {
                0 => None,
                1 => {
                    let rng = r.rng()?;
                    let permutation = r.indices()?;
                    let rows = r.indices()?;
                    let drawn = match r.take(1)?[0] {
                        0 => false,
                        1 => true,
                        b => return Err(format!("chain {chain}: a flag byte of {b}")),
                    };
                    Some(crate::models::MinibatchState {
                        rng,
                        permutation,
                        rows,
                        drawn,
                    })
                }
                b => return Err(format!("chain {chain}: a flag byte of {b}")),
            };
            chains.push(SavedChain {
                state,
                data,
                rng,
                minibatches,
                steps,
                position,
            });
        }
        if r.at != bytes.len() {
            return Err(format!("{} bytes after the last chain", bytes.len() - r.at));
        }
        Ok(ChainStates { sampler, chains })
    }
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_floats(out: &mut Vec<u8>, values: &[f64]) {
    put_u64(out, values.len() as u64);
    values
        .iter()
        .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
}

fn put_rng(out: &mut Vec<u8>, rng: &CountedPcg) {
    let (state, stream, steps) = rng.parts();
    for v in [state, stream, steps] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// A cursor over [`ChainStates::encode`]'s bytes; every read checks the length left.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| format!("it ends early (at byte {})", self.bytes.len()))?;
        let piece = &self.bytes[self.at..end];
        self.at = end;
        Ok(piece)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A length, at most the bytes left (every entry takes at least one), so that a corrupt
    /// length cannot ask for more memory than a few times the input's size.
    fn len(&mut self) -> Result<usize, String> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(format!("a length of {n} with {left} bytes left"));
        }
        Ok(n as usize)
    }

    fn words<const N: usize>(&mut self) -> Result<[u64; N], String> {
        let mut words = [0u64; N];
        for w in words.iter_mut() {
            *w = self.u64()?;
        }
        Ok(words)
    }

    fn floats(&mut self) -> Result<Vec<f64>, String> {
        let n = self.len()?;
        (0..n)
            .map(|_| Ok(f64::from_le_bytes(self.array()?)))
            .collect()
    }

    fn indices(&mut self) -> Result<Vec<usize>, String> {
        let n = self.len()?;
        (0..n)
            .map(|_| usize::try_from(self.u64()?).map_err(|_| "an index too large".to_string()))
            .collect()
    }

    fn rng(&mut self) -> Result<CountedPcg, String> {
        let [state, stream, steps] = [(); 3].map(|()| self.array::<16>().map(u128::from_le_bytes));
        Ok(CountedPcg::resumed(state?, stream?, steps?))
    }
}

/// What a chain is built from (shared by every chain of a run).
struct Setup<'r> {
    kind: &'r Kind,
    calibration: Option<&'r CalibratedParams<f64>>,
    mcem: Option<&'r (McemParams<f64>, MassShape)>,
    spec: &'r Spec,
    seed: u64,
    plan: &'r Plan,
}

impl Setup<'_> {
    /// A chain's buffers, sized for its sampler and wrappers, holding `init` (or the saved θ).
    fn buffers(&self, init: &[f64], resume: Option<&SavedChain>) -> Buffers {
        let init = resume.map_or(init, |r| &r.position);
        let buffers = Buffers::new(self.kind, self.calibration, init);
        if let Some((_, shape)) = self.mcem {
            buffers.with_mcem(*shape)
        } else {
            buffers
        }
    }
}

/// One chain in progress: built by [`ChainRun::start`], stepped by [`ChainRun::step`] (so that
/// several chains can share a thread), ended by [`ChainRun::finish`].
struct ChainRun<'b> {
    out: ChainOutput,
    source: ChainSource<'b>,
    sampler: Option<Built<'b>>,
    rng: CountedPcg,
    first: u64,
    temperature: f64,
    taken: u64,
    running: bool,
}

impl<'b> ChainRun<'b> {
    fn start(
        setup: &Setup<'b>,
        buffers: &'b mut Buffers,
        chain: u64,
        resume: Option<&SavedChain>,
    ) -> Self {
        let source = match setup.spec {
            // A saved sequence was checked against this model by `run` (`check_resume`).
            Spec::Builtin(m) => Source::Builtin(
                resume
                    .and_then(|r| r.minibatches.as_ref())
                    .and_then(|s| crate::models::BuiltinChain::resumed(Arc::clone(m), s))
                    .unwrap_or_else(|| {
                        crate::models::BuiltinChain::new(
                            Arc::clone(m),
                            minibatch_rng(setup.seed, chain),
                        )
                    }),
            ),
            Spec::C(c) => Source::C(CChain::new(
                *c,
                c.rows.map(|r| {
                    let fresh = Minibatches::new(
                        r.examples,
                        r.batch,
                        r.replace,
                        minibatch_rng(setup.seed, chain),
                    );
                    resume
                        .and_then(|s| s.minibatches.as_ref())
                        .and_then(|s| fresh.clone().resumed(s))
                        .unwrap_or(fresh)
                }),
            )),
            Spec::Python(p) => Source::Python(p),
        };
        let mut run = ChainRun {
            out: ChainOutput::default(),
            source: ChainSource::new(source),
            sampler: None,
            rng: chain_rng(setup.seed, chain),
            first: 0,
            temperature: 1.0,
            taken: 0,
            running: false,
        };
        let built = match setup.mcem {
            Some((params, _)) => buffers.build_mcem(setup.kind, *params),
            None => buffers.build(setup.kind, setup.calibration),
        };
        let mut sampler = match built {
            Ok(s) => s,
            Err(e) => {
                run.out.failure = Some(Failure::Build(e));
                return run;
            }
        };
        if let Some(r) = resume {
            if let Err(e) = sampler.restore(&r.state, &r.data) {
                run.out.failure = Some(Failure::Build(sgmcmc::Error::Layout(e)));
                return run;
            }
            run.rng = r.rng.clone();
            run.first = r.steps;
        }
        let plan = setup.plan;
        // The kept draws, reserved up to 2²⁰ values (8 MB): a huge `draws` grows as it fills
        // rather than claiming its memory up front.
        let wanted = (plan.draws as usize).saturating_mul(sampler.position().len());
        run.out.draws.reserve(wanted.min(1 << 20));
        run.temperature = sampler.temperature();
        run.sampler = Some(sampler);
        run.running = true;
        run
    }

    /// Step `t` of the run (0 for the first after `warmup`'s start); records the draw when the
    /// plan keeps it. False once the chain has stopped (a failure, or not started).
    fn step(&mut self, t: u64, plan: &Plan) -> bool {
        let Some(sampler) = self.sampler.as_mut().filter(|_| self.running) else {
            return false;
        };
        let iteration = self.first + t;
        // As `sgmcmc::sampler::run_scheduled` and `run_cyclical` step: h_t, then (cSG-MCMC)
        // T = 0 in an exploration stage, then the step.
        let mut sampling = true;
        let prepared = match &plan.schedule {
            None => Ok(()),
            Some((schedule, noise_off)) => {
                sampling = schedule.sampling(iteration);
                let stage = if sampling || !noise_off {
                    self.temperature
                } else {
                    0.0
                };
                sampler
                    .set_step_size(schedule.at(iteration))
                    .and_then(|()| {
                        if sampler.temperature() != stage {
                            sampler.set_temperature(stage)
                        } else {
                            Ok(())
                        }
                    })
            }
        };
        let result = prepared
            .map_err(sgmcmc::StepError::StepSize)
            .and_then(|()| sampler.step(&mut self.source, &mut self.rng));
        let out = &mut self.out;
        match result {
            Ok(stats) => {
                self.taken += 1;
                if t >= plan.warmup && (t - plan.warmup + 1).is_multiple_of(plan.thin) {
                    out.draws.extend_from_slice(sampler.position());
                    out.step_size.push(stats.step_size);
                    out.kinetic_temperature
                        .push(stats.kinetic_temperature.unwrap_or(f64::NAN));
                    out.thermostat.push(stats.thermostat.unwrap_or(f64::NAN));
                    out.acceptance.push(stats.acceptance.unwrap_or(f64::NAN));
                    out.sampling_stage.push(if sampling { 1.0 } else { 0.0 });
                    out.kept += 1;
                }
                true
            }
            Err(error) => {
                out.failure = Some(match self.source.error.take() {
                    Some(error) => Failure::Source { step: t, error },
                    None => Failure::Step { step: t, error },
                });
                self.running = false;
                false
            }
        }
    }

    /// The chain's output, with its final state for a resume.
    fn finish(mut self) -> ChainOutput {
        let Some(mut sampler) = self.sampler else {
            return self.out;
        };
        // T was accepted before the run and h does not enter its checks: restoring it cannot be
        // refused (as in `run_cyclical`).
        let _ = sampler.set_temperature(self.temperature);
        self.out.learned = sampler
            .learned_mass()
            .map(|(inverse_mass, m_steps)| (inverse_mass.to_vec(), m_steps));
        if let Some((state, data)) = sampler.save() {
            self.out.saved = Some(SavedChain {
                state,
                data,
                rng: self.rng,
                minibatches: match self.source.source {
                    Source::Builtin(chain) => Some(chain.minibatch_state()),
                    Source::C(chain) => chain.batches.as_ref().map(Minibatches::state),
                    _ => None,
                },
                steps: self.first + self.taken,
                position: sampler.position().to_vec(),
            });
        }
        self.out
    }
}

/// Runs chains `chains` (their global indices) to the end of the plan, round-robin one step
/// each, on the calling thread.
fn run_chains(
    setup: &Setup<'_>,
    chains: &[usize],
    first_chain: u64,
    init: &[f64],
    resume: Option<&[SavedChain]>,
    stop: &AtomicBool,
    done: &[AtomicU64],
) -> Vec<ChainOutput> {
    let dim = init.len() / done.len().max(1);
    let mut buffers: Vec<Buffers> = chains
        .iter()
        .map(|&c| setup.buffers(&init[c * dim..(c + 1) * dim], resume.map(|r| &r[c])))
        .collect();
    let mut runs: Vec<ChainRun<'_>> = buffers
        .iter_mut()
        .zip(chains)
        .map(|(b, &c)| ChainRun::start(setup, b, first_chain + c as u64, resume.map(|r| &r[c])))
        .collect();
    let plan = setup.plan;
    let total = plan.warmup + plan.draws * plan.thin;
    for t in 0..total {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut any = false;
        for (run, &c) in runs.iter_mut().zip(chains) {
            if run.step(t, plan) {
                done[c].fetch_add(1, Ordering::Relaxed);
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    runs.into_iter().map(ChainRun::finish).collect()
}

/// The gradient source of a Python model object.
fn spec_of(model: &Bound<'_, PyAny>) -> PyResult<Spec> {
    if let Ok(b) = model.cast::<BuiltinModel>() {
        return Ok(Spec::Builtin(std::sync::Arc::clone(&b.get().model)));
    }
    // `sgmcmc.CFunction` / `sgmcmc.PythonModel` (python/python/sgmcmc/models.py) carry
    // `_kind` and their fields.
    let kind: String = model
        .getattr("_kind")
        .and_then(|k| k.extract())
        .map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "model must be a built-in model (sgmcmc.LogisticRegression, ...), \
                 an sgmcmc.CFunction or an sgmcmc.PythonModel",
            )
        })?;
    match kind.as_str() {
        "cfunction" => {
            let gradient: usize = model.getattr("gradient_address")?.extract()?;
            let energy: Option<usize> = model.getattr("energy_address")?.extract()?;
            let hessian_diagonal: Option<usize> =
                model.getattr("hessian_diagonal_address")?.extract()?;
            let context: usize = model.getattr("context")?.extract()?;
            if gradient == 0 {
                return Err(errors::setting_error(
                    "gradient",
                    "the gradient's address is 0 (a null function pointer)".into(),
                ));
            }
            let examples: Option<usize> = model.getattr("examples")?.extract()?;
            let batch: Option<usize> = model.getattr("batch_size")?.extract()?;
            let replace: bool = model.getattr("replace")?.extract()?;
            let rows = match (examples, batch) {
                (None, None) => None,
                (None, Some(_)) => {
                    return Err(errors::setting_error(
                        "batch_size",
                        "a C function's batch_size needs examples (the N to draw from)".into(),
                    ));
                }
                (Some(0), _) => {
                    return Err(errors::setting_error(
                        "examples",
                        "a C function's examples must be at least 1".into(),
                    ));
                }
                (Some(_), Some(0)) => {
                    return Err(errors::setting_error(
                        "batch_size",
                        "a C function's batch_size must be at least 1".into(),
                    ));
                }
                (Some(examples), batch) => Some(RowSpec {
                    examples,
                    batch,
                    replace,
                }),
            };
            Ok(Spec::C(CFunctions {
                gradient,
                energy: energy.filter(|&a| a != 0),
                hessian_diagonal: hessian_diagonal.filter(|&a| a != 0),
                context,
                rows,
            }))
        }
        "python" => {
            let gradient = model.getattr("gradient")?.unbind();
            let energy = model.getattr("energy")?;
            let hessian_diagonal = model.getattr("hessian_diagonal")?;
            Ok(Spec::Python(PyFunctions {
                gradient,
                energy: (!energy.is_none()).then(|| energy.unbind()),
                hessian_diagonal: (!hessian_diagonal.is_none()).then(|| hessian_diagonal.unbind()),
            }))
        }
        other => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "unknown model kind {other:?}"
        ))),
    }
}

/// The model's dimension, if it knows it.
fn model_dim(model: &Bound<'_, PyAny>) -> Option<usize> {
    if let Ok(b) = model.cast::<BuiltinModel>() {
        return Some(b.get().model.dim());
    }
    model.getattr("dim").ok()?.extract().ok()
}

/// Runs `init.shape[0]` chains of `sampler` on `model` (see `sgmcmc.sample`, which wraps it).
#[pyfunction]
#[pyo3(signature = (sampler, settings, model, init, warmup, draws, thin, seed, progress=None, calibration=None, schedule=None, first_chain=0, resume=None, mcem=None))]
#[allow(clippy::too_many_arguments)]
pub fn run<'py>(
    py: Python<'py>,
    sampler: &str,
    settings: Bound<'py, PyDict>,
    model: Bound<'py, PyAny>,
    init: PyReadonlyArray2<'py, f64>,
    warmup: u64,
    draws: u64,
    thin: u64,
    seed: u64,
    progress: Option<Bound<'py, PyAny>>,
    calibration: Option<Bound<'py, PyDict>>,
    schedule: Option<Bound<'py, PyDict>>,
    first_chain: u64,
    resume: Option<Bound<'py, ChainStates>>,
    mcem: Option<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let kind = settings::parse(sampler, Some(&settings))?;
    let schedule = schedule.as_ref().map(settings::schedule).transpose()?;
    let resume = resume.map(|r| r.get().chains.clone());
    let mcem = match &mcem {
        Some(d) => {
            if !settings::mcem_capable(&kind) {
                return Err(errors::setting_error(
                    "mcem",
                    format!("MCEM wraps hmc, sghmc, sgnht and sgnphmc, not {sampler}"),
                ));
            }
            if calibration.is_some() {
                return Err(errors::setting_error(
                    "mcem",
                    "MCEM and calibration cannot be combined".into(),
                ));
            }
            Some(settings::mcem(d)?)
        }
        None => None,
    };
    let spec = spec_of(&model)?;
    let calibration = match &calibration {
        Some(c) => {
            let params = settings::calibration(c)?;
            if !settings::calibratable(&kind) {
                return Err(errors::setting_error(
                    "calibration",
                    format!(
                        "calibration wraps sghmc, sgnht, msgnht, sgmgt and sgmgt_d, not {sampler}"
                    ),
                ));
            }
            if !matches!(spec, Spec::Builtin(ref m) if m.has_examples()) {
                return Err(errors::setting_error(
                    "calibration",
                    "calibration needs the per-example gradients of a built-in data model \
                     (LogisticRegression, LinearRegression, GaussianMean)"
                        .into(),
                ));
            }
            Some(params)
        }
        None => None,
    };
    if kind.needs_energy() && !spec.has_energy() {
        return Err(errors::setting_error(
            "energy",
            format!("{sampler} needs the potential U(θ): give the model an energy function"),
        ));
    }
    if kind.needs_hessian_diagonal() && !spec.has_hessian_diagonal() {
        return Err(errors::setting_error(
            "hessian_diagonal",
            "pSGLD's Γ correction (correction=True) needs the diagonal of ∇²U(θ): give the \
             model a hessian_diagonal function"
                .into(),
        ));
    }
    if let (Kind::Hmc(_), Spec::Builtin(m)) = (&kind, &spec)
        && !m.full_batch()
    {
        return Err(errors::setting_error(
            "batch_size",
            "HMC's Metropolis test needs the full-data potential: build the model with \
             batch_size=None"
                .into(),
        ));
    }
    if thin == 0 {
        return Err(errors::setting_error("thin", "thin must be ≥ 1".into()));
    }
    let shape = init.shape();
    let (chains, dim) = (shape[0], shape[1]);
    if chains == 0 || dim == 0 {
        return Err(errors::layout_error(
            "init",
            format!("init must have shape (chains ≥ 1, dim ≥ 1), not {shape:?}"),
        ));
    }
    if let Some(d) = model_dim(&model)
        && d != dim
    {
        return Err(errors::layout_error(
            "init",
            format!("init has {dim} columns, the model {d} parameters"),
        ));
    }
    let init: Vec<f64> = init.as_array().iter().copied().collect();
    if let Some(i) = init.iter().position(|v| !v.is_finite()) {
        return Err(errors::layout_error(
            "init",
            format!(
                "init holds a non-finite value at chain {}, index {}",
                i / dim,
                i % dim
            ),
        ));
    }
    if let Some(saved) = &resume {
        // A state resumes only under the wrapper it was saved with (an MCEM mass's shape is
        // checked by the restore, as the checkpoint's length).
        let wrapper = |state: &SavedScalars| match state {
            SavedScalars::Plain(_) => "neither calibration nor mcem",
            SavedScalars::Calibrated(_) => "calibration",
            SavedScalars::Mcem(_) => "mcem",
        };
        let this_run = match (&calibration, &mcem) {
            (Some(_), _) => "calibration",
            (None, Some(_)) => "mcem",
            (None, None) => "neither calibration nor mcem",
        };
        if let Some(c) = saved.iter().find(|c| wrapper(&c.state) != this_run) {
            return Err(errors::setting_error(
                "resume",
                format!(
                    "the state was saved from a run with {}; resume it with the same, not {this_run}",
                    wrapper(&c.state)
                ),
            ));
        }
        if saved.len() != chains {
            return Err(errors::layout_error(
                "init",
                format!("resuming {} chains with init for {chains}", saved.len()),
            ));
        }
        if let Some(c) = saved.iter().find(|c| c.position.len() != dim) {
            return Err(errors::layout_error(
                "init",
                format!(
                    "the saved chains have {} parameters, init {dim}",
                    c.position.len()
                ),
            ));
        }
        // A sequence of minibatches drawn here (a built-in data model's, or a C function's
        // given `examples`) continues only from one over as many examples.
        let examples = match &spec {
            Spec::Builtin(m) => match &**m {
                crate::models::Builtin::Data(d) => Some(d.examples),
                crate::models::Builtin::Gaussian(_) => None,
            },
            Spec::C(c) => c.rows.map(|r| r.examples),
            Spec::Python(_) => None,
        };
        if let Some(n) = examples {
            let rng = minibatch_rng(0, 0);
            let fits = |c: &SavedChain| {
                c.minibatches.as_ref().is_some_and(|s| {
                    Minibatches::new(n, None, false, rng.clone())
                        .resumed(s)
                        .is_some()
                })
            };
            if let Some(c) = saved.iter().position(|c| !fits(c)) {
                return Err(errors::layout_error(
                    "resume",
                    format!(
                        "chain {c} was not saved from a model whose minibatches sgmcmc draws \
                         from {n} examples: its minibatch sequence cannot continue here"
                    ),
                ));
            }
        }
    }
    let plan = Plan {
        warmup,
        draws,
        thin,
        schedule,
    };
    let total_steps = (warmup + draws * thin) * chains as u64;
    let stop = AtomicBool::new(false);
    let counters: Vec<AtomicU64> = (0..chains).map(|_| AtomicU64::new(0)).collect();
    let finished = AtomicU64::new(0);
    let mut interrupted = false;
    let mut callback_error: Option<PyErr> = None;
    let progress: Option<Py<PyAny>> = progress.map(Bound::unbind);
    let setup = Setup {
        kind: &kind,
        calibration: calibration.as_ref(),
        mcem: mcem.as_ref(),
        spec: &spec,
        seed,
        plan: &plan,
    };
    // One thread per chain, except for a Python gradient: every call needs the GIL, so its
    // chains take turns on one thread (4 chains on 4 threads, contending for the GIL, took 2.5×
    // as long per step as one chain). That thread stays attached to Python and detaches around
    // the steps, so each call re-takes the GIL without creating a thread state (15 µs a call).
    let groups: Vec<Vec<usize>> = if matches!(spec, Spec::Python(_)) {
        vec![(0..chains).collect()]
    } else {
        (0..chains).map(|c| vec![c]).collect()
    };
    let python = matches!(spec, Spec::Python(_));
    let outputs: Vec<ChainOutput> = py.detach(|| {
        // Woken by the last chain to finish, so that a run is not rounded up to the next 50 ms
        // (a 4 × 26 000-step SGNHT on Pima took 0.085 s and returned at 0.1 s).
        let waiter = std::thread::current();
        std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .iter()
                .map(|group| {
                    let (setup, init, resume, stop, counters, finished, waiter) = (
                        &setup,
                        &init,
                        resume.as_deref(),
                        &stop,
                        &counters,
                        &finished,
                        &waiter,
                    );
                    scope.spawn(move || {
                        let run =
                            || run_chains(setup, group, first_chain, init, resume, stop, counters);
                        let outs = if python {
                            Python::attach(|py| py.detach(run))
                        } else {
                            run()
                        };
                        let before = finished.fetch_add(group.len() as u64, Ordering::Release);
                        if before + group.len() as u64 == chains as u64 {
                            waiter.unpark();
                        }
                        outs
                    })
                })
                .collect();
            // The main thread holds no GIL while it waits; every 50 ms it takes it to report
            // progress and to see a Ctrl-C (Python runs signal handlers on the main thread).
            while finished.load(Ordering::Acquire) < chains as u64 {
                // Returns at the last chain's `unpark` (or a token it left before we parked),
                // after 50 ms, or spuriously: the loop re-reads `finished` either way.
                std::thread::park_timeout(Duration::from_millis(50));
                if finished.load(Ordering::Acquire) == chains as u64 {
                    break;
                }
                Python::attach(|py| {
                    if let Err(e) = py.check_signals() {
                        if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                            interrupted = true;
                        } else {
                            callback_error.get_or_insert(e);
                        }
                        stop.store(true, Ordering::Relaxed);
                    }
                    if let Some(p) = &progress {
                        let done: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                        if let Err(e) = p.bind(py).call1((done, total_steps)) {
                            callback_error.get_or_insert(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                });
            }
            handles
                .into_iter()
                .zip(&groups)
                .flat_map(|(h, group)| {
                    h.join()
                        .unwrap_or_else(|_| group.iter().map(|_| ChainOutput::default()).collect())
                })
                .collect()
        })
    });
    if let Some(p) = &progress {
        let done: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        p.bind(py).call1((done, total_steps))?;
    }
    if let Some(e) = callback_error {
        return Err(e);
    }
    let result = collect(py, &outputs, dim, interrupted)?;
    if outputs.iter().all(|o| o.learned.is_some()) {
        let mut inverse_mass = Vec::with_capacity(outputs.len() * dim);
        let mut m_steps = Vec::with_capacity(outputs.len());
        for o in &outputs {
            if let Some((m, k)) = &o.learned {
                inverse_mass.extend_from_slice(m);
                m_steps.push(*k);
            }
        }
        result.set_item(
            "inverse_mass",
            // (chains, d) for a diagonal M⁻¹, (chains, d, d) for a dense one.
            if inverse_mass.len() == outputs.len() * dim * dim && dim > 1 {
                PyArray1::from_vec(py, inverse_mass)
                    .reshape([outputs.len(), dim, dim])?
                    .into_any()
            } else {
                PyArray1::from_vec(py, inverse_mass)
                    .reshape([outputs.len(), dim])?
                    .into_any()
            },
        )?;
        result.set_item("m_steps", m_steps)?;
    }
    if outputs.iter().all(|o| o.saved.is_some()) {
        let state = ChainStates {
            sampler: sampler.to_string(),
            chains: outputs.iter().filter_map(|o| o.saved.clone()).collect(),
        };
        result.set_item("state", Bound::new(py, state)?)?;
    }
    for (c, out) in outputs.into_iter().enumerate() {
        if let Some(failure) = out.failure {
            let err = match failure {
                Failure::Build(e) => return Err(build_error(e)),
                Failure::Source {
                    step,
                    error: SourceError::Python(e),
                } => {
                    let err = errors::StepError::new_err(format!(
                        "chain {c}, step {step}: the gradient function raised: {}",
                        e.value(py)
                    ));
                    err.set_cause(py, Some(e));
                    (err, step)
                }
                Failure::Step { step, error } => (
                    errors::StepError::new_err(format!("chain {c}, step {step}: {error}")),
                    step,
                ),
            };
            let (err, step) = err;
            let value = err.value(py);
            value.setattr("chain", c)?;
            value.setattr("step", step)?;
            value.setattr("partial", &result)?;
            return Err(err);
        }
    }
    Ok(result)
}

/// The chains' outputs as a dict of arrays (chains × draws [× dim]), cut to the shortest chain
/// when the run was interrupted.
fn collect<'py>(
    py: Python<'py>,
    outputs: &[ChainOutput],
    dim: usize,
    interrupted: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let chains = outputs.len();
    let kept = outputs.iter().map(|o| o.kept).min().unwrap_or(0);
    let d = PyDict::new(py);
    let mut draws = Vec::with_capacity(chains * kept * dim);
    for o in outputs {
        draws.extend_from_slice(&o.draws[..kept * dim]);
    }
    d.set_item(
        "draws",
        PyArray1::from_vec(py, draws).reshape([chains, kept, dim])?,
    )?;
    let stat = |f: fn(&ChainOutput) -> &Vec<f64>| {
        let mut v = Vec::with_capacity(chains * kept);
        for o in outputs {
            v.extend_from_slice(&f(o)[..kept]);
        }
        PyArray1::from_vec(py, v).reshape([chains, kept])
    };
    let stats = PyDict::new(py);
    stats.set_item("step_size", stat(|o| &o.step_size)?)?;
    stats.set_item("kinetic_temperature", stat(|o| &o.kinetic_temperature)?)?;
    stats.set_item("thermostat", stat(|o| &o.thermostat)?)?;
    stats.set_item("acceptance_rate", stat(|o| &o.acceptance)?)?;
    stats.set_item("sampling_stage", stat(|o| &o.sampling_stage)?)?;
    d.set_item("sample_stats", stats)?;
    d.set_item("interrupted", interrupted)?;
    Ok(d)
}
