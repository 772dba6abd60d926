//! `blr-2d`: the eight samplers of Roychowdhury & Parthasarathy 2017 Tables 2–3 on a synthetic 2-d Bayesian logistic regression, and their per-iteration times on it, Pima and Ripley (Roychowdhury & Parthasarathy 2017 §4.2).
//!
//! Data: [`crate::models::mixture_logistic::synthetic_2d`] with N = 2000 and the fixed seed
//! [`DATA_SEED`]; prior N(0, 10 I), no intercept. 10,Ding et al. 2014 burn-in iterations,
//! minibatches of 100, L = 10 leapfrog steps per iteration (Roychowdhury & Parthasarathy 2017 §4.2
//! picks L from {10, 20, 30}; its Table 3 uses 10, and so do we everywhere), [`KEPT`] recorded
//! iterations, every chain from W = 0. Step sizes from {10⁻², 10⁻⁴, 10⁻⁶} and noise terms (SGHMC's
//! A, SGNHT's A, SG-NPHMC's A = B) from {0.001, 0.01, 0.1, 1, 10}, as Roychowdhury & Parthasarathy
//! 2017 says, chosen per sampler by two tuning chains per candidate (own seeds, full burn-in, a
//! fifth of the recorded iterations) with the smallest mean [`super::mcem::tuning_score`] against
//! the reference. The -EM variants are tuned the same way over their base's grid, with a diagonal
//! mass learned from M = I and an adaptive S_count starting at 300 (200 for SG-NPHMC-EM),
//! Roychowdhury & Parthasarathy 2017 §4.2.
//!
//! # Reference and RMSE
//!
//! The reference posterior is a long HMC run ([`REFERENCE_KEPT`] iterations after
//! [`REFERENCE_BURN_IN`], ε = 10⁻², L = 10, full gradients), reported with its acceptance rate and
//! its Monte Carlo standard error sd/√ESS; it is checked against a 2-d quadrature of the exact
//! posterior on a 301 × 301 grid over the Laplace mode ± 8 Laplace sds (the two agree to within
//! the run's Monte Carlo error, printed in the report). Then for each method and weight Wⱼ:
//!
//! * **RMSE(Wⱼ)** = √(mean over post-burn-in samples of (W_sj − W̄ⱼ)²), W̄ the reference posterior
//!   mean: how far the samples lie from the posterior mean. A sampler drawing from the posterior
//!   scores its posterior sd (the "reference" row); less means under-dispersed samples.
//! * **error of the posterior mean**: √(mean over runs of (sample mean − W̄ⱼ)²).
//! * **sd ratio**: sample sd / reference sd.
//!
//! Roychowdhury & Parthasarathy 2017 does not define its RMSE; we cannot tell whether its numbers
//! are against the reference mean or the generating W = [1, −1], so the generating-value RMSE is in
//! the CSV as well, and so is **reading 2**: |post-burn-in mean − W_true,j|, the error of the
//! posterior-mean estimate about the generating weight, which an exact sampler scores at
//! |E[Wⱼ | data] − W_true,j| — a property of the data set, not of the sampler.
//!
//! # Spread over data sets and label readings
//!
//! Reading 2 varies from data set to data set by about a posterior sd, so one data set cannot
//! place a printed value. [`exact_spread`] computes the quadrature posterior of
//! [`SPREAD_SETS`] fresh data sets (seeds [`SPREAD_SEED`] + k) and every method runs one chain at
//! its tuned setting (tuned on the main data set) on the first [`SPREAD_RUNS`] of them
//! ([`super::mcem::run_on_data_sets`]); [`spread_report_table`] gives both readings' median and
//! spread, [`paper_table`] where the paper's printed values fall in the exact posterior's
//! distribution. [`label_checks`] labels the main data set's inputs in the three ways "classify
//! with W = [1, −1]" can be read ([`LabelReading`]) and gives each posterior by quadrature.
//!
//! # Times (Table 3)
//!
//! One timing chain per method and data set, single-threaded, one after the other: synthetic,
//! Pima (training split, 426 × 8 with intercept) and Ripley (250 × 7, cubic basis), as loaded by
//! [`crate::models::logistic_regression::DataSet::load`]. The paper's Australian credit (690 × 14)
//! and Heart (270 × 13) sets are not in `harness/data`; Pima and Ripley stand in for them, so
//! the ratios in those columns compare different data sets of similar size.

