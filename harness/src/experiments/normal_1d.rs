//! `normal-1d`: the eight samplers of Roychowdhury & Parthasarathy 2017 Table 1 on the mean and precision of a 1-d Gaussian (Roychowdhury & Parthasarathy 2017 §4.1).
//!
//! The model, its exact Normal–Gamma posterior and the (μ, log τ) parametrisation are in
//! [`crate::models::normal_wishart`]. N = 5000 points from N(0, 1) drawn with the fixed seed
//! [`DATA_SEED`] (the same data for every `--seed`); minibatches of 100, L = 10 leapfrog steps per
//! iteration, 5000 burn-in iterations, then [`KEPT`] recorded iterations (the paper runs "all the
//! algorithms for the same number of iterations" without saying how many). Every chain starts
//! at (μ, τ) = [`INIT`], away from the posterior (μ_N ≈ x̄, τ ≈ 1), so burn-in has work to do.
//!
//! Settings: HMC ε = 10⁻² (Roychowdhury & Parthasarathy 2017), SGHMC A = 10 and SGNHT A = 1
//! (Roychowdhury & Parthasarathy 2017) with their steps tuned over [`SG_STEPS`]; SG-NPHMC's step
//! and its A = B tuned over [`SG_STEPS`] × [`NOISES`] (Roychowdhury & Parthasarathy 2017 gives
//! neither). Tuning runs two chains per candidate (own seeds, full burn-in, a fifth of the recorded
//! iterations) and picks the smallest mean [`super::mcem::tuning_score`] (bias and mis-dispersion
//! of the marginals against the exact posterior); a candidate that diverges is out. The -EM
//! variants are tuned the same way over their base sampler's grid (HMC-EM keeps ε = 10⁻²), with a
//! diagonal mass learned from M = I and an adaptive S_count starting at 100 (Roychowdhury &
//! Parthasarathy 2017 §6.3, "100 for all other cases").
//!
//! # What is reported
//!
//! For every method and coordinate (μ, τ), over [`RUNS`] independent chains:
//!
//! * **RMSE vs truth**, the paper's number as we read it: √(mean over post-burn-in samples of
//!   (θ_s − θ_true)²) with the generating values μ = 0, τ = 1. The paper's HMC row (0.0196,
//!   0.0197) matches this for a sampler that is right: a sample from the exact posterior gives
//!   √(sd² + (mean − θ_true)²) (the "exact posterior" row), ≈ 0.014–0.02 at N = 5000. A value
//!   below that floor means under-dispersed samples, not a better sampler.
//! * **error of the posterior mean**: √(mean over runs of (sample mean − exact mean)²).
//! * **sd ratio**: sample sd / exact posterior sd (1 for a right sampler).
//! * **reading 2**: |post-burn-in mean − θ_true| per chain. An exact sampler scores
//!   |E[θ | data] − θ_true|, which is ≈ |N(0, sd²)| over data sets (median 0.674 sd): a property
//!   of the data set, not of the sampler.
//! * **time per iteration** (ms) from separate single-threaded timing chains run one after the
//!   other (not in parallel), and its ratio to the paper's (a 2.5 GHz Core i7 laptop, Roychowdhury
//!   & Parthasarathy 2017 §6.3; the paper's code is not published, so only the order of magnitude
//!   is comparable).
//!
//! # Spread over data sets
//!
//! Both readings vary from data set to data set, so one data set cannot place a printed value.
//! [`exact_spread`] gives the exact posterior of [`SPREAD_SETS`] fresh data sets (seeds
//! [`SPREAD_SEED`] + k, closed form), and every method runs one chain at its tuned setting (tuned
//! on the main data set) on the first [`SPREAD_RUNS`] of them
//! ([`super::mcem::run_on_data_sets`]); [`spread_report_table`] gives both readings' median and
//! spread, [`paper_table`] where the paper's printed values fall in the exact posterior's
//! distribution over data sets.

