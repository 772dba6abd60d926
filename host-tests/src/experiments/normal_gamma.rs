//! `normal-gamma`: SGHMC versus SGNHT on the unknown mean and precision of a 1-d Gaussian (Ding et al. 2014 §5.1, App. E, Table 1).
//!
//! The model and its gradients are in [`crate::models::normal_gamma`] (with the ½ the paper's
//! printed ∂U/∂γ lacks, and γ kept positive by reflection). We use N = 100 points from N(0, 1)
//! and minibatches of Ñ = 10 (the paper does not state them for this part; these are its
//! values for the known-variance part). For each (h, A) of Table 1 and each method, 10⁶ samples
//! per chain from (μ, γ) = (0, 1), and two numbers:
//!
//! * RMSE of the density estimate: the 2-d histogram of (μ, γ) on 20 × 20 cells over μ_N ± 4 sd
//!   and E γ ± 4 sd, compared with the exact Normal–Gamma density averaged over each cell
//!   ([`crate::diagnostics::Histogram2d::rmse`]). The paper does not define its grid, so the
//!   scale of its numbers and ours may differ; the ordering between methods is comparable. The
//!   grid is coarse enough that, at 10⁶ samples, the Monte Carlo part of the RMSE is small next
//!   to the samplers' bias (a finer grid measures mostly noise).
//! * τ: the integrated autocorrelation time of μ + γ in iterations (Geyer's initial monotone
//!   sequence estimator), averaged over chains.

use super::common::{
    DynamicsSettings, ExperimentError, Job, RunOptions, SamplerError, Start, method_grid,
    run_observed, sig,
};
use crate::diagnostics::{
    Axis, DrawCollector, Histogram2d, Normalization, integrated_autocorrelation_time,
};
use crate::models::NormalGamma;
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use sgmcmc::prelude::*;

pub use super::gaussian_mean::Method;

/// Data points N (our choice; see the module docs).
pub const N: usize = 100;
/// Minibatch Ñ (our choice).
pub const BATCH: usize = 10;
/// The (h, A) columns of Ding et al. 2014, Table 1.
pub const SETTINGS: [(f64, f64); 4] = [(0.01, 1.0), (0.01, 10.0), (0.001, 1.0), (0.001, 10.0)];
/// Ding et al. 2014, Table 1: (RMSE, τ) for SGHMC, then SGNHT, per setting.
pub const PAPER: [[(f64, f64); 4]; 2] = [
    [
        (0.629, 7.19),
        (0.286, 37.68),
        (0.292, 67.83),
        (0.136, 357.14),
    ],
    [
        (0.175, 14.35),
        (0.026, 55.65),
        (0.091, 22.97),
        (0.053, 424.81),
    ],
];

/// One (method, h, A) run.
#[derive(Clone, Debug)]
pub struct NormalGammaRun {
    /// Method.
    pub method: Method,
    /// Step.
    pub h: f64,
    /// Friction / diffusion.
    pub a: f64,
    /// RMSE of the 2-d density estimate.
    pub rmse: f64,
    /// Integrated autocorrelation time of μ + γ (iterations).
    pub tau: f64,
    /// Mean kinetic temperature pᵀp/n (target 1).
    pub temperature: f64,
    /// Reflections at γ = 0 (all chains).
    pub reflections: u64,
}

/// What one chain records (an [`Observer`] of every [`Method`]'s sampler); it also reflects γ at
/// 0, keeping the precision positive.
struct ChainOut {
    draws: DrawCollector,
    sum_temperature: f64,
    reflections: u64,
}

impl<S: ChainState<f64>> Observer<S, f64> for ChainOut {
    fn observe(&mut self, step: u64, sampler: &mut S, stats: &StepStats<f64>) {
        let (th, mom) = sampler.phase_mut();
        if th[1] < 0.0 {
            self.reflections += 1;
            NormalGamma::reflect(th, mom);
        }
        self.draws.observe(step, sampler, stats);
        self.sum_temperature += stats.kinetic_temperature.unwrap_or(f64::NAN);
    }
}

fn run_chain(
    model: &NormalGamma,
    method: Method,
    settings: DynamicsSettings,
    job: Job,
) -> Result<ChainOut, SamplerError> {
    let (steps, seed) = (job.steps, job.seed);
    let mut start = Start::new(&[0.0, 1.0], seed, 0xd4);
    let mut grad = model.stochastic_gradient(seed ^ 0xba7c);
    let out = ChainOut {
        draws: DrawCollector::new(2).with_capacity(steps),
        sum_temperature: 0.0,
        reflections: 0,
    };
    run_observed((method, settings), &mut start, &mut grad, job, out)
}