use super::common::{ExperimentError, RunOptions, sig};
use super::mcem::{
    ChainPlan, ExactSet, Method, MethodRow, Settings, SpreadRow, TIMING_REPEATS, TuningRow,
    accuracy_cells, as_is, cell, paper_percentile_table, plot_marginal, reading2_cell, run_chain,
    run_on_data_sets, settings_cell, spread_table, time_method, tune_and_run, tuning_report,
};
use crate::diagnostics::ess;
use crate::models::LogisticRegression;
use crate::models::logistic_regression::{DataSet, PRIOR_VARIANCE, data_dir};
use crate::models::mixture_logistic::{
    LabelReading, TRUE_WEIGHTS, misclassified, synthetic_2d, synthetic_2d_labelled,
};
use crate::plot::Series;
use crate::report::Table;

/// Data points N (Roychowdhury & Parthasarathy 2017 §4.2).
pub const N: usize = 2000;
/// Seed of the synthetic data set (fixed).
pub const DATA_SEED: u64 = 4002;
/// Minibatch size (Roychowdhury & Parthasarathy 2017 §4.2).
pub const BATCH: usize = 100;
/// Leapfrog steps per iteration (Roychowdhury & Parthasarathy 2017 Table 3's setting).
pub const LEAPFROG: u32 = 10;
/// Burn-in iterations (Roychowdhury & Parthasarathy 2017 §4.2).
pub const BURN_IN: usize = 10_000;
/// Recorded iterations (our choice; the paper does not say).
pub const KEPT: usize = 10_000;
/// Step sizes tried (Roychowdhury & Parthasarathy 2017 §4.2).
pub const STEPS: [f64; 3] = [1e-2, 1e-4, 1e-6];
/// Noise terms tried (Roychowdhury & Parthasarathy 2017 §4.2).
pub const NOISES: [f64; 5] = [0.001, 0.01, 0.1, 1.0, 10.0];
/// Reference run: HMC step.
pub const REFERENCE_STEP: f64 = 1e-2;
/// Reference run: burn-in iterations.
pub const REFERENCE_BURN_IN: usize = 2_000;
/// Reference run: recorded iterations.
pub const REFERENCE_KEPT: usize = 50_000;
/// Quadrature points per axis of the exact check (151 with `--quick`).
pub const QUADRATURE_POINTS: usize = 301;
/// Initial W.
pub const INIT: [f64; 2] = [0.0, 0.0];
/// Simulated data sets of the exact posterior's spread (a quadrature each; 20 with `--quick`).
pub const SPREAD_SETS: usize = 100;
/// Quadrature points per axis for the spread (41 with `--quick`). The midpoint rule on a
/// smooth, near-Gaussian integrand is spectrally accurate: at a spacing of 16/101 sd its error
/// is of order exp(−2π²(101/16)²), so 101 points give the 301-point moments to rounding (the
/// report prints the two on the main data set).
pub const SPREAD_QUADRATURE: usize = 101;
/// The first this many spread data sets are also sampled by every method (one chain each; 2
/// with `--quick`).
pub const SPREAD_RUNS: usize = 8;
/// Data set k of the spread is drawn with seed `SPREAD_SEED + k` (disjoint from [`DATA_SEED`]).
pub const SPREAD_SEED: u64 = 6001;
/// Half-width of the quadrature box in Laplace sds. The sign reading's posterior is limited by
/// the prior alone along W's direction and skewed, so its box is wider ([`SIGN_WIDTH`]);
/// [`LabelCheck::edge`] shows whether it was wide enough.
pub const WIDTH: f64 = 8.0;
/// Half-width of the sign reading's quadrature box, in whitened Laplace sds.
pub const SIGN_WIDTH: f64 = 16.0;

/// Roychowdhury & Parthasarathy 2017 Table 2 (RMSE W₀, W₁) and Table 3 (ms per iteration:
/// synthetic, Australian, Heart). (The paper's SG-NPHMC-EM row stands beside both of ours.)
pub const PAPER: [(Method, [f64; 2], [f64; 3]); 9] = [
    (Method::Hmc, [0.0456, 0.1290], [1.435, 0.987, 0.791]),
    (Method::HmcEm, [0.0145, 0.0851], [1.428, 0.970, 0.799]),
    (Method::Sghmc, [0.2812, 0.2717], [0.200, 0.136, 0.112]),
    (Method::SghmcEm, [0.2804, 0.2583], [0.203, 0.141, 0.131]),
    (Method::SgNphmc, [0.4945, 0.4263], [0.731, 0.512, 0.403]),
    (Method::SgNphmcEm, [0.0990, 0.4229], [0.803, 0.525, 0.426]),
    (Method::Sgnht, [0.2035, 0.1921], [0.302, 0.270, 0.166]),
    (Method::SgnhtEm, [0.1983, 0.1729], [0.306, 0.251, 0.175]),
    (
        Method::SgNphmcEmPrinted,
        [0.0990, 0.4229],
        [0.803, 0.525, 0.426],
    ),
];