use super::common::{ExperimentError, RunOptions, sig};
use super::mcem::{
    BatchedPosterior, ChainPlan, ExactSet, Method, MethodRow, Settings, SpreadRow, TuningRow,
    accuracy_cells, paper_percentile_table, plot_marginal, reading2_cell, run_on_data_sets,
    settings_cell, spread_table, tune_and_run, tuning_report, tuning_table,
};
use crate::models::NormalWishart;
use crate::plot::Series;
use crate::report::Table;

/// Data points N.
pub const N: usize = 5000;
/// Seed of the data set (fixed: every run sees the same 5000 points).
pub const DATA_SEED: u64 = 4001;
/// Minibatch size of the stochastic samplers (Roychowdhury & Parthasarathy 2017 §4.1).
pub const BATCH: usize = 100;
/// Leapfrog steps per iteration (Roychowdhury & Parthasarathy 2017 §4.1).
pub const LEAPFROG: u32 = 10;
/// Burn-in iterations (Roychowdhury & Parthasarathy 2017 §4.1).
pub const BURN_IN: usize = 5000;
/// Recorded iterations after burn-in (our choice).
pub const KEPT: usize = 10_000;
/// Independent chains per method.
pub const RUNS: usize = 5;
/// Initial (μ, τ).
pub const INIT: [f64; 2] = [0.3, 1.5];
/// HMC's step (Roychowdhury & Parthasarathy 2017 §4.1: "a fairly high learning rate of 1e−2").
pub const HMC_STEP: f64 = 1e-2;
/// SGHMC's friction A (Roychowdhury & Parthasarathy 2017 §4.1).
pub const SGHMC_FRICTION: f64 = 10.0;
/// SGNHT's diffusion A (Roychowdhury & Parthasarathy 2017 §4.1).
pub const SGNHT_DIFFUSION: f64 = 1.0;
/// Step sizes tried for the stochastic samplers.
pub const SG_STEPS: [f64; 3] = [1e-2, 1e-3, 1e-4];
/// Noise terms tried for SG-NPHMC's A = B (Roychowdhury & Parthasarathy 2017 §4.2's grid).
pub const NOISES: [f64; 5] = [0.001, 0.01, 0.1, 1.0, 10.0];
/// E-step samples per M-step (Roychowdhury & Parthasarathy 2017 §6.3).
pub const S_COUNT: usize = 100;
/// The generating (μ, τ).
pub const TRUTH: [f64; 2] = [0.0, 1.0];
/// Simulated data sets of the exact posterior's spread (closed form, so many are cheap).
pub const SPREAD_SETS: usize = 200;
/// The first this many of them are also sampled by every method (one chain each; 2 with
/// `--quick`).
pub const SPREAD_RUNS: usize = 16;
/// Data set k of the spread is drawn with seed `SPREAD_SEED + k` (disjoint from [`DATA_SEED`]).
pub const SPREAD_SEED: u64 = 5001;

/// Roychowdhury & Parthasarathy 2017 Table 1: RMSE(μ), RMSE(τ), time per iteration (ms), in
/// [`Method::ALL`]'s order (the paper's SG-NPHMC-EM row beside both of ours).
pub const PAPER: [(Method, f64, f64, f64); 9] = [
    (Method::Hmc, 0.0196, 0.0197, 0.417),
    (Method::HmcEm, 0.0115, 0.0104, 0.423),
    (Method::Sghmc, 0.1590, 0.1646, 0.133),
    (Method::SghmcEm, 0.0713, 0.2243, 0.132),
    (Method::SgNphmc, 0.0326, 0.0433, 0.514),
    (Method::SgNphmcEm, 0.0274, 0.0354, 0.498),
    (Method::Sgnht, 0.0344, 0.0335, 0.148),
    (Method::SgnhtEm, 0.0317, 0.0289, 0.148),
    (Method::SgNphmcEmPrinted, 0.0274, 0.0354, 0.498),
];

/// The sampled θ = (μ, log τ) reported as (μ, τ).
fn to_mu_tau(theta: &mut [f64]) {
    theta[1] = theta[1].exp();
}

