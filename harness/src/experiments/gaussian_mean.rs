//! `gaussian-mean`: SGHMC versus SGNHT on the mean of a 1-d Gaussian with minibatch gradients (Ding et al. 2014 §5.1, App. E, Fig. 2 and 5).
//!
//! N = 100 points from N(0, 1), known unit variance, flat prior: the posterior is N(x̄, 1/N).
//! Minibatches of Ñ = 10 points without replacement; ∇Ũ = Nμ − (N/Ñ) Σ xᵢ. The gradient noise
//! has variance ≈ N²s²(1 − Ñ/N)/Ñ ≈ 900, so a step sees noise of variance 2Bh with
//! B ≈ 450h: B ≈ 4.5 at h = 0.01 and 0.45 at h = 0.001. SGHMC (friction A, no B̂) then runs at
//! temperature ≈ (A + B)/A; SGNHT's ξ absorbs B. Both with the paper's Euler scheme by default,
//! 10⁶ samples per chain, for h ∈ {0.01, 0.001} × A ∈ {1, 10}.

use super::common::{
    DynamicsSettings, ExperimentError, Job, RunOptions, SamplerError, Start, grid, method_grid,
    run_observed, sig,
};
use crate::diagnostics::{Axis, DrawCollector, Histogram, Normalization};
use crate::models::GaussianMean;
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use sgmcmc::prelude::*;
use std::convert::Infallible;
use std::ops::ControlFlow;

/// Data points N.
pub const N: usize = 100;
/// Minibatch Ñ.
pub const BATCH: usize = 10;
/// The (h, A) settings of Ding et al. 2014, App. E.
pub const SETTINGS: [(f64, f64); 4] = [(0.01, 1.0), (0.01, 10.0), (0.001, 1.0), (0.001, 10.0)];

/// SGHMC or SGNHT (and mSGNHT, which in one dimension is SGNHT).
pub use super::common::Dynamics as Method;

/// One (method, h, A) run, pooled over chains.
#[derive(Clone, Debug)]
pub struct GaussianMeanRun {
    /// Method.
    pub method: Method,
    /// Step.
    pub h: f64,
    /// Friction / diffusion.
    pub a: f64,
    /// Mean kinetic energy p²/2 (0.5 at equilibrium).
    pub mean_kinetic: f64,
    /// Mean ξ (SGNHT) over the run.
    pub mean_xi: Option<f64>,
    /// Sample mean of μ.
    pub mean: f64,
    /// Sample sd of μ.
    pub sd: f64,
    /// KL of μ's histogram (80 bins over x̄ ± 8/√N) from N(x̄, 1/N).
    pub kl: f64,
    /// Histogram density of μ (bin centres, density).
    pub density: Vec<(f64, f64)>,
}

/// Results with the exact posterior.
#[derive(Clone, Debug)]
pub struct GaussianMeanResult {
    /// Runs, SGHMC's four settings then SGNHT's.
    pub runs: Vec<GaussianMeanRun>,
    /// Exact posterior mean x̄.
    pub exact_mean: f64,
    /// Exact posterior sd 1/√N.
    pub exact_sd: f64,
}

/// What one chain records (an [`Observer`] of every [`Method`]'s sampler).
struct ChainOut {
    samples: DrawCollector,
    sum_kinetic: f64,
    sum_xi: f64,
}

impl<S: ChainState<f64>> Observer<S, f64> for ChainOut {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let ControlFlow::Continue(()) = self.samples.observe(step, sampler, stats);
        let p = sampler.momentum()[0];
        self.sum_kinetic += 0.5 * p * p;
        self.sum_xi += stats.thermostat.unwrap_or(0.0);
        ControlFlow::Continue(())
    }
}

fn run_chain(
    model: &GaussianMean,
    method: Method,
    settings: DynamicsSettings,
    job: Job,
) -> Result<ChainOut, SamplerError> {
    let (steps, seed) = (job.steps, job.seed);
    let mut start = Start::new(&[model.posterior_mean()], seed, 0xd3);
    let mut grad = model.stochastic_gradient(seed ^ 0xba7c);
    let out = ChainOut {
        samples: DrawCollector::new(1).with_capacity(steps),
        sum_kinetic: 0.0,
        sum_xi: 0.0,
    };
    // In one dimension mSGNHT is SGNHT; this experiment runs SGHMC and SGNHT only.
    let method = match method {
        Method::MSgnht => Method::Sgnht,
        m => m,
    };
    run_observed((method, settings), &mut start, &mut grad, job, out)
}

fn normal_pdf(x: f64, m: f64, sd: f64) -> f64 {
    (-0.5 * ((x - m) / sd).powi(2)).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
}