/// S_count of a method (Roychowdhury & Parthasarathy 2017 §4.2: 300, and 200 for SG-NPHMC-EM).
fn s_count(method: Method) -> usize {
    if method.base() == Method::SgNphmc {
        200
    } else {
        300
    }
}

fn settings(method: Method, step: f64, noise: f64) -> Settings {
    Settings {
        step,
        noise,
        leapfrog: LEAPFROG,
        batch: BATCH,
        s_count: s_count(method),
    }
}

/// Step sizes tried by `--quick` (a smoke test: 10⁻⁶ cannot reach the posterior from W = 0
/// within its 1000 burn-in iterations).
pub const QUICK_STEPS: [f64; 2] = [1e-2, 1e-4];
/// Noise terms tried by `--quick`.
pub const QUICK_NOISES: [f64; 2] = [0.01, 1.0];

/// The tuning candidates of a method (an -EM variant has its base's grid); the reduced grid for
/// `--quick`.
fn candidates(method: Method, quick: bool) -> Vec<Settings> {
    let (steps, noises): (&[f64], &[f64]) = if quick {
        (&QUICK_STEPS, &QUICK_NOISES)
    } else {
        (&STEPS, &NOISES)
    };
    match method.base() {
        Method::Hmc => steps.iter().map(|&h| settings(method, h, 0.0)).collect(),
        _ => steps
            .iter()
            .flat_map(|&h| noises.iter().map(move |&a| settings(method, h, a)))
            .collect(),
    }
}

/// Lengths of one run of the experiment.
#[derive(Clone, Copy, Debug)]
pub struct Lengths {
    /// Burn-in iterations.
    pub burn_in: usize,
    /// Recorded iterations.
    pub kept: usize,
    /// Recorded iterations of the reference run.
    pub reference: usize,
    /// Recorded iterations of a timing chain.
    pub timed: usize,
    /// Quadrature points per axis.
    pub quadrature: usize,
    /// Data sets of the exact spread.
    pub spread_sets: usize,
    /// Quadrature points per axis on each of them.
    pub spread_quadrature: usize,
    /// Data sets every method is run on.
    pub spread_runs: usize,
}

impl Lengths {
    /// The paper-sized run, or the `--quick` one.
    pub fn of(opts: &RunOptions) -> Self {
        if opts.quick {
            Lengths {
                burn_in: 1000,
                kept: 1000,
                reference: 3000,
                timed: 100,
                quadrature: 151,
                spread_sets: 20,
                spread_quadrature: 41,
                spread_runs: 2,
            }
        } else {
            Lengths {
                burn_in: BURN_IN,
                kept: KEPT,
                reference: REFERENCE_KEPT,
                timed: 2000,
                quadrature: QUADRATURE_POINTS,
                spread_sets: SPREAD_SETS,
                spread_quadrature: SPREAD_QUADRATURE,
                spread_runs: SPREAD_RUNS,
            }
        }
    }
}

/// The reference posterior summary.
#[derive(Clone, Debug)]
pub struct Reference {
    /// Posterior means of the long HMC run.
    pub mean: [f64; 2],
    /// Posterior sds of the long HMC run.
    pub sd: [f64; 2],
    /// Its Monte Carlo standard errors of the means, sd/√ESS.
    pub mcse: [f64; 2],
    /// Its mean acceptance rate.
    pub acceptance: f64,
    /// Quadrature means.
    pub quadrature_mean: [f64; 2],
    /// Quadrature sds.
    pub quadrature_sd: [f64; 2],
    /// Quadrature marginal densities of W₀ and W₁ on their grids.
    pub marginals: [Vec<(f64, f64)>; 2],
    /// The same moments by the spread's coarser quadrature ([`SPREAD_QUADRATURE`] points), to
    /// show that it is converged.
    pub coarse: ExactSet,
}

/// Per-iteration times of one method on the three data sets.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Method.
    pub method: Method,
    /// ms per iteration on synthetic, Pima, Ripley (or why not).
    pub ms: [Result<f64, String>; 3],
}

/// The experiment's result.
#[derive(Clone, Debug)]
pub struct Blr2d {
    /// The reference.
    pub reference: Reference,
    /// One row per method, in [`Method::ALL`]'s order.
    pub rows: Vec<MethodRow>,
    /// Every tuning candidate.
    pub tuning: Vec<TuningRow>,
    /// Times on the three data sets.
    pub timings: Vec<Timing>,
    /// The three label readings on the main data set's inputs.
    pub labels: Vec<LabelCheck>,
    /// Quadrature posterior mean and sd of W on the simulated data sets of the spread.
    pub exact_sets: Vec<ExactSet>,
    /// Every method at its tuned setting on the first `lengths.spread_runs` of them.
    pub spread: Vec<SpreadRow>,
    /// Lengths used.
    pub lengths: Lengths,
}