/// Runs the experiment; writes `normal-gamma.csv` and `normal-gamma.png` (RMSE against τ, ours
/// and the paper's, as in Ding et al. 2014, Fig. 2's fourth panel) into `opts.out`.
pub fn run(
    opts: &RunOptions,
    integrator: Integrator,
) -> Result<Vec<NormalGammaRun>, ExperimentError> {
    opts.prepare()?;
    let model = NormalGamma::simulate(N, BATCH, opts.seed);
    let steps = if opts.quick { 200_000 } else { 1_000_000 };
    // mSGNHT is not in Table 1: it is our extra row, showing what per-coordinate thermostats do
    // with the anisotropic, state-dependent noise of this model.
    let methods = [Method::Sghmc, Method::Sgnht, Method::MSgnht];
    let mut outs = method_grid(
        opts,
        (&methods, &SETTINGS, integrator),
        (steps, "normal-gamma"),
        |m, s, job| run_chain(&model, m, s, job),
    )?
    .into_iter();
    let (mm, mg) = model.posterior_mean();
    let (sm, sg) = model.posterior_sd();
    let ax = Axis::new(mm - 4.0 * sm, mm + 4.0 * sm, 20).expect("valid axis");
    let ay = Axis::new((mg - 4.0 * sg).max(0.0), mg + 4.0 * sg, 20).expect("valid axis");
    let invalid = |e: crate::diagnostics::DiagnosticError| ExperimentError::Invalid(e.to_string());
    let mut runs = Vec::new();
    for method in methods {
        for (h, a) in SETTINGS {
            let chains: Vec<ChainOut> = outs.next().unwrap_or_default();
            let mut hist = Histogram2d::new(ax, ay).map_err(invalid)?;
            let mut tau = 0.0;
            for c in &chains {
                for row in c.draws.rows() {
                    hist.add(row[0], row[1]).map_err(invalid)?;
                }
                let sum: Vec<f64> = c.draws.rows().map(|row| row[0] + row[1]).collect();
                tau += integrated_autocorrelation_time(&sum).map_err(invalid)?;
            }
            let rmse = hist
                .rmse(|x, y| model.density(x, y), Normalization::Normalized)
                .map_err(invalid)?;
            let total = (chains.len() * steps) as f64;
            runs.push(NormalGammaRun {
                method,
                h,
                a,
                rmse,
                tau: tau / chains.len() as f64,
                temperature: chains.iter().map(|c| c.sum_temperature).sum::<f64>() / total,
                reflections: chains.iter().map(|c| c.reflections).sum(),
            });
        }
    }
    table(&runs).write_csv(&opts.out.join("normal-gamma.csv"))?;
    let mut series = Vec::new();
    for (i, method) in methods.into_iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = runs
            .iter()
            .filter(|r| r.method == method)
            .map(|r| (r.tau, r.rmse))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series::new(format!("{method:?} (ours)"), pts, i + 1));
    }
    for (m, name) in [(0, "SGHMC (paper)"), (1, "SGNHT (paper)")] {
        let mut pts: Vec<(f64, f64)> = PAPER[m].iter().map(|&(r, t)| (t, r)).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series {
            dashed: true,
            ..Series::new(name, pts, m + 1)
        });
    }
    line_chart(
        &opts.out.join("normal-gamma.png"),
        &Chart {
            title: "Normal–Gamma: RMSE of the density vs autocorrelation time of μ + γ",
            x_label: "τ (iterations)",
            y_label: "RMSE",
            x_scale: Scale::Log,
            y_scale: Scale::Log,
        },
        &series,
    )?;
    Ok(runs)
}

/// Our (RMSE, τ) beside Ding et al. 2014, Table 1.
pub fn table(runs: &[NormalGammaRun]) -> Table {
    let mut t = Table::new([
        "method",
        "h",
        "A",
        "paper (RMSE, τ)",
        "ours (RMSE, τ)",
        "kinetic temperature",
        "reflections",
    ]);
    for r in runs {
        let k = SETTINGS
            .iter()
            .position(|&(h, a)| h == r.h && a == r.a)
            .unwrap_or(0);
        let paper = match r.method {
            Method::Sghmc => format!("({}, {})", PAPER[0][k].0, PAPER[0][k].1),
            Method::Sgnht => format!("({}, {})", PAPER[1][k].0, PAPER[1][k].1),
            Method::MSgnht => "not in the paper".into(),
        };
        t.row([
            format!("{:?}", r.method),
            format!("{}", r.h),
            format!("{}", r.a),
            paper,
            format!("({}, {})", sig(r.rmse, 3), sig(r.tau, 4)),
            sig(r.temperature, 3),
            r.reflections.to_string(),
        ]);
    }
    t
}

/// The text the CLI prints: the setting and [`table`].
pub fn report(runs: &[NormalGammaRun]) -> String {
    format!(
        "Normal–Gamma (Ding et al. 2014 App. E, Table 1): N = {N}, minibatch {BATCH}\n{}",
        table(runs)
    )
}

/// Runs the experiment and returns [`report`].
pub fn cli(opts: &RunOptions, integrator: Integrator) -> Result<String, ExperimentError> {
    run(opts, integrator).map(|runs| report(&runs))
}
