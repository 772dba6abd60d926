//! `normal-gamma`: SGHMC versus SGNHT on the unknown mean and precision of a 1-d Gaussian (Ding et al. 2014 §5.1, App. E, Table 1), scored several ways over many simulated data sets.
//!
//! The model and its gradients are in [`crate::models::normal_gamma`] (with the ½ the paper's
//! printed ∂U/∂γ lacks, and γ kept positive by reflection). Each data set is N = 100 points
//! from N(0, 1), with minibatches of Ñ = 10 (the paper does not state them for this part; these
//! are its values for the known-variance part). Data set d is simulated from seed `seed + d`
//! (data set 0 is the single data set earlier versions used, with the same chain seeds). On each
//! data set, for each (h, A) of Table 1 and each method, `chains` chains of 10⁶ samples from
//! (μ, γ) = (0, 1); and, as the floor every score has even without any sampler error, the same
//! number of exact, independent draws from the Normal–Gamma posterior
//! ([`NormalGamma::sample_exact`]). Each row is scored by (draws of all chains pooled):
//!
//! * **joint**: the 2-d histogram of (μ, γ) on 20 × 20 cells over E μ ± 4 sd and E γ ± 4 sd
//!   against the exact density averaged per cell ([`crate::diagnostics::Histogram2d::rmse`]);
//!   **joint 50²**: the same on 50 × 50 cells;
//! * **μ KDE**, **γ KDE**: MATLAB `ksdensity`'s normal-kernel estimate of the marginal, with its
//!   default bandwidth and 100 points ([`crate::diagnostics::ksdensity`]), against the exact
//!   marginal density (Student-t, Gamma) at those points;
//! * **μ hist**, **γ hist**: a 100-bin histogram over E ± 6 sd against the exact marginal
//!   averaged per bin ([`crate::diagnostics::Histogram::rmse`], normalised);
//! * **τ Geyer**: the integrated autocorrelation time of μ + γ in iterations, Geyer's initial
//!   monotone sequence estimator; **τ windowed**: Sokal's windowed sum with c = 5
//!   ([`crate::diagnostics::tau_windowed`]); **τ batch means**: `b·var(batch means)/var(x)` over
//!   [`BATCHES`] non-overlapping batches of length b (Flegal & Jones 2010), which needs no
//!   truncation rule and so is not misled by an oscillating autocorrelation; all three averaged
//!   over chains;
//! * the mean kinetic temperature pᵀp/n (target 1) and the reflections at γ = 0.
//!
//! Ding et al. (2014) define neither their RMSE nor their τ; the readings above are the
//! candidates, and every table cell reports the median and the 10 % and 90 % quantiles over the
//! data sets, since a single data set moves several scores by a factor of 2 or more.
//!
//! # References
//!
//! * N. Ding, Y. Fang, R. Babbush, C. Chen, R. D. Skeel, H. Neven (2014), "Bayesian sampling
//!   using stochastic gradient thermostats", *NIPS 27*, App. E, Table 1.
//! * A. D. Sokal (1997), "Monte Carlo methods in statistical mechanics: foundations and new
//!   algorithms", §3.
//! * J. M. Flegal, G. L. Jones (2010), "Batch means and spectral variance estimators in Markov
//!   chain Monte Carlo", *Ann. Stat.* 38, 1034–1070.

use super::common::{
    DynamicsSettings, ExperimentError, Job, RunOptions, SamplerError, Start, method_grid,
    run_observed, sig,
};
use crate::diagnostics::{
    Axis, DiagnosticError, DrawCollector, Histogram, Histogram2d, Normalization,
    integrated_autocorrelation_time, ksdensity, quantile, tau_windowed,
};
use crate::models::NormalGamma;
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use rand_pcg::Pcg64;
use rayon::prelude::*;
use sgmcmc::prelude::*;
use std::convert::Infallible;
use std::ops::ControlFlow;

pub use super::gaussian_mean::Method;