/// Posterior means, sds and the two marginal densities, by [`quadrature`].
pub type Quadrature = ([f64; 2], [f64; 2], [Vec<(f64, f64)>; 2]);

/// The exact posterior moments and marginals by quadrature on an n × n grid over the Laplace
/// mode ± `width` Laplace sds (midpoint rule; for `width` = 8 the posterior mass outside is
/// < 10⁻¹⁴ for a near-Gaussian posterior), and the share of the weight on the grid's outer ring
/// of cells (near 0 when the box holds the posterior). `None` if the Laplace approximation fails.
pub fn quadrature(model: &LogisticRegression, n: usize, width: f64) -> Option<(Quadrature, f64)> {
    let lap = model.laplace()?;
    let axis = |j: usize| -> Vec<f64> {
        let (lo, hi) = (
            lap.mode[j] - width * lap.sd[j],
            lap.mode[j] + width * lap.sd[j],
        );
        (0..n)
            .map(|i| lo + (hi - lo) * (i as f64 + 0.5) / n as f64)
            .collect()
    };
    let (a0, a1) = (axis(0), axis(1));
    let u0 = model.potential(&lap.mode);
    let mut m0 = vec![0.0; n];
    let mut m1 = vec![0.0; n];
    let mut edge = 0.0;
    for (i, &w0) in a0.iter().enumerate() {
        for (k, &w1) in a1.iter().enumerate() {
            let w = (u0 - model.potential(&[w0, w1])).exp();
            m0[i] += w;
            m1[k] += w;
            if i == 0 || k == 0 || i == n - 1 || k == n - 1 {
                edge += w;
            }
        }
    }
    let moments = |axis: &[f64], m: &[f64]| {
        let z: f64 = m.iter().sum();
        let mean = axis.iter().zip(m).map(|(x, w)| x * w).sum::<f64>() / z;
        let var = axis
            .iter()
            .zip(m)
            .map(|(x, w)| (x - mean).powi(2) * w)
            .sum::<f64>()
            / z;
        let dx = axis[1] - axis[0];
        let density: Vec<(f64, f64)> = axis
            .iter()
            .zip(m)
            .map(|(x, w)| (*x, w / (z * dx)))
            .collect();
        (mean, var.sqrt(), density)
    };
    let (mean0, sd0, d0) = moments(&a0, &m0);
    let (mean1, sd1, d1) = moments(&a1, &m1);
    let z: f64 = m0.iter().sum();
    Some((([mean0, mean1], [sd0, sd1], [d0, d1]), edge / z))
}

/// Posterior mean and sd of W by the midpoint rule on an n × n grid in the Laplace
/// approximation's whitened coordinates, W = ŵ + L z with L Lᵀ = H⁻¹ and z ∈ [−width, width]², and
/// the share of the weight on the grid's outer ring. Unlike [`quadrature`]'s axis-aligned box the
/// grid follows the posterior's correlation, which for separable labels is close to −1: a narrow
/// ridge along W's direction that an axis-aligned grid under-resolves. `None` if the Laplace
/// approximation fails.
pub fn whitened_moments(
    model: &LogisticRegression,
    n: usize,
    width: f64,
) -> Option<([f64; 2], [f64; 2], f64)> {
    let lap = model.laplace()?;
    let h = model.hessian(&lap.mode);
    let det = h[0] * h[3] - h[1] * h[2];
    if !(det > 0.0 && h[0] > 0.0) {
        return None;
    }
    // H⁻¹ and its Cholesky factor (2 × 2 by hand).
    let (c00, c01, c11) = (h[3] / det, -h[1] / det, h[0] / det);
    let l00 = c00.sqrt();
    let l10 = c01 / l00;
    let l11 = (c11 - l10 * l10).sqrt();
    if !l11.is_finite() {
        return None;
    }
    let u0 = model.potential(&lap.mode);
    let z = |i: usize| -width + 2.0 * width * (i as f64 + 0.5) / n as f64;
    let (mut total, mut edge) = (0.0, 0.0);
    let (mut s, mut ss) = ([0.0; 2], [0.0; 2]);
    for i in 0..n {
        for k in 0..n {
            let (a, b) = (z(i), z(k));
            let w = [lap.mode[0] + l00 * a, lap.mode[1] + l10 * a + l11 * b];
            let p = (u0 - model.potential(&w)).exp();
            total += p;
            for j in 0..2 {
                s[j] += p * w[j];
                ss[j] += p * w[j] * w[j];
            }
            if i == 0 || k == 0 || i == n - 1 || k == n - 1 {
                edge += p;
            }
        }
    }
    let mean = [s[0] / total, s[1] / total];
    let sd = [0, 1].map(|j| (ss[j] / total - mean[j] * mean[j]).max(0.0).sqrt());
    Some((mean, sd, edge / total))
}