/// Lengths of one run of the experiment.
#[derive(Clone, Copy, Debug)]
pub struct Lengths {
    /// Burn-in iterations.
    pub burn_in: usize,
    /// Recorded iterations.
    pub kept: usize,
    /// Recorded iterations of a timing chain.
    pub timed: usize,
    /// Data sets every method is run on for the spread.
    pub spread_runs: usize,
}

impl Lengths {
    /// The paper-sized run, or the `--quick` one.
    pub fn of(opts: &RunOptions) -> Self {
        if opts.quick {
            Lengths {
                burn_in: 1000,
                kept: 2000,
                timed: 300,
                spread_runs: 2,
            }
        } else {
            Lengths {
                burn_in: BURN_IN,
                kept: KEPT,
                timed: 2000,
                spread_runs: SPREAD_RUNS,
            }
        }
    }
}

/// The experiment's result.
#[derive(Clone, Debug)]
pub struct Normal1d {
    /// The posterior.
    pub model: NormalWishart,
    /// One row per method, in [`Method::ALL`]'s order.
    pub rows: Vec<MethodRow>,
    /// Every tuning candidate.
    pub tuning: Vec<TuningRow>,
    /// Exact posterior mean and sd (μ, τ) of the [`SPREAD_SETS`] simulated data sets.
    pub exact_sets: Vec<ExactSet>,
    /// Every method at its tuned setting on the first `lengths.spread_runs` of them.
    pub spread: Vec<SpreadRow>,
    /// Lengths used.
    pub lengths: Lengths,
}

/// The exact posterior mean and sd of (μ, τ).
pub fn exact_set(model: &NormalWishart) -> ExactSet {
    let (em, et) = model.posterior_mean();
    let (sm, st) = model.posterior_sd();
    ExactSet {
        mean: vec![em, et],
        sd: vec![sm, st],
    }
}

/// The exact posteriors of data sets `SPREAD_SEED + k`, k < `sets`, each N points from N(0, 1).
pub fn exact_spread(sets: usize) -> Vec<ExactSet> {
    use rayon::prelude::*;
    (0..sets)
        .into_par_iter()
        .map(|k| exact_set(&NormalWishart::simulate(N, SPREAD_SEED + k as u64)))
        .collect()
}

fn base_settings(step: f64, noise: f64) -> Settings {
    Settings {
        step,
        noise,
        leapfrog: LEAPFROG,
        batch: BATCH,
        s_count: S_COUNT,
    }
}

/// The tuning candidates of a method (an -EM variant has its base's grid).
fn candidates(method: Method) -> Vec<Settings> {
    match method.base() {
        Method::Hmc => vec![base_settings(HMC_STEP, 0.0)],
        Method::Sghmc => SG_STEPS
            .iter()
            .map(|&h| base_settings(h, SGHMC_FRICTION))
            .collect(),
        Method::Sgnht => SG_STEPS
            .iter()
            .map(|&h| base_settings(h, SGNHT_DIFFUSION))
            .collect(),
        Method::SgNphmc => SG_STEPS
            .iter()
            .flat_map(|&h| NOISES.iter().map(move |&a| base_settings(h, a)))
            .collect(),
        _ => Vec::new(),
    }
}