/// Data points N (our choice; see the module docs).
pub const N: usize = 100;
/// Minibatch Ñ (our choice).
pub const BATCH: usize = 10;
/// Simulated data sets of a full run.
pub const DATA_SETS: usize = 24;
/// Simulated data sets of a `--quick` run.
pub const QUICK_DATA_SETS: usize = 3;
/// Sokal's window constant c of the windowed τ (his and emcee's default).
pub const WINDOW_C: f64 = 5.0;
/// Batches of the batch-means τ (a relative sd of ≈ √(2/(BATCHES − 1)) = 14 % per chain).
pub const BATCHES: usize = 100;
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

/// The methods of a run: Table 1's two and mSGNHT, our extra row (per-coordinate thermostats,
/// for the anisotropic, state-dependent noise of this model).
pub const METHODS: [Method; 3] = [Method::Sghmc, Method::Sgnht, Method::MSgnht];

/// What a table row is: one method at one (h, A), or the exact sampler.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Row {
    /// `method` at step `h` and friction / diffusion `a`.
    Sampler {
        /// Method.
        method: Method,
        /// Step.
        h: f64,
        /// Friction / diffusion.
        a: f64,
    },
    /// Independent draws from the exact posterior (the floor of every score).
    Exact,
}

impl Row {
    /// Ding et al. 2014, Table 1's (RMSE, τ) for this row, if it has one.
    pub fn paper(&self) -> Option<(f64, f64)> {
        let Row::Sampler { method, h, a } = *self else {
            return None;
        };
        let k = SETTINGS.iter().position(|&s| s == (h, a))?;
        match method {
            Method::Sghmc => Some(PAPER[0][k]),
            Method::Sgnht => Some(PAPER[1][k]),
            Method::MSgnht => None,
        }
    }

    /// (method, h, A) as table cells.
    fn cells(&self) -> [String; 3] {
        match self {
            Row::Sampler { method, h, a } => [format!("{method:?}"), h.to_string(), a.to_string()],
            Row::Exact => ["exact i.i.d.".into(), "–".into(), "–".into()],
        }
    }
}

/// The scores of one row (module docs), of one data set (`Scores<f64>`) or summarised over
/// data sets (`Scores<Spread>`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores<T> {
    /// RMSE of the joint 20 × 20 histogram over ±4 sd.
    pub joint: T,
    /// RMSE of the joint 50 × 50 histogram over ±4 sd.
    pub joint_fine: T,
    /// RMSE of `ksdensity` of μ at its 100 points.
    pub mu_kde: T,
    /// RMSE of the 100-bin histogram of μ over ±6 sd.
    pub mu_hist: T,
    /// RMSE of `ksdensity` of γ at its 100 points.
    pub gamma_kde: T,
    /// RMSE of the 100-bin histogram of γ over ±6 sd.
    pub gamma_hist: T,
    /// Geyer's τ of μ + γ (iterations), mean over chains.
    pub tau_geyer: T,
    /// Sokal's windowed τ (c = 5) of μ + γ (iterations), mean over chains.
    pub tau_windowed: T,
    /// The batch-means τ of μ + γ ([`BATCHES`] batches; iterations), mean over chains.
    pub tau_batch: T,
    /// Mean kinetic temperature (NaN for the exact sampler).
    pub temperature: T,
    /// Reflections at γ = 0, all chains.
    pub reflections: T,
}

/// The names of [`Scores`]' fields, in [`Scores::to_array`]'s order (CSV columns).
pub const SCORE_NAMES: [&str; 11] = [
    "rmse_joint_20",
    "rmse_joint_50",
    "rmse_mu_kde",
    "rmse_mu_hist",
    "rmse_gamma_kde",
    "rmse_gamma_hist",
    "tau_geyer",
    "tau_windowed",
    "tau_batch_means",
    "temperature",
    "reflections",
];