/// The exact posterior mean and sd of W by an n-point [`quadrature`] ± [`WIDTH`] Laplace sds.
pub fn exact_set(model: &LogisticRegression, n: usize) -> Option<ExactSet> {
    quadrature(model, n, WIDTH).map(|((mean, sd, _), _)| ExactSet {
        mean: mean.to_vec(),
        sd: sd.to_vec(),
    })
}

/// The quadrature posteriors of data sets `SPREAD_SEED + k`, k < `sets` (in parallel);
/// `None` for a data set whose Laplace approximation failed.
pub fn exact_spread(sets: usize, n: usize) -> Vec<Option<ExactSet>> {
    use rayon::prelude::*;
    (0..sets)
        .into_par_iter()
        .map(|k| exact_set(&synthetic_2d(N, SPREAD_SEED + k as u64), n))
        .collect()
}

/// One label reading of the synthetic data, on the main data set's inputs.
#[derive(Clone, Debug)]
pub struct LabelCheck {
    /// The reading.
    pub reading: LabelReading,
    /// Share of positive labels.
    pub positive_rate: f64,
    /// Points the classifier sign(Wᵀx) with the generating W gets wrong (0: separable by W).
    pub misclassified: usize,
    /// Quadrature posterior mean of W (prior N(0, 10 I)).
    pub mean: [f64; 2],
    /// Quadrature posterior sd of W.
    pub sd: [f64; 2],
    /// Share of the quadrature weight on the box's outer ring.
    pub edge: f64,
}

impl LabelCheck {
    /// |E Wⱼ − W_true,j| / sd Wⱼ: how many posterior sds the generating W lies from the mean.
    pub fn distance_in_sds(&self) -> [f64; 2] {
        [0, 1].map(|j| (self.mean[j] - TRUE_WEIGHTS[j]).abs() / self.sd[j])
    }
}

/// The three readings of the labels ([`LabelReading`]) on the inputs of data seed `seed`, each
/// posterior's moments by [`whitened_moments`] on an n × n grid (± [`SIGN_WIDTH`] whitened Laplace
/// sds for the sign reading, ± [`WIDTH`] for the others). `None` if a Laplace approximation failed.
pub fn label_checks(seed: u64, n: usize) -> Option<Vec<LabelCheck>> {
    LabelReading::ALL
        .into_iter()
        .map(|reading| {
            let model = synthetic_2d_labelled(N, seed, reading);
            let width = if reading == LabelReading::Sign {
                SIGN_WIDTH
            } else {
                WIDTH
            };
            let (mean, sd, edge) = whitened_moments(&model, n, width)?;
            Some(LabelCheck {
                reading,
                positive_rate: model.data.y.iter().sum::<f64>() / model.len() as f64,
                misclassified: misclassified(&model, &TRUE_WEIGHTS),
                mean,
                sd,
                edge,
            })
        })
        .collect()
}

fn reference(
    model: &LogisticRegression,
    lengths: &Lengths,
    opts: &RunOptions,
) -> Result<Reference, ExperimentError> {
    let ((quadrature_mean, quadrature_sd, marginals), _) =
        quadrature(model, lengths.quadrature, WIDTH).ok_or_else(|| {
            ExperimentError::Invalid("the Laplace approximation failed (Hessian not SPD)".into())
        })?;
    let coarse = exact_set(model, lengths.spread_quadrature).ok_or_else(|| {
        ExperimentError::Invalid("the Laplace approximation failed (Hessian not SPD)".into())
    })?;
    let plan = ChainPlan {
        init: &INIT,
        burn_in: REFERENCE_BURN_IN.min(lengths.reference),
        kept: lengths.reference,
        seed: opts.chain_seed(999, 0),
        report: as_is,
    };
    let chain = run_chain(
        model,
        Method::Hmc,
        &settings(Method::Hmc, REFERENCE_STEP, 0.0),
        &plan,
    )
    .map_err(|e| ExperimentError::Invalid(format!("reference run: {e}")))?;
    let mut mean = [0.0; 2];
    let mut sd = [0.0; 2];
    let mut mcse = [0.0; 2];
    for j in 0..2 {
        (mean[j], sd[j]) = chain.mean_sd(j);
        let e = ess(&[chain.coordinate(j)])
            .map_err(|e| ExperimentError::Invalid(format!("reference ESS: {e}")))?;
        mcse[j] = sd[j] / e.ess.sqrt();
    }
    Ok(Reference {
        mean,
        sd,
        mcse,
        acceptance: chain.acceptance.unwrap_or(f64::NAN),
        quadrature_mean,
        quadrature_sd,
        marginals,
        coarse,
    })
}

