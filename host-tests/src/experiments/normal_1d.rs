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
//! * **time per iteration** (ms) from separate single-threaded timing chains run one after the
//!   other (not in parallel), and its ratio to the paper's (a 2.5 GHz Core i7 laptop, Roychowdhury
//!   & Parthasarathy 2017 §6.3; the paper's code is not published, so only the order of magnitude
//!   is comparable).

use super::common::{ExperimentError, RunOptions, sig};
use super::mcem::{
    BatchedPosterior, ChainPlan, Method, MethodRow, Settings, TuningRow, accuracy_cells,
    plot_marginal, settings_cell, tune_and_run, tuning_report, tuning_table,
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
}

impl Lengths {
    /// The paper-sized run, or the `--quick` one.
    pub fn of(opts: &RunOptions) -> Self {
        if opts.quick {
            Lengths {
                burn_in: 1000,
                kept: 2000,
                timed: 300,
            }
        } else {
            Lengths {
                burn_in: BURN_IN,
                kept: KEPT,
                timed: 2000,
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
    /// Lengths used.
    pub lengths: Lengths,
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
    let result = Normal1d {
        model,
        rows,
        tuning,
        lengths,
    };
    table(&result).write_csv(&opts.out.join("normal-1d.csv"))?;
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

/// The text the CLI prints: [`header`], [`table`] and the tuning candidates.
pub fn report(r: &Normal1d) -> String {
    format!("{}\n{}\n{}", header(r), table(r), tuning_report(&r.tuning))
}

/// Runs the experiment and returns [`report`].
pub fn cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    run(opts).map(|r| report(&r))
}