impl<T: Copy> Scores<T> {
    /// The fields in [`SCORE_NAMES`]' order.
    pub fn to_array(&self) -> [T; 11] {
        [
            self.joint,
            self.joint_fine,
            self.mu_kde,
            self.mu_hist,
            self.gamma_kde,
            self.gamma_hist,
            self.tau_geyer,
            self.tau_windowed,
            self.tau_batch,
            self.temperature,
            self.reflections,
        ]
    }

    /// The inverse of [`Scores::to_array`].
    pub fn from_array(v: [T; 11]) -> Self {
        Scores {
            joint: v[0],
            joint_fine: v[1],
            mu_kde: v[2],
            mu_hist: v[3],
            gamma_kde: v[4],
            gamma_hist: v[5],
            tau_geyer: v[6],
            tau_windowed: v[7],
            tau_batch: v[8],
            temperature: v[9],
            reflections: v[10],
        }
    }
}

/// Median and 10 % / 90 % quantiles (Hyndman–Fan 7) of a score over data sets (all NaN if any
/// data set's score is not finite, e.g. the exact sampler's temperature).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Median.
    pub median: f64,
    /// 10 % quantile.
    pub q10: f64,
    /// 90 % quantile.
    pub q90: f64,
}

impl Spread {
    /// The spread of `values` (NaN if empty or not all finite).
    pub fn of(values: &[f64]) -> Self {
        let q = |p| quantile(values, p).unwrap_or(f64::NAN);
        Spread {
            median: q(0.5),
            q10: q(0.1),
            q90: q(0.9),
        }
    }

    /// `median [q10–q90]` with `digits` significant digits (`–` if NaN).
    pub fn format(&self, digits: usize) -> String {
        if !self.median.is_finite() {
            return "–".into();
        }
        format!(
            "{} [{}–{}]",
            sig(self.median, digits),
            sig(self.q10, digits),
            sig(self.q90, digits)
        )
    }
}

/// One row on one data set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalGammaRun {
    /// Data set index (seed `seed + data_set`).
    pub data_set: usize,
    /// Method and (h, A), or the exact sampler.
    pub row: Row,
    /// Its scores.
    pub scores: Scores<f64>,
}

/// One row summarised over data sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Method and (h, A), or the exact sampler.
    pub row: Row,
    /// Median and 10–90 % range of each score.
    pub scores: Scores<Spread>,
}

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct NormalGammaResult {
    /// Data sets.
    pub data_sets: usize,
    /// Chains per row and data set.
    pub chains: usize,
    /// Samples per chain.
    pub steps: usize,
    /// Every row on every data set (data set outer; methods, settings, then the exact row).
    pub runs: Vec<NormalGammaRun>,
    /// Every row over the data sets (methods, settings, then the exact row).
    pub cells: Vec<Cell>,
}

impl NormalGammaResult {
    /// The summary of `row`.
    pub fn cell(&self, row: Row) -> Option<&Cell> {
        self.cells.iter().find(|c| c.row == row)
    }

    /// The summary of `method` at (h, a).
    pub fn sampler(&self, method: Method, h: f64, a: f64) -> Option<&Cell> {
        self.cell(Row::Sampler { method, h, a })
    }
}

/// What one chain records (an [`Observer`] of every [`Method`]'s sampler); it also reflects γ at
/// 0, keeping the precision positive.
struct ChainOut {
    draws: DrawCollector,
    sum_temperature: f64,
    reflections: u64,
}