/// Runs the experiment; writes `blr-2d.csv`, `blr-2d-times.csv`, `blr-2d-tuning.csv` and
/// `blr-2d-w0.png`, `blr-2d-w1.png` (sample histograms against the quadrature marginals).
pub fn run(opts: &RunOptions) -> Result<Blr2d, ExperimentError> {
    opts.prepare()?;
    let model = synthetic_2d(N, DATA_SEED);
    let lengths = Lengths::of(opts);
    let reference = reference(&model, &lengths, opts)?;
    let plan = |seed: u64| ChainPlan {
        init: &INIT,
        burn_in: lengths.burn_in,
        kept: lengths.kept,
        seed,
        report: as_is,
    };
    let (tuning, rows) = tune_and_run(
        ("blr-2d", &model),
        |m| candidates(m, opts.quick),
        plan,
        opts,
        (&reference.mean, &reference.sd),
        lengths.timed,
    );

    // Table 3: times on the synthetic set (from `rows`), Pima and Ripley.
    let dir = data_dir();
    let loaded: Vec<Result<LogisticRegression, String>> = [DataSet::Pima, DataSet::Ripley]
        .into_iter()
        .map(|ds| {
            ds.load(&dir)
                .map(|(train, _)| LogisticRegression::new(train, PRIOR_VARIANCE))
                .map_err(|e| e.to_string())
        })
        .collect();
    let mut timings = Vec::new();
    for (m, row) in rows.iter().enumerate() {
        let synthetic = row.ms_per_iteration.ok_or_else(|| "not run".to_string());
        let mut ms = [synthetic, Err(String::new()), Err(String::new())];
        for (k, data) in loaded.iter().enumerate() {
            ms[k + 1] = match data {
                Err(e) => Err(e.clone()),
                Ok(data) => {
                    let init = vec![0.0; data.dim()];
                    let plan = ChainPlan {
                        init: &init,
                        burn_in: 0,
                        kept: 0,
                        seed: opts.chain_seed(300 + m, k),
                        report: as_is,
                    };
                    time_method(data, row.method, &row.settings, &plan, lengths.timed)
                        .map_err(|e| e.to_string())
                }
            };
        }
        timings.push(Timing {
            method: row.method,
            ms,
        });
    }

    // The label readings, and the spread over data sets: the quadrature posterior on each, and
    // every method at its tuned setting on the first few.
    let labels = label_checks(DATA_SEED, lengths.spread_quadrature).ok_or_else(|| {
        ExperimentError::Invalid("label readings: a Laplace approximation failed".into())
    })?;
    let exact_sets: Vec<ExactSet> = exact_spread(lengths.spread_sets, lengths.spread_quadrature)
        .into_iter()
        .collect::<Option<_>>()
        .ok_or_else(|| ExperimentError::Invalid("spread: a Laplace approximation failed".into()))?;
    let posteriors: Vec<LogisticRegression> = (0..lengths.spread_runs.min(exact_sets.len()))
        .map(|k| synthetic_2d(N, SPREAD_SEED + k as u64))
        .collect();
    let tuned = |m: Method| {
        rows.iter()
            .find(|row| row.method == m)
            .map_or_else(|| candidates(m, opts.quick)[0], |row| row.settings)
    };
    let spread = run_on_data_sets(&posteriors, &exact_sets, &TRUE_WEIGHTS, tuned, plan, opts);
    let result = Blr2d {
        reference,
        rows,
        tuning,
        timings,
        labels,
        exact_sets,
        spread,
        lengths,
    };
    table(&result).write_csv(&opts.out.join("blr-2d.csv"))?;
    spread_report_table(&result).write_csv(&opts.out.join("blr-2d-spread.csv"))?;
    paper_table(&result).write_csv(&opts.out.join("blr-2d-paper-percentiles.csv"))?;
    labels_table(&result).write_csv(&opts.out.join("blr-2d-labels.csv"))?;
    times_table(&result).write_csv(&opts.out.join("blr-2d-times.csv"))?;
    super::mcem::tuning_table(&result.tuning).write_csv(&opts.out.join("blr-2d-tuning.csv"))?;
    plot_marginals(&result, opts)?;
    Ok(result)
}

