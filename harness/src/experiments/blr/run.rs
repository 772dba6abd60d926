//! Running `blr`'s chains: one run of a method on a data set (SGNHT or SGMGT/SGMGT-D through [`Sampler::run`]), what it records, and Table 1's rows.

use super::problem::Problem;
use super::result::{BlrResult, BlrRow, RunOut};
use super::{
    BATCH, FIRST_DIP, Method, Settings, corrected_settings, problems, protocol_length, report,
    trace_weight,
};
use crate::diagnostics::{
    DrawCollector, auroc, ess_first_dip, ess_spectral_ar, ess_unsplit, quantile,
};
use crate::experiments::common::{
    Dynamics, DynamicsSettings, ExperimentError, Progress, RunOptions, SamplerError, Start,
    run_dynamics, sgmgt_params,
};
use crate::models::logistic_regression::{DataSet, Design, add_probabilities};
use indicatif::ProgressBar;
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use sgmcmc::rng::standard_normal_f64;
use std::convert::Infallible;
use std::ops::ControlFlow;

/// Iterations, burn-in and what to observe in a run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Protocol {
    pub(super) iterations: usize,
    pub(super) burn_in: usize,
    pub(super) trace_weight: usize,
    /// Minibatch rows per gradient ([`BATCH`] but in [`batch_sweep`](super::batch_sweep);
    /// clamped to the data).
    pub(super) batch: usize,
    /// Keep every `thin`-th step after burn-in (1: every step; `blr --ess-readings` stores one
    /// draw per epoch or per 100 updates).
    pub(super) thin: usize,
    /// Return the kept draws in [`RunOut::draws`] (for estimators run after the chain).
    pub(super) keep_draws: bool,
}

impl Protocol {
    /// `iterations` steps of which `burn_in` are discarded, every step kept, minibatch `batch`.
    pub(super) fn every_step(
        iterations: usize,
        burn_in: usize,
        trace_weight: usize,
        batch: usize,
    ) -> Self {
        Protocol {
            iterations,
            burn_in,
            trace_weight,
            batch,
            thin: 1,
            keep_draws: false,
        }
    }

    /// Is `step` a kept draw?
    fn keeps(&self, step: u64) -> bool {
        let step = step as usize;
        step >= self.burn_in && (step - self.burn_in).is_multiple_of(self.thin)
    }
}

/// What a run records as it goes (an [`Observer`] of every method's sampler): the draws after
/// burn-in, the held-out predictive probabilities, the traced weight and the kinetic temperature.
struct RunObserver<'a> {
    test: &'a Design,
    protocol: Protocol,
    draws: DrawCollector,
    prob: Vec<f64>,
    trace: Vec<f64>,
    temperature: f64,
}

impl<'a> RunObserver<'a> {
    fn new(problem: &'a Problem, protocol: Protocol) -> Self {
        let test = &problem.test;
        RunObserver {
            test,
            protocol,
            draws: DrawCollector::new(test.d)
                .burn_in(protocol.burn_in)
                .thin(protocol.thin)
                .with_capacity((protocol.iterations - protocol.burn_in).div_ceil(protocol.thin)),
            prob: vec![0.0; test.len()],
            trace: Vec::with_capacity(protocol.iterations),
            temperature: 0.0,
        }
    }

    /// Evaluates the run on `problem`'s held-out rows.
    fn finish(self, problem: &Problem) -> RunOut {
        let d = self.test.d;
        let s = self.draws.len() as f64;
        let prob: Vec<f64> = self.prob.iter().map(|p| p / s).collect();
        let auc = auroc(&prob, &self.test.positives()).unwrap_or(f64::NAN);
        let draws: Vec<Vec<f64>> = (0..d).map(|j| self.draws.column(j)).collect();
        let ess: Vec<f64> = draws
            .iter()
            .map(|x| ess_unsplit(&[x]).map_or(f64::NAN, |e| e.ess))
            .collect();
        let ess_dip: Vec<f64> = draws
            .iter()
            .map(|x| ess_first_dip(x, FIRST_DIP).unwrap_or(f64::NAN))
            .collect();
        let ess_coda: Vec<f64> = draws
            .iter()
            .map(|x| ess_spectral_ar(x).map_or(f64::NAN, |e| e.ess))
            .collect();
        let mean: Vec<f64> = draws.iter().map(|x| x.iter().sum::<f64>() / s).collect();
        let ratios: Vec<f64> = draws
            .iter()
            .zip(&mean)
            .zip(&problem.laplace.sd)
            .map(|((x, m), sd)| {
                let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (s - 1.0);
                var.sqrt() / sd
            })
            .collect();
        RunOut {
            auroc: auc,
            median_ess: quantile(&ess, 0.5).unwrap_or(f64::NAN),
            median_ess_first_dip: quantile(&ess_dip, 0.5).unwrap_or(f64::NAN),
            median_ess_coda: quantile(&ess_coda, 0.5).unwrap_or(f64::NAN),
            mean,
            sd_ratio: quantile(&ratios, 0.5).unwrap_or(f64::NAN),
            temperature: self.temperature / s,
            trace: self.trace,
            draws: if self.protocol.keep_draws {
                draws
            } else {
                Vec::new()
            },
        }
    }
}