impl<S: ChainState<f64>> Observer<S, f64> for ChainOut {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let (th, mom) = sampler.phase_mut();
        if th[1] < 0.0 {
            self.reflections += 1;
            NormalGamma::reflect(th, mom);
        }
        let ControlFlow::Continue(()) = self.draws.observe(step, sampler, stats);
        self.sum_temperature += stats.kinetic_temperature.unwrap_or(f64::NAN);
        ControlFlow::Continue(())
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

/// The draws (μ, γ) of one chain, as two columns.
struct Columns {
    mu: Vec<f64>,
    gamma: Vec<f64>,
}

/// The density and τ scores of a row's chains (draws pooled for the densities, τ averaged);
/// temperature and reflections are left NaN and 0 for the caller.
fn score(model: &NormalGamma, chains: &[Columns]) -> Result<Scores<f64>, DiagnosticError> {
    let (mm, mg) = model.posterior_mean();
    let (sm, sg) = model.posterior_sd();
    let joint_axes = |bins| -> Result<(Axis, Axis), DiagnosticError> {
        Ok((
            Axis::new(mm - 4.0 * sm, mm + 4.0 * sm, bins)?,
            Axis::new((mg - 4.0 * sg).max(0.0), mg + 4.0 * sg, bins)?,
        ))
    };
    let (x20, y20) = joint_axes(20)?;
    let (x50, y50) = joint_axes(50)?;
    let mut joint = Histogram2d::new(x20, y20)?;
    let mut fine = Histogram2d::new(x50, y50)?;
    let mu_axis = Axis::new(mm - 6.0 * sm, mm + 6.0 * sm, 100)?;
    let gamma_axis = Axis::new((mg - 6.0 * sg).max(0.0), mg + 6.0 * sg, 100)?;
    let mut mu_hist = Histogram::new(mu_axis);
    let mut gamma_hist = Histogram::new(gamma_axis);
    let (mut tau_geyer, mut tau_win, mut tau_batch) = (0.0, 0.0, 0.0);
    for c in chains {
        for (&m, &g) in c.mu.iter().zip(&c.gamma) {
            joint.add(m, g)?;
            fine.add(m, g)?;
        }
        mu_hist.extend(&c.mu)?;
        gamma_hist.extend(&c.gamma)?;
        let sum: Vec<f64> = c.mu.iter().zip(&c.gamma).map(|(m, g)| m + g).collect();
        tau_geyer += integrated_autocorrelation_time(&sum)?;
        tau_win += tau_windowed(&sum, WINDOW_C)?.tau;
        tau_batch += tau_batch_means(&sum, BATCHES)?;
    }
    let pooled = |f: fn(&Columns) -> &Vec<f64>| -> Vec<f64> {
        chains.iter().flat_map(|c| f(c).iter().copied()).collect()
    };
    let mu_kde = ksdensity(&pooled(|c| &c.mu))?.rmse(|x| model.mu_marginal_density(x))?;
    let gamma_kde = ksdensity(&pooled(|c| &c.gamma))?.rmse(|x| model.gamma_marginal_density(x))?;
    let density = |x, y| model.density(x, y);
    let k = chains.len() as f64;
    Ok(Scores {
        joint: joint.rmse(density, Normalization::Normalized)?,
        joint_fine: fine.rmse(density, Normalization::Normalized)?,
        mu_kde,
        mu_hist: mu_hist.rmse(|x| model.mu_marginal_density(x), Normalization::Normalized)?,
        gamma_kde,
        gamma_hist: gamma_hist.rmse(
            |x| model.gamma_marginal_density(x),
            Normalization::Normalized,
        )?,
        tau_geyer: tau_geyer / k,
        tau_windowed: tau_win / k,
        tau_batch: tau_batch / k,
        temperature: f64::NAN,
        reflections: 0.0,
    })
}

/// The batch-means estimate of τ: with `x` cut into `batches` non-overlapping batches of length
/// `b = ⌊n/batches⌋` (the last `n mod batches` values dropped), `τ̂ = b·s²_batch/s²`, the
/// variance of the batch means (divisor `batches − 1`) over the variance of one value's
/// (divisor `n − 1`), scaled to a single batch. For `b` much longer than the autocorrelation
/// decays, the batch means are nearly independent with variance `τσ²/b`, so `τ̂` is unbiased up
/// to `O(1/b)` whatever the sign pattern of the autocorrelation, with relative sd
/// `≈ √(2/(batches − 1))` (Flegal & Jones 2010). Requires `batches ≥ 2`, `n ≥ 2·batches`, finite
/// values not all equal.
pub fn tau_batch_means(x: &[f64], batches: usize) -> Result<f64, DiagnosticError> {
    if batches < 2 || x.len() < 2 * batches {
        return Err(DiagnosticError::TooFewSamples {
            needed: 2 * batches.max(2),
            got: x.len(),
        });
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(DiagnosticError::NonFinite);
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    if var <= 0.0 {
        return Err(DiagnosticError::InvalidArgument(
            "a constant series has no autocorrelation time",
        ));
    }
    let b = x.len() / batches;
    let means: Vec<f64> = x
        .chunks_exact(b)
        .take(batches)
        .map(|c| c.iter().sum::<f64>() / b as f64)
        .collect();
    let grand = means.iter().sum::<f64>() / batches as f64;
    let var_means = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (batches - 1) as f64;
    Ok(b as f64 * var_means / var)
}

/// The methods × settings configurations of one data set, in [`method_grid`]'s order.
fn configurations() -> Vec<Row> {
    METHODS
        .iter()
        .flat_map(|&method| {
            SETTINGS
                .iter()
                .map(move |&(h, a)| Row::Sampler { method, h, a })
        })
        .collect()
}

/// Runs and scores every row on data set `d`.
fn run_data_set(
    opts: &RunOptions,
    integrator: Integrator,
    d: usize,
    steps: usize,
) -> Result<Vec<NormalGammaRun>, ExperimentError> {
    // Data set 0 keeps the seeds of the single-data-set runs (data and chains).
    let opts_d = RunOptions {
        seed: opts.seed.wrapping_add(d as u64),
        ..opts.clone()
    };
    let model = NormalGamma::simulate(N, BATCH, opts_d.seed);
    let label = if d == 0 {
        "normal-gamma".to_string()
    } else {
        format!("normal-gamma-data-set-{d}")
    };
    let outs = method_grid(
        &opts_d,
        (&METHODS, &SETTINGS, integrator),
        (steps, &label),
        |m, s, job| run_chain(&model, m, s, job),
    )?;
    let rows = configurations();
    // The exact row's seeds continue the configurations' numbering.
    let exact_config = rows.len();
    let invalid =
        |what: String| move |e: DiagnosticError| ExperimentError::Invalid(format!("{what}: {e}"));
    let mut scored: Vec<(Row, Result<Scores<f64>, ExperimentError>)> = outs
        .into_par_iter()
        .zip(rows.par_iter())
        .map(|(chains, &row)| {
            let temperature = chains.iter().map(|c| c.sum_temperature).sum::<f64>()
                / (chains.len() * steps) as f64;
            let reflections = chains.iter().map(|c| c.reflections).sum::<u64>() as f64;
            let columns: Vec<Columns> = chains
                .into_iter()
                .map(|c| Columns {
                    mu: c.draws.column(0),
                    gamma: c.draws.column(1),
                })
                .collect();
            let s = score(&model, &columns)
                .map(|s| Scores {
                    temperature,
                    reflections,
                    ..s
                })
                .map_err(invalid(format!("data set {d}, {row:?}")));
            (row, s)
        })
        .collect();
    let exact: Vec<Columns> = (0..opts.chains)
        .into_par_iter()
        .map(|c| {
            let mut rng = Pcg64::new(opts_d.chain_seed(exact_config, c) as u128, 0xe8ac7);
            let (mut mu, mut gamma) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
            for _ in 0..steps {
                let (m, g) = model.sample_exact(&mut rng);
                mu.push(m);
                gamma.push(g);
            }
            Columns { mu, gamma }
        })
        .collect();
    scored.push((
        Row::Exact,
        score(&model, &exact).map_err(invalid(format!("data set {d}, exact draws"))),
    ));
    scored
        .into_iter()
        .map(|(row, s)| {
            Ok(NormalGammaRun {
                data_set: d,
                row,
                scores: s?,
            })
        })
        .collect()
}

/// Runs the experiment on `data_sets` simulated data sets (default [`DATA_SETS`], or
/// [`QUICK_DATA_SETS`] with `--quick`); writes into `opts.out` `normal-gamma.csv` (every row's
/// median and 10–90 % range), `normal-gamma-data-sets.csv` (every row on every data set),
/// `normal-gamma.png` (median joint RMSE against median Geyer τ, ours and the paper's, as in Ding
/// et al. 2014, Fig. 2's fourth panel) and `normal-gamma-marginal.png` (median μ-KDE RMSE against
/// median windowed τ).
pub fn run(
    opts: &RunOptions,
    integrator: Integrator,
    data_sets: Option<usize>,
) -> Result<NormalGammaResult, ExperimentError> {
    opts.prepare()?;
    let data_sets = data_sets.unwrap_or(if opts.quick {
        QUICK_DATA_SETS
    } else {
        DATA_SETS
    });
    if data_sets == 0 {
        return Err(ExperimentError::Invalid(
            "at least one data set is needed".into(),
        ));
    }
    let steps = if opts.quick { 200_000 } else { 1_000_000 };
    // Data sets one after another, each one's chains (and then its rows' scores) in parallel:
    // this keeps one data set's draws in memory (12 rows × chains × 16 MB) at a time.
    let mut runs = Vec::new();
    for d in 0..data_sets {
        runs.extend(run_data_set(opts, integrator, d, steps)?);
    }
    let mut rows = configurations();
    rows.push(Row::Exact);
    let cells: Vec<Cell> = rows
        .into_iter()
        .map(|row| {
            let values: Vec<[f64; 11]> = runs
                .iter()
                .filter(|r| r.row == row)
                .map(|r| r.scores.to_array())
                .collect();
            let spreads: [Spread; 11] = std::array::from_fn(|k| {
                Spread::of(&values.iter().map(|v| v[k]).collect::<Vec<_>>())
            });
            Cell {
                row,
                scores: Scores::from_array(spreads),
            }
        })
        .collect();
    let result = NormalGammaResult {
        data_sets,
        chains: opts.chains,
        steps,
        runs,
        cells,
    };
    let (summary, per_data_set) = csv_tables(&result);
    summary.write_csv(&opts.out.join("normal-gamma.csv"))?;
    per_data_set.write_csv(&opts.out.join("normal-gamma-data-sets.csv"))?;
    plot(
        &result,
        &opts.out.join("normal-gamma.png"),
        "Normal–Gamma: RMSE of the joint 20×20 histogram vs Geyer's τ of μ + γ (medians)",
        |s| (s.tau_geyer.median, s.joint.median),
    )?;
    plot(
        &result,
        &opts.out.join("normal-gamma-marginal.png"),
        "Normal–Gamma: RMSE of ksdensity of μ vs windowed τ of μ + γ (medians)",
        |s| (s.tau_windowed.median, s.mu_kde.median),
    )?;
    Ok(result)
}

/// RMSE against τ per method, ours (`point` of each cell) solid and the paper's dashed, with the
/// exact sampler's RMSE as a flat black line across the plotted τ range.
fn plot(
    result: &NormalGammaResult,
    path: &std::path::Path,
    title: &str,
    point: impl Fn(&Scores<Spread>) -> (f64, f64),
) -> Result<(), ExperimentError> {
    let mut series = Vec::new();
    let mut taus = Vec::new();
    for (i, method) in METHODS.into_iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = result
            .cells
            .iter()
            .filter(|c| matches!(c.row, Row::Sampler { method: m, .. } if m == method))
            .map(|c| point(&c.scores))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        taus.extend(pts.iter().map(|p| p.0));
        series.push(Series::new(format!("{method:?} (ours)"), pts, i + 1));
    }
    for (m, name) in [(0, "SGHMC (paper)"), (1, "SGNHT (paper)")] {
        let mut pts: Vec<(f64, f64)> = PAPER[m].iter().map(|&(r, t)| (t, r)).collect();
        taus.extend(pts.iter().map(|p| p.0));
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series {
            dashed: true,
            ..Series::new(name, pts, m + 1)
        });
    }
    if let Some(exact) = result.cell(Row::Exact) {
        let floor = point(&exact.scores).1;
        let lo = taus.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = taus.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        series.push(Series::truth(
            "exact i.i.d. draws (floor)",
            vec![(lo, floor), (hi, floor)],
        ));
    }
    line_chart(
        path,
        &Chart {
            title,
            x_label: "τ (iterations)",
            y_label: "RMSE",
            x_scale: Scale::Log,
            y_scale: Scale::Log,
        },
        &series,
    )?;
    Ok(())
}