/// Table 2: our RMSE (mean ± sd over runs) beside the paper's, with the honest columns.
pub fn table(r: &Blr2d) -> Table {
    let rf = &r.reference;
    let mut t = Table::new([
        "method",
        "step, noise",
        "paper RMSE(W0)",
        "ours RMSE(W0)",
        "paper RMSE(W1)",
        "ours RMSE(W1)",
        "mean error W0",
        "mean error W1",
        "sd ratio W0",
        "sd ratio W1",
        "RMSE vs W_true (W0, W1)",
        "reading 2 |mean − W_true| W0",
        "reading 2 |mean − W_true| W1",
        "HMC accept.",
        "learned M⁻¹ (diagonal)",
    ]);
    t.row([
        "reference (posterior sd)".to_string(),
        format!("HMC ε = {REFERENCE_STEP}"),
        "–".into(),
        sig(rf.sd[0], 3),
        "–".into(),
        sig(rf.sd[1], 3),
        "0".into(),
        "0".into(),
        "1".into(),
        "1".into(),
        format!(
            "{}, {}",
            sig(
                (rf.sd[0].powi(2) + (rf.mean[0] - TRUE_WEIGHTS[0]).powi(2)).sqrt(),
                3
            ),
            sig(
                (rf.sd[1].powi(2) + (rf.mean[1] - TRUE_WEIGHTS[1]).powi(2)).sqrt(),
                3
            )
        ),
        sig((rf.mean[0] - TRUE_WEIGHTS[0]).abs(), 3),
        sig((rf.mean[1] - TRUE_WEIGHTS[1]).abs(), 3),
        sig(rf.acceptance, 3),
        "–".into(),
    ]);
    for row in &r.rows {
        let paper = PAPER
            .iter()
            .find(|p| p.0 == row.method)
            .map_or([f64::NAN; 2], |p| p.1);
        let mut cells = vec![row.method.label().to_string(), settings_cell(row)];
        cells.extend(accuracy_cells(row, paper, rf.mean, rf.mean, rf.sd));
        cells.extend([
            if row.chains.is_empty() {
                "–".into()
            } else {
                format!(
                    "{}, {}",
                    cell(&row.rmse_about(0, TRUE_WEIGHTS[0])),
                    cell(&row.rmse_about(1, TRUE_WEIGHTS[1]))
                )
            },
            reading2_cell(row, 0, TRUE_WEIGHTS[0]),
            reading2_cell(row, 1, TRUE_WEIGHTS[1]),
            row.acceptance().map_or("–".into(), |a| sig(a, 3)),
            row.learned_inverse_mass(),
        ]);
        t.row(cells);
    }
    t
}

/// Both readings of the RMSE over simulated data sets ([`spread_table`]; reading 1 about each
/// data set's quadrature mean, as in [`table`]).
pub fn spread_report_table(r: &Blr2d) -> Table {
    spread_table(
        ["W0", "W1"],
        &r.exact_sets,
        r.lengths.spread_runs,
        &r.spread,
        TRUE_WEIGHTS,
        false,
    )
}

/// The paper's Table 2 values as percentiles of the exact posterior's spread over data sets
/// ([`paper_percentile_table`]; the printed Alg. 5 row repeats the paper's SG-NPHMC-EM).
pub fn paper_table(r: &Blr2d) -> Table {
    let paper: Vec<(Method, [f64; 2])> = PAPER
        .iter()
        .filter(|p| p.0 != Method::SgNphmcEmPrinted)
        .map(|p| (p.0, p.1))
        .collect();
    paper_percentile_table(["W0", "W1"], &r.exact_sets, &paper, TRUE_WEIGHTS, false)
}

/// The three label readings on the main data set's inputs: label rate, separability by W, the
/// quadrature posterior and its distance from the generating W.
pub fn labels_table(r: &Blr2d) -> Table {
    let mut t = Table::new([
        "labels",
        "positive rate",
        "misclassified by W",
        "posterior mean W",
        "posterior sd W",
        "|mean − W_true| / sd (W0, W1)",
        "quadrature edge weight",
    ]);
    for c in &r.labels {
        let dist = c.distance_in_sds();
        t.row([
            c.reading.label().to_string(),
            sig(c.positive_rate, 3),
            if c.misclassified == 0 {
                "0 (separable)".to_string()
            } else {
                format!("{}", c.misclassified)
            },
            format!("({}, {})", sig(c.mean[0], 4), sig(c.mean[1], 4)),
            format!("({}, {})", sig(c.sd[0], 3), sig(c.sd[1], 3)),
            format!("{}, {}", sig(dist[0], 3), sig(dist[1], 3)),
            format!("{:.1e}", c.edge),
        ]);
    }
    t
}

/// Table 3: ms per iteration, ours beside the paper's, and the ratios.
pub fn times_table(r: &Blr2d) -> Table {
    let mut t = Table::new([
        "method",
        "paper synth",
        "ours synth",
        "ratio",
        "paper Australian",
        "ours Pima",
        "ratio (Pima/Aus.)",
        "paper Heart",
        "ours Ripley",
        "ratio (Ripley/Heart)",
    ]);
    for tm in &r.timings {
        let paper = PAPER
            .iter()
            .find(|p| p.0 == tm.method)
            .map_or([f64::NAN; 3], |p| p.2);
        let mut cells = vec![tm.method.label().to_string()];
        for (paper_ms, ours) in paper.iter().zip(&tm.ms) {
            cells.push(format!("{paper_ms}"));
            match ours {
                Ok(ms) => {
                    cells.push(sig(*ms, 3));
                    cells.push(sig(ms / paper_ms, 2));
                }
                Err(e) => {
                    cells.push(if e.is_empty() {
                        "–".into()
                    } else {
                        e.clone()
                    });
                    cells.push("–".into());
                }
            }
        }
        t.row(cells);
    }
    t
}