/// Runs the experiment; writes `gaussian-mean.csv` (with the mean kinetic energy and ξ of each
/// run), `gaussian-mean-sghmc.png` and `gaussian-mean-sgnht.png` into `opts.out`.
pub fn run(
    opts: &RunOptions,
    integrator: Integrator,
) -> Result<GaussianMeanResult, ExperimentError> {
    opts.prepare()?;
    let model = GaussianMean::simulate(N, BATCH, opts.seed);
    let steps = if opts.quick { 200_000 } else { 1_000_000 };
    let methods = [Method::Sghmc, Method::Sgnht];
    let mut outs = method_grid(
        opts,
        (&methods, &SETTINGS, integrator),
        (steps, "gaussian-mean"),
        |m, s, job| run_chain(&model, m, s, job),
    )?
    .into_iter();
    let (xbar, sd0) = (model.posterior_mean(), model.posterior_sd());
    let axis = Axis::new(xbar - 8.0 * sd0, xbar + 8.0 * sd0, 80).expect("valid axis");
    let mut runs = Vec::new();
    for method in methods {
        for (h, a) in SETTINGS {
            let chains: Vec<ChainOut> = outs.next().unwrap_or_default();
            let total = (steps * chains.len()) as f64;
            let mut hist = Histogram::new(axis);
            let (mut s1, mut s2) = (0.0, 0.0);
            for c in &chains {
                let samples = c.samples.as_flat();
                hist.extend(samples)
                    .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
                s1 += samples.iter().sum::<f64>();
                s2 += samples.iter().map(|x| x * x).sum::<f64>();
            }
            let mean = s1 / total;
            let kl = hist
                .kl_divergence(|x| normal_pdf(x, xbar, sd0))
                .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
            let dens = hist
                .densities(Normalization::Normalized)
                .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
            runs.push(GaussianMeanRun {
                method,
                h,
                a,
                mean_kinetic: chains.iter().map(|c| c.sum_kinetic).sum::<f64>() / total,
                mean_xi: (method != Method::Sghmc)
                    .then(|| chains.iter().map(|c| c.sum_xi).sum::<f64>() / total),
                mean,
                sd: (s2 / total - mean * mean).max(0.0).sqrt(),
                kl,
                density: (0..axis.bins()).map(|i| axis.center(i)).zip(dens).collect(),
            });
        }
    }
    let result = GaussianMeanResult {
        runs,
        exact_mean: xbar,
        exact_sd: sd0,
    };
    table(&result).write_csv(&opts.out.join("gaussian-mean.csv"))?;
    let truth: Vec<(f64, f64)> = grid(xbar - 8.0 * sd0, xbar + 8.0 * sd0, 400)
        .into_iter()
        .map(|x| (x, normal_pdf(x, xbar, sd0)))
        .collect();
    for (method, file) in [
        (Method::Sgnht, "gaussian-mean-sgnht.png"),
        (Method::Sghmc, "gaussian-mean-sghmc.png"),
    ] {
        let mut series: Vec<Series> = result
            .runs
            .iter()
            .filter(|r| r.method == method)
            .enumerate()
            .map(|(i, r)| {
                Series::new(
                    format!("h = {}, A = {}", r.h, r.a),
                    r.density.clone(),
                    i + 1,
                )
            })
            .collect();
        series.push(Series::truth("true posterior", truth.clone()));
        let title = format!("Density of μ, {method:?} (Ding et al. 2014, Fig. 2)");
        line_chart(
            &opts.out.join(file),
            &Chart {
                title: &title,
                x_label: "μ",
                y_label: "density",
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
            },
            &series,
        )?;
    }
    Ok(result)
}

/// Our numbers per run; the paper reports them as figures (Fig. 2, 5), not as a table.
pub fn table(r: &GaussianMeanResult) -> Table {
    let mut t = Table::new([
        "method",
        "h",
        "A",
        "mean K (target 0.5)",
        "mean ξ",
        "mean μ",
        "sd μ",
        "exact mean",
        "exact sd",
        "KL",
    ]);
    for run in &r.runs {
        t.row([
            format!("{:?}", run.method),
            format!("{}", run.h),
            format!("{}", run.a),
            sig(run.mean_kinetic, 3),
            run.mean_xi.map_or("–".into(), |x| sig(x, 3)),
            sig(run.mean, 4),
            sig(run.sd, 3),
            sig(r.exact_mean, 4),
            sig(r.exact_sd, 3),
            sig(run.kl, 3),
        ]);
    }
    t
}

/// The text the CLI prints: the setting, the paper's claim and [`table`].
pub fn report(r: &GaussianMeanResult) -> String {
    format!(
        "Gaussian mean (Ding et al. 2014 §5.1): N = {N}, minibatch {BATCH}; the paper shows SGNHT accurate at every (h, A), SGHMC only at small h and large A\n{}",
        table(r)
    )
}

/// Runs the experiment and returns [`report`].
pub fn cli(opts: &RunOptions, integrator: Integrator) -> Result<String, ExperimentError> {
    run(opts, integrator).map(|r| report(&r))
}