/// The CSV tables: one row per cell (median, q10, q90 of every score, and the paper's values),
/// and one row per data set and cell.
fn csv_tables(result: &NormalGammaResult) -> (Table, Table) {
    let mut header = vec![
        "method".to_string(),
        "h".into(),
        "A".into(),
        "paper_rmse".into(),
        "paper_tau".into(),
    ];
    for name in SCORE_NAMES {
        for q in ["median", "q10", "q90"] {
            header.push(format!("{name}_{q}"));
        }
    }
    let mut summary = Table::new(header);
    for c in &result.cells {
        let (pr, pt) = c
            .row
            .paper()
            .map_or((String::new(), String::new()), |(r, t)| {
                (r.to_string(), t.to_string())
            });
        let mut cells: Vec<String> = c.row.cells().into_iter().chain([pr, pt]).collect();
        for s in c.scores.to_array() {
            cells.extend([s.median, s.q10, s.q90].map(|v| v.to_string()));
        }
        summary.row(cells);
    }
    let mut header = vec![
        "data_set".to_string(),
        "method".into(),
        "h".into(),
        "A".into(),
    ];
    header.extend(SCORE_NAMES.map(String::from));
    let mut per = Table::new(header);
    for r in &result.runs {
        let mut cells = vec![r.data_set.to_string()];
        cells.extend(r.row.cells());
        cells.extend(r.scores.to_array().map(|v| v.to_string()));
        per.row(cells);
    }
    (summary, per)
}