fn plot_marginals(r: &Blr2d, opts: &RunOptions) -> Result<(), ExperimentError> {
    let rf = &r.reference;
    for j in 0..2 {
        let (lo, hi) = (rf.mean[j] - 6.0 * rf.sd[j], rf.mean[j] + 6.0 * rf.sd[j]);
        let exact: Vec<(f64, f64)> = rf.marginals[j]
            .iter()
            .copied()
            .filter(|(x, _)| *x >= lo && *x <= hi)
            .collect();
        let title = format!("blr-2d: marginal of W{j}, samples vs exact");
        plot_marginal(
            &opts.out.join(format!("blr-2d-w{j}.png")),
            &r.rows,
            j,
            (lo, hi),
            Series::truth("exact (quadrature)", exact),
            (&title, if j == 0 { "W0" } else { "W1" }),
        )?;
    }
    Ok(())
}

/// The report header: settings and the reference with its checks.
pub fn header(r: &Blr2d) -> String {
    let rf = &r.reference;
    format!(
        "blr-2d (Roychowdhury & Parthasarathy 2017 §4.2, Tables 2–3): N = {N}, batch {BATCH}, L = {LEAPFROG}, {} burn-in + {} recorded iterations, {} run(s) per method\n\
         reference: HMC ε = {REFERENCE_STEP}, L = {LEAPFROG}, {} + {} iterations, acceptance {}: mean W = ({}, {}) ± MCSE ({}, {}), sd W = ({}, {})\n\
         quadrature check: mean W = ({}, {}), sd W = ({}, {}); reference − quadrature = ({}, {}) MCSE\n\
         the spread's {}-point quadrature on this data set: mean W = ({}, {}), sd W = ({}, {})",
        r.lengths.burn_in,
        r.lengths.kept,
        r.rows.first().map_or(0, |row| row.chains.len()),
        REFERENCE_BURN_IN.min(r.lengths.reference),
        r.lengths.reference,
        sig(rf.acceptance, 3),
        sig(rf.mean[0], 4),
        sig(rf.mean[1], 4),
        sig(rf.mcse[0], 2),
        sig(rf.mcse[1], 2),
        sig(rf.sd[0], 3),
        sig(rf.sd[1], 3),
        sig(rf.quadrature_mean[0], 6),
        sig(rf.quadrature_mean[1], 6),
        sig(rf.quadrature_sd[0], 6),
        sig(rf.quadrature_sd[1], 6),
        sig((rf.mean[0] - rf.quadrature_mean[0]) / rf.mcse[0], 2),
        sig((rf.mean[1] - rf.quadrature_mean[1]) / rf.mcse[1], 2),
        r.lengths.spread_quadrature,
        sig(rf.coarse.mean[0], 6),
        sig(rf.coarse.mean[1], 6),
        sig(rf.coarse.sd[0], 6),
        sig(rf.coarse.sd[1], 6),
    )
}

/// The text the CLI prints: [`header`], Table 2, the label readings, the spread over data sets,
/// the paper's values against it, Table 3 and the tuning candidates.
pub fn report(r: &Blr2d) -> String {
    format!(
        "{}\nTable 2 (RMSE about the reference posterior mean; mean ± sd over runs):\n{}\nLabel readings on the same inputs (data seed {DATA_SEED}; {}-point quadrature, prior N(0, 10 I)):\n{}\nSpread over simulated data sets (N = {N} each, seeds {SPREAD_SEED}+k, {}-point quadrature; median [5–95 %] for the exact rows, median [range] over one chain per data set for the methods):\n{}\nThe paper's Table 2 against the exact posterior's spread (% of the {} data sets on which an exact sampler scores at most the printed value):\n{}\nTable 3 (ms per iteration, fastest of {TIMING_REPEATS} single-threaded timing chains):\n{}\n{}",
        header(r),
        table(r),
        r.lengths.spread_quadrature,
        labels_table(r),
        r.lengths.spread_quadrature,
        spread_report_table(r),
        r.exact_sets.len(),
        paper_table(r),
        times_table(r),
        tuning_report(&r.tuning)
    )
}

/// Runs the experiment and returns [`report`].
pub fn cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    run(opts).map(|r| report(&r))
}