impl<S: ChainState<f64>> Observer<S, f64> for RunObserver<'_> {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let w = sampler.position();
        if (step as usize).is_multiple_of(self.protocol.thin) {
            self.trace.push(w[self.protocol.trace_weight]);
        }
        if self.protocol.keeps(step) {
            add_probabilities(self.test, w, &mut self.prob);
            self.temperature += stats.kinetic_temperature.unwrap_or(f64::NAN);
        }
        let ControlFlow::Continue(()) = self.draws.observe(step, sampler, stats);
        ControlFlow::Continue(())
    }
}

fn random_start(rng: &mut Pcg64, d: usize) -> Vec<f64> {
    (0..d).map(|_| standard_normal_f64(rng)).collect()
}

/// One run of `method` with settings `s` on `problem` from a random start θ₀ ~ N(0, I), with
/// the Euler integrator: SGNHT with p₀ ~ N(0, I) and ξ₀ = A; SGMGT with p₀ from exp(−K) and
/// ξ₀ = 0, the mean of exp(−F), the corrected rows with B̂ⱼ = ½hVⱼ at the posterior mode.
pub(super) fn run_chain(
    problem: &Problem,
    method: Method,
    s: Settings,
    protocol: Protocol,
    seed: u64,
    pb: &ProgressBar,
) -> Result<RunOut, StepError> {
    let d = problem.model.dim();
    let mut rng = Pcg64::new(seed as u128, 0xb1a);
    let theta = random_start(&mut rng, d);
    let mut grad = problem
        .model
        .stochastic_gradient(protocol.batch, seed ^ 0x5eed_ba7c);
    let mut obs = RunObserver::new(problem, protocol);
    let mut observer = Progress::new(pb, &mut obs);
    let steps = protocol.iterations;
    if method == Method::Sgnht {
        let p = random_start(&mut rng, d);
        let mut start = Start { theta, p, rng };
        let sampler = (
            Dynamics::Sgnht,
            DynamicsSettings::new(s.h, s.sigma_p, Integrator::Euler),
        );
        run_dynamics(sampler, &mut start, &mut grad, steps, &mut observer).map_err(
            |e| match e {
                SamplerError::Run(e) => e.error,
                SamplerError::Build(e) => panic!("settings are valid: {e}"),
            },
        )?;
    } else {
        let kinetic = MonomialGamma::softened(method.a(), s.c);
        let noise_estimates = method
            .corrected()
            .then(|| problem.gradient_noise(s.h, protocol.batch));
        let params = sgmgt_params(
            (s.h, kinetic, Integrator::Euler),
            (s.sigma_p, s.sigma_theta, s.sigma_xi),
            (s.resample_p, s.resample_xi),
        );
        let (mut theta, mut p, mut xi) = (theta, vec![0.0; d], vec![0.0; d]);
        let mut work = vec![0.0; Sgmgt::<f64>::workspace_len(d)];
        let mut sampler =
            Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work).expect("settings are valid");
        if let Some(b) = &noise_estimates {
            sampler
                .set_noise_estimates(b)
                .expect("corrected_settings keeps 2σ_θB̂ⱼ < 1");
        }
        sampler.resample_momentum(&mut rng);
        sampler
            .run(&mut grad, &mut rng, steps as u64, &mut observer)
            .map_err(|e| e.error)?;
    }
    drop(observer);
    Ok(obs.finish(problem))
}

/// Runs the experiment (quick: Pima only, [`QUICK_ITERATIONS`](super::QUICK_ITERATIONS) iterations, `opts.chains` runs;
/// full: all four data sets, [`ITERATIONS`](super::ITERATIONS), `opts.chains` runs — the CLI passes 5). Writes
/// `blr.csv` (the table), `blr-runs.csv` (every run) and `blr-trace-<data>.png` (one weight's
/// trace in the first run of each method) into `opts.out`.
pub fn run(opts: &RunOptions) -> Result<BlrResult, ExperimentError> {
    opts.prepare()?;
    let (iterations, burn_in) = protocol_length(opts);
    let problems = problems(opts)?;
    let configs: Vec<(usize, Method)> = (0..problems.len())
        .flat_map(|k| Method::REPORTED.map(|m| (k, m)))
        .collect();
    let outs = opts.par_chains(&configs, iterations, "blr", |_, &(k, m), c, pb| {
        let problem = &problems[k];
        let protocol =
            Protocol::every_step(iterations, burn_in, trace_weight(problem.data).0, BATCH);
        let config = DataSet::ALL
                .iter()
                .position(|x| *x == problem.data)
                .unwrap_or(0)
                * 8
                // A corrected row runs on its SGMGT-D row's seeds: paired runs.
                + Method::ALL
                    .iter()
                    .position(|x| *x == m.uncorrected())
                    .unwrap_or(0);
        let s = corrected_settings(problem, m);
        run_chain(problem, m, s, protocol, opts.chain_seed(config, c), pb)
    });
    let mut rows = Vec::new();
    for (&(k, method), outs) in configs.iter().zip(outs) {
        let problem = &problems[k];
        let s = corrected_settings(problem, method);
        let mut row = BlrRow {
            data: problem.data,
            method,
            settings: s,
            runs: Vec::new(),
            diverged: Vec::new(),
            theta_noise_excess: s.sigma_theta * problem.median_gradient_noise(s.h),
        };
        for r in outs {
            match r {
                Ok(run) => row.runs.push(run),
                Err(e) => row.diverged.push(e),
            }
        }
        rows.push(row);
    }
    let result = BlrResult {
        rows,
        iterations,
        burn_in,
        runs: opts.chains,
    };
    report::write_outputs(opts, &result)?;
    Ok(result)
}