/// The RMSE readings beside Ding et al. 2014, Table 1's RMSE, as median [10–90 %] over data sets.
pub fn rmse_table(result: &NormalGammaResult) -> Table {
    let mut t = Table::new([
        "method",
        "h",
        "A",
        "paper RMSE",
        "joint 20²",
        "joint 50²",
        "μ KDE",
        "μ hist",
        "γ KDE",
        "γ hist",
    ]);
    for c in &result.cells {
        let s = &c.scores;
        let paper = c.row.paper().map_or("–".into(), |p| p.0.to_string());
        let mut cells: Vec<String> = c.row.cells().into_iter().chain([paper]).collect();
        cells.extend(
            [
                s.joint,
                s.joint_fine,
                s.mu_kde,
                s.mu_hist,
                s.gamma_kde,
                s.gamma_hist,
            ]
            .map(|v| v.format(3)),
        );
        t.row(cells);
    }
    t
}

/// The τ readings beside Ding et al. 2014, Table 1's τ, with the kinetic temperature and the
/// reflections, as median [10–90 %] over data sets.
pub fn tau_table(result: &NormalGammaResult) -> Table {
    let mut t = Table::new([
        "method",
        "h",
        "A",
        "paper τ",
        "τ Geyer",
        "τ windowed (c = 5)",
        "τ batch means",
        "kinetic temperature",
        "reflections",
    ]);
    for c in &result.cells {
        let s = &c.scores;
        let paper = c.row.paper().map_or("–".into(), |p| p.1.to_string());
        let mut cells: Vec<String> = c.row.cells().into_iter().chain([paper]).collect();
        cells.extend([
            s.tau_geyer.format(3),
            s.tau_windowed.format(3),
            s.tau_batch.format(3),
            s.temperature.format(3),
            s.reflections.format(3),
        ]);
        t.row(cells);
    }
    t
}