/// Runs the experiment; writes `normal-1d.csv`, `normal-1d-tuning.csv`, `normal-1d-mu.png` and
/// `normal-1d-tau.png` (sample histograms against the exact marginals) into `opts.out`.
pub fn run(opts: &RunOptions) -> Result<Normal1d, ExperimentError> {
    opts.prepare()?;
    let model = NormalWishart::simulate(N, DATA_SEED);
    let lengths = Lengths::of(opts);
    let (em, et) = model.posterior_mean();
    let (sm, st) = model.posterior_sd();
    let init = [INIT[0], INIT[1].ln()];
    let plan = |seed: u64| ChainPlan {
        init: &init,
        burn_in: lengths.burn_in,
        kept: lengths.kept,
        seed,
        report: to_mu_tau,
    };

    let (tuning, rows) = tune_and_run(
        ("normal-1d", &model),
        candidates,
        plan,
        opts,
        (&[em, et], &[sm, st]),
        lengths.timed,
    );

    // The spread over data sets: every method at its tuned setting on fresh data sets.
    let exact_sets = exact_spread(SPREAD_SETS);
    let posteriors: Vec<NormalWishart> = (0..lengths.spread_runs.min(SPREAD_SETS))
        .map(|k| NormalWishart::simulate(N, SPREAD_SEED + k as u64))
        .collect();
    let tuned = |m: Method| {
        rows.iter()
            .find(|row| row.method == m)
            .map_or_else(|| candidates(m)[0], |row| row.settings)
    };
    let spread = run_on_data_sets(&posteriors, &exact_sets, &TRUTH, tuned, plan, opts);
    let result = Normal1d {
        model,
        rows,
        tuning,
        exact_sets,
        spread,
        lengths,
    };
    table(&result).write_csv(&opts.out.join("normal-1d.csv"))?;
    spread_report_table(&result).write_csv(&opts.out.join("normal-1d-spread.csv"))?;
    paper_table(&result).write_csv(&opts.out.join("normal-1d-paper-percentiles.csv"))?;
    tuning_table(&result.tuning).write_csv(&opts.out.join("normal-1d-tuning.csv"))?;
    plot_marginals(&result, opts)?;
    Ok(result)
}

/// Our numbers beside Roychowdhury & Parthasarathy 2017 Table 1 (RMSE vs truth as mean ± sd over
/// runs).
pub fn table(r: &Normal1d) -> Table {
    let (em, et) = r.model.posterior_mean();
    let (sm, st) = r.model.posterior_sd();
    let mut t = Table::new([
        "method",
        "step, noise",
        "paper RMSE(μ)",
        "ours RMSE(μ)",
        "paper RMSE(τ)",
        "ours RMSE(τ)",
        "mean error μ",
        "mean error τ",
        "sd ratio μ",
        "sd ratio τ",
        "reading 2 |mean − truth| μ",
        "reading 2 |mean − truth| τ",
        "HMC accept.",
        "learned M⁻¹ (diagonal)",
        "paper ms/iter",
        "ours ms/iter",
        "ours/paper",
    ]);
    // What a sampler drawing from the exact posterior scores on RMSE vs truth.
    let floor = |mean: f64, sd: f64, truth: f64| (sd * sd + (mean - truth).powi(2)).sqrt();
    t.row([
        "exact posterior".to_string(),
        "–".into(),
        "–".into(),
        sig(floor(em, sm, TRUTH[0]), 3),
        "–".into(),
        sig(floor(et, st, TRUTH[1]), 3),
        "0".into(),
        "0".into(),
        "1".into(),
        "1".into(),
        sig((em - TRUTH[0]).abs(), 3),
        sig((et - TRUTH[1]).abs(), 3),
        "–".into(),
        "–".into(),
        "–".into(),
        "–".into(),
        "–".into(),
    ]);
    for row in &r.rows {
        let paper = PAPER.iter().find(|p| p.0 == row.method);
        let (p_mu, p_tau, p_ms) = paper.map_or((f64::NAN, f64::NAN, f64::NAN), |p| (p.1, p.2, p.3));
        let mut cells = vec![row.method.label().to_string(), settings_cell(row)];
        cells.extend(accuracy_cells(
            row,
            [p_mu, p_tau],
            TRUTH,
            [em, et],
            [sm, st],
        ));
        cells.extend([
            reading2_cell(row, 0, TRUTH[0]),
            reading2_cell(row, 1, TRUTH[1]),
            row.acceptance().map_or("–".into(), |a| sig(a, 3)),
            row.learned_inverse_mass(),
            format!("{p_ms}"),
            row.ms_per_iteration.map_or("–".into(), |x| sig(x, 3)),
            row.ms_per_iteration
                .map_or("–".into(), |x| sig(x / p_ms, 2)),
        ]);
        t.row(cells);
    }
    t
}