/// The text the CLI prints: the setting, [`rmse_table`] and [`tau_table`].
pub fn report(result: &NormalGammaResult) -> String {
    format!(
        "Normal–Gamma (Ding et al. 2014 App. E, Table 1): N = {N}, minibatch {BATCH}, {} data \
         sets, {} chain(s) × {} samples per row; median [10 %–90 %] over data sets\n{}\n{}",
        result.data_sets,
        result.chains,
        result.steps,
        rmse_table(result),
        tau_table(result)
    )
}

/// Runs the experiment and returns [`report`].
pub fn cli(
    opts: &RunOptions,
    integrator: Integrator,
    data_sets: Option<usize>,
) -> Result<String, ExperimentError> {
    run(opts, integrator, data_sets).map(|r| report(&r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sgmcmc::rng::standard_normal_f64;

    /// AR(2) `x_t = φ₁x_{t−1} + φ₂x_{t−2} + ε_t` with complex roots (φ₁ = 1.8, φ₂ = −0.9: an
    /// autocorrelation oscillating with period ≈ 20 steps under an envelope decaying by 0.95 per
    /// step), whose τ is known: `τ = σ²_ε/((1 − φ₁ − φ₂)² var x)`, `var x = (1 − φ₂)σ²_ε/((1 +
    /// φ₂)((1 − φ₂)² − φ₁²))`, here 1.95 (the negative lobes almost cancel the positive ones, so
    /// τ is far below the envelope's ≈ 19-step decay time). And AR(1) with
    /// φ = 0.9, `τ = (1 + φ)/(1 − φ) = 19`. On n = 10⁶ values in 100 batches the estimate has a
    /// relative sd of √(2/99) = 14 % (plus, for the AR(2), an absolute O(1/b) term from the
    /// cancelling lobes, < 0.01 here); assert within 4 sd. Errors: a constant or too short
    /// series.
    #[test]
    fn batch_means_recover_known_tau_also_when_the_autocorrelation_oscillates() {
        let n = 1_000_000;
        let mut rng = Pcg64::new(3, 303);
        let (p1, p2) = (1.8f64, -0.9f64);
        let (mut a, mut b) = (0.0, 0.0);
        let mut ar2 = Vec::with_capacity(n);
        for t in 0..n + 1000 {
            let x = p1 * a + p2 * b + standard_normal_f64(&mut rng);
            (b, a) = (a, x);
            if t >= 1000 {
                ar2.push(x);
            }
        }
        let var = (1.0 - p2) / ((1.0 + p2) * ((1.0 - p2).powi(2) - p1 * p1));
        let truth = 1.0 / ((1.0 - p1 - p2).powi(2) * var);
        let est = tau_batch_means(&ar2, BATCHES).unwrap();
        let sd = (2.0 / 99.0f64).sqrt();
        println!("AR(2): batch means {est:.4}, truth {truth:.4}");
        assert!(
            (est / truth - 1.0).abs() < 4.0 * sd + 0.01 / truth,
            "{est} vs {truth}"
        );
        let mut x = standard_normal_f64(&mut rng);
        let ar1: Vec<f64> = (0..n)
            .map(|_| {
                x = 0.9 * x + (1.0f64 - 0.81).sqrt() * standard_normal_f64(&mut rng);
                x
            })
            .collect();
        let est = tau_batch_means(&ar1, BATCHES).unwrap();
        println!("AR(1): batch means {est:.3}, truth 19");
        assert!((est / 19.0 - 1.0).abs() < 4.0 * sd, "{est}");
        assert!(tau_batch_means(&[1.0; 300], BATCHES).is_err());
        assert!(tau_batch_means(&ar1[..150], BATCHES).is_err());
    }
}