/// Both readings of the RMSE over simulated data sets ([`spread_table`]): the exact posterior
/// on [`SPREAD_SETS`] data sets, every method on the first `lengths.spread_runs`.
pub fn spread_report_table(r: &Normal1d) -> Table {
    spread_table(
        ["μ", "τ"],
        &r.exact_sets,
        r.lengths.spread_runs,
        &r.spread,
        TRUTH,
        true,
    )
}

/// The paper's Table 1 values as percentiles of the exact posterior's spread over data sets
/// ([`paper_percentile_table`]); the printed Alg. 5 row repeats the paper's SG-NPHMC-EM, so it
/// is left out.
pub fn paper_table(r: &Normal1d) -> Table {
    let paper: Vec<(Method, [f64; 2])> = PAPER
        .iter()
        .filter(|p| p.0 != Method::SgNphmcEmPrinted)
        .map(|p| (p.0, [p.1, p.2]))
        .collect();
    paper_percentile_table(["μ", "τ"], &r.exact_sets, &paper, TRUTH, true)
}

fn plot_marginals(r: &Normal1d, opts: &RunOptions) -> Result<(), ExperimentError> {
    let (em, et) = r.model.posterior_mean();
    let (sm, st) = r.model.posterior_sd();
    for (j, name, center, sd) in [(0, "mu", em, sm), (1, "tau", et, st)] {
        let (lo, hi) = (center - 6.0 * sd, center + 6.0 * sd);
        let exact: Vec<(f64, f64)> = (0..=200)
            .map(|i| {
                let x = lo + (hi - lo) * i as f64 / 200.0;
                (
                    x,
                    if j == 0 {
                        r.model.density_mu(x)
                    } else {
                        r.model.density_tau(x)
                    },
                )
            })
            .collect();
        let labels = if j == 0 {
            ("normal-1d: marginal of μ, samples vs exact", "μ")
        } else {
            ("normal-1d: marginal of τ, samples vs exact", "τ")
        };
        plot_marginal(
            &opts.out.join(format!("normal-1d-{name}.png")),
            &r.rows,
            j,
            (lo, hi),
            Series::truth("exact posterior", exact),
            labels,
        )?;
    }
    Ok(())
}

/// The data's own numbers for the report header: N, x̄, exact posterior means and sds.
pub fn header(r: &Normal1d) -> String {
    let (em, et) = r.model.posterior_mean();
    let (sm, st) = r.model.posterior_sd();
    format!(
        "normal-1d (Roychowdhury & Parthasarathy 2017 §4.1, Table 1): N = {}, batch {}, L = {}, {} burn-in + {} recorded iterations, {} run(s) per method; exact posterior E μ = {}, sd μ = {}, E τ = {}, sd τ = {} (θ = (μ, log τ) sampled)",
        r.model.rows(),
        BATCH,
        LEAPFROG,
        r.lengths.burn_in,
        r.lengths.kept,
        r.rows.first().map_or(0, |row| row.chains.len().max(1)),
        sig(em, 3),
        sig(sm, 3),
        sig(et, 4),
        sig(st, 3)
    )
}

/// The text the CLI prints: [`header`], [`table`], the spread over data sets, the paper's values
/// against it and the tuning candidates.
pub fn report(r: &Normal1d) -> String {
    format!(
        "{}\n{}\nSpread over simulated data sets (N = {N} from N(0, 1) each, seeds {SPREAD_SEED}+k; median [5–95 %] for the exact rows, median [range] over one chain per data set for the methods):\n{}\nThe paper's Table 1 against the exact posterior's spread (% of the {} data sets on which an exact sampler scores at most the printed value):\n{}\n{}",
        header(r),
        table(r),
        spread_report_table(r),
        r.exact_sets.len(),
        paper_table(r),
        tuning_report(&r.tuning)
    )
}

/// Runs the experiment and returns [`report`].
pub fn cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    run(opts).map(|r| report(&r))
}
