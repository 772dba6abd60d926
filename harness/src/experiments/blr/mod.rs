//! `blr`: Bayesian logistic regression on real data, SGNHT against SGMGT and SGMGT-D with a = 1, 2 (Zhang et al. 2017 §4.2, Table 1).
//!
//! The model and the data splits are [`crate::models::logistic_regression`]'s: prior
//! N(0, 10 I), standardised features with an intercept; Pima (8 weights), Ripley (7, cubic basis),
//! Caravan (86) — the paper's P, R and C — and breast cancer (31), which the paper does not use.
//!
//! Protocol, as in the paper where it says, and stated here where it does not:
//!
//! * minibatches of [`BATCH`] = 16 rows drawn without replacement at every iteration, gradient
//!   scaled by N/16; [`ITERATIONS`] = 5000 iterations of which the first [`BURN_IN`] = 1000 are
//!   discarded; [`RUNS`] = 5 independent runs per data set and method, each from its own random
//!   start θ₀ ~ N(0, I) (p₀ from the kinetic energy's own distribution, ξ₀ as below);
//! * **AUROC** on the held-out split of the posterior-mean predictive probability
//!   p̄(x) = (1/S) Σₛ σ(wₛᵀx) over the S = 4000 post-burn-in samples of a run; the table gives its
//!   mean ± sd over the runs;
//! * **median ESS**: per run, the Geyer ESS of each weight's 4000 post-burn-in samples
//!   ([`ess_unsplit`](crate::diagnostics::ess_unsplit) on that one chain), the median over the weights; the table gives the mean
//!   (± sd) of that median over the runs;
//! * **first-dip ESS** (not in the paper, to explain the ESS gap): the same median with the
//!   autocorrelation sum cut at the first lag where ρ̂ < 0.01 ([`ess_first_dip`](crate::diagnostics::ess_first_dip)), the rule of
//!   the truncated-autocorrelation ESS in the first author's public monomial-gamma HMC code; the
//!   paper does not say which estimator its Table 1 uses;
//! * **sd/Laplace** (not in the paper): per run, the median over the weights of the sample sd
//!   over the Laplace sd of the posterior ([`crate::models::logistic_regression::Laplace`]),
//!   averaged over the runs — ≈ 1 for a chain that samples the posterior, above for one that runs
//!   hot, below for one that runs cold or has not explored. (On these data sets the Laplace
//!   marginal sds agree with a long full-gradient HMC run to within 5 % in the median.) The
//!   column `temp.` is the kinetic temperature (1/n) Σ pᵢ ∂K/∂pᵢ after burn-in, 1 at
//!   equilibrium for every kinetic energy here;
//! * all samplers use the first-order Euler integrator (the paper's SGNHT is Ding et al.'s
//!   Alg. 1, Euler); a run that diverges is counted in the `diverged` column, not hidden.
//!
//! Methods: SGNHT with one scalar thermostat (ξ₀ = A), and SGMGT / SGMGT-D
//! ([`sgmcmc::sampler::Sgmgt`]) with the softened monomial-gamma kinetics of eq. 12 (a = 1, 2,
//! softening c), per-coordinate thermostats with F(ξ) = ξ²/2 and ξ₀ = 0, γ = 1, σ_p = 1, p
//! resampled every 100 steps and ξ every T_ξ ∈ {100, never} steps; SGMGT-D adds the first-order
//! diffusions σ_θ, σ_ξ > 0. The paper's hyperparameters are in its supplement, which we do not
//! have: step sizes and the rest per data set and method are in [`settings`], chosen by the
//! validation search of [`tune`] (`blr --tune`), which never sees the held-out split.
//!
//! [`batch_sweep`] (`blr --batch-sweep`, not in the paper) reruns the ESS methods with larger
//! minibatches up to the full training split, each with its own validation search, to measure
//! how much of the ESS gap to Table 1 the minibatch accounts for. [`ess_readings`]
//! (`blr --ess-readings`) gives Table 1's ESS under other readings of its protocol and with four
//! estimators, and [`ess_audit`] (`blr --ess-audit`) checks the estimators against the true ESS
//! of many independent runs. [`ksd_tune`] (`blr --ksd-tune`) picks Pima's step sizes by the
//! kernel Stein discrepancy of short runs (Coullon, South & Nemeth 2023) and compares them with
//! the validation search's.
//!
//! The folder splits the experiment by concern: `problem` (the posterior and its held-out and
//! validation splits), `run` (the chains and Table 1's numbers), `report` (tables, CSV files and
//! trace plots), `splits` (the AUROC spread over random re-splits), `tune` (the validation
//! search), `sweep` (the minibatch sweep), `readings` (the ESS readings and audit) and `ksd_tune`
//! (the KSD step-size search).

mod ksd_tune;
mod problem;
mod readings;
mod report;
mod result;
mod run;
mod splits;
mod sweep;
mod tune;

pub use ksd_tune::{
    FrictionSearch, KSD_BURN_IN, KSD_ITERATIONS, KSD_READINGS, KSD_THIN, KsdProtocol, KsdTune,
    KsdTuneRow, QUICK_KSD_ITERATIONS, ksd_protocol, ksd_tune, ksd_tune_table,
    readings_table as ksd_readings_table, validation_span, validation_table_path,
};
pub use problem::Problem;
pub use readings::{
    AUDIT_CONFIGS, AUDIT_DRAWS, AUDIT_RUNS, AuditRow, EssMedians, KEPT, READINGS, Reading,
    ReadingRow, Storage, audit_table, closest_readings, ess_audit, ess_readings,
    full_batch_settings, reading_fit, readings_csv, readings_table,
};
pub use report::{report, table};
pub use result::{BlrResult, BlrRow, RunOut};
pub use run::run;
pub use splits::{SPLITS, SplitSpread, run_split_spread, split_spread, split_table};
pub use sweep::{
    SWEEP_BATCHES, SWEEP_METHODS, SWEEP_SEARCH_RUNS, SWEEP_STEPS, SweepRow, batch_sweep,
    sweep_grid, sweep_table,
};
pub use tune::{
    SD_TOLERANCES, TUNE_C, TUNE_RESAMPLE_XI, TUNE_SIGMA_P, TUNE_SIGMA_THETA, TUNE_SIGMA_XI,
    TUNE_STEPS, TuneCell, TuneMeans, acceptable, choose, competitive, tune, tune_grid,
};

use super::common::{ExperimentError, RunOptions, sig};
use crate::models::logistic_regression::DataSet;

/// Minibatch size.
pub const BATCH: usize = 16;
/// Iterations per run, burn-in included.
pub const ITERATIONS: usize = 5000;
/// Burn-in iterations discarded.
pub const BURN_IN: usize = 1000;
/// Independent runs per data set and method.
pub const RUNS: usize = 5;
/// Iterations in quick mode (Pima only).
pub const QUICK_ITERATIONS: usize = 2000;
/// Burn-in in quick mode.
pub const QUICK_BURN_IN: usize = 500;
/// Threshold of the first-dip ESS column ([`ess_first_dip`](crate::diagnostics::ess_first_dip)):
/// 0.01, as in the first author's MGHMC code.
pub const FIRST_DIP: f64 = 0.01;

/// The samplers of Table 1, in its row order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// SGNHT (Ding et al. 2014), scalar thermostat.
    Sgnht,
    /// SGMGT with a = 1.
    Sgmgt1,
    /// SGMGT-D with a = 1.
    SgmgtD1,
    /// SGMGT with a = 2.
    Sgmgt2,
    /// SGMGT-D with a = 2.
    SgmgtD2,
    /// SGMGT-D with a = 1 and per-coordinate noise estimates B̂ⱼ for its θ term (ours, not in
    /// the paper; see [`corrected_settings`]).
    SgmgtD1Corrected,
    /// SGMGT-D with a = 2 and per-coordinate noise estimates (ours, not in the paper).
    SgmgtD2Corrected,
}

impl Method {
    /// Table 1's rows.
    pub const ALL: [Method; 5] = [
        Method::Sgnht,
        Method::Sgmgt1,
        Method::SgmgtD1,
        Method::Sgmgt2,
        Method::SgmgtD2,
    ];

    /// Table 1's rows and, after them, our SGMGT-D rows with per-coordinate noise estimates:
    /// what [`run`] reports. ([`tune`] searches [`Method::ALL`] only; the corrected rows take
    /// their settings from the SGMGT-D rows through [`corrected_settings`].)
    pub const REPORTED: [Method; 7] = [
        Method::Sgnht,
        Method::Sgmgt1,
        Method::SgmgtD1,
        Method::Sgmgt2,
        Method::SgmgtD2,
        Method::SgmgtD1Corrected,
        Method::SgmgtD2Corrected,
    ];

    /// The paper's name (ours with "B̂ⱼ").
    pub fn label(self) -> &'static str {
        match self {
            Method::Sgnht => "SGNHT",
            Method::Sgmgt1 => "SGMGT(a=1)",
            Method::SgmgtD1 => "SGMGT-D(a=1)",
            Method::Sgmgt2 => "SGMGT(a=2)",
            Method::SgmgtD2 => "SGMGT-D(a=2)",
            Method::SgmgtD1Corrected => "SGMGT-D(a=1) B̂ⱼ",
            Method::SgmgtD2Corrected => "SGMGT-D(a=2) B̂ⱼ",
        }
    }

    /// The SGMGT-D row whose settings a corrected row starts from (itself for the others).
    pub fn uncorrected(self) -> Method {
        match self {
            Method::SgmgtD1Corrected => Method::SgmgtD1,
            Method::SgmgtD2Corrected => Method::SgmgtD2,
            m => m,
        }
    }

    /// Does the θ term use per-coordinate noise estimates?
    pub fn corrected(self) -> bool {
        self.uncorrected() != self
    }

    /// The monomial exponent a (½ for SGNHT's Gaussian kinetics).
    pub fn a(self) -> f64 {
        match self {
            Method::Sgnht => 0.5,
            Method::Sgmgt1 | Method::SgmgtD1 | Method::SgmgtD1Corrected => 1.0,
            Method::Sgmgt2 | Method::SgmgtD2 | Method::SgmgtD2Corrected => 2.0,
        }
    }

    /// SGMGT-D (first-order diffusions on θ and ξ)?
    pub fn diffusive(self) -> bool {
        matches!(self.uncorrected(), Method::SgmgtD1 | Method::SgmgtD2)
    }
}

/// Sampler settings of one (data set, method).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Step size h.
    pub h: f64,
    /// Diffusion on p: SGNHT's A (ξ₀ = A), SGMGT's σ_p.
    pub sigma_p: f64,
    /// SGMGT-D's first-order diffusion on θ (0 otherwise).
    pub sigma_theta: f64,
    /// SGMGT-D's first-order diffusion on ξ (0 otherwise).
    pub sigma_xi: f64,
    /// Softening c of the monomial-gamma kinetics (unused by SGNHT).
    pub c: f64,
    /// SGMGT's resampling period of p (0 = never; unused by SGNHT).
    pub resample_p: u32,
    /// SGMGT's resampling period of ξ (0 = never; unused by SGNHT).
    pub resample_xi: u32,
}

impl Settings {
    fn describe(&self, method: Method) -> String {
        match method {
            Method::Sgnht => format!("h={} A={}", self.h, self.sigma_p),
            Method::Sgmgt1 | Method::Sgmgt2 => format!(
                "h={} σp={} c={} T={}/{}",
                self.h, self.sigma_p, self.c, self.resample_p, self.resample_xi
            ),
            Method::SgmgtD1
            | Method::SgmgtD2
            | Method::SgmgtD1Corrected
            | Method::SgmgtD2Corrected => format!(
                "h={} σp={} σθ={} σξ={} c={} T={}/{}",
                self.h,
                self.sigma_p,
                // A corrected row's σ_θ is computed (corrected_settings), not a grid value.
                if method.corrected() {
                    sig(self.sigma_theta, 2)
                } else {
                    self.sigma_theta.to_string()
                },
                self.sigma_xi,
                self.c,
                self.resample_p,
                self.resample_xi
            ),
        }
    }
}

/// The settings used for each data set and method: the cells [`tune`] chose (`blr --tune
/// --runs 3`, seed 1; its table is `harness/results/blr/blr-tune.csv`). γ = 1 and T_p = 100
/// throughout; SGNHT's σ_p is its A (and ξ₀).
/// A corrected row has its SGMGT-D row's settings here; [`corrected_settings`] then lowers its
/// σ_θ where the noise estimates require it.
pub fn settings(data: DataSet, method: Method) -> Settings {
    use DataSet::{BreastCancer as B, Caravan as C, Pima as P, Ripley as R};
    use Method::{Sgmgt1, Sgmgt2, SgmgtD1, SgmgtD2, Sgnht as Nht};
    if method.corrected() {
        return settings(data, method.uncorrected());
    }
    // (h, σ_p, σ_θ, σ_ξ, c, T_ξ)
    let (h, sigma_p, sigma_theta, sigma_xi, c, resample_xi) = match (data, method) {
        (P, Nht) => (0.01, 10.0, 0.0, 0.0, 1.0, 0),
        (P, Sgmgt1) => (0.02, 1.0, 0.0, 0.0, 1.0, 0),
        (P, SgmgtD1) => (0.05, 1.0, 0.01, 0.01, 5.0, 0),
        (P, Sgmgt2) => (0.03, 1.0, 0.0, 0.0, 1.0, 100),
        (P, SgmgtD2) => (0.005, 1.0, 0.1, 0.1, 5.0, 0),
        (R, Nht) => (0.05, 1.0, 0.0, 0.0, 1.0, 0),
        (R, Sgmgt1) => (0.1, 1.0, 0.0, 0.0, 1.0, 100),
        (R, SgmgtD1) => (0.01, 1.0, 0.01, 0.1, 5.0, 100),
        (R, Sgmgt2) => (0.1, 1.0, 0.0, 0.0, 1.0, 0),
        (R, SgmgtD2) => (0.1, 1.0, 0.1, 0.1, 5.0, 100),
        (C, Nht) => (0.002, 1.0, 0.0, 0.0, 1.0, 0),
        (C, Sgmgt1) => (0.01, 1.0, 0.0, 0.0, 5.0, 0),
        (C, SgmgtD1) => (0.005, 1.0, 0.01, 0.01, 5.0, 100),
        (C, Sgmgt2) => (0.07, 1.0, 0.0, 0.0, 1.0, 100),
        (C, SgmgtD2) => (0.01, 1.0, 0.01, 0.01, 5.0, 0),
        (B, Nht) => (0.01, 1.0, 0.0, 0.0, 1.0, 0),
        (B, Sgmgt1) => (0.1, 1.0, 0.0, 0.0, 1.0, 100),
        (B, SgmgtD1) => (0.1, 1.0, 0.1, 0.1, 5.0, 0),
        (B, Sgmgt2) => (0.1, 1.0, 0.0, 0.0, 5.0, 100),
        (B, SgmgtD2) => (0.1, 1.0, 0.1, 0.1, 5.0, 100),
        (_, Method::SgmgtD1Corrected | Method::SgmgtD2Corrected) => unreachable!("handled above"),
    };
    Settings {
        h,
        sigma_p,
        sigma_theta,
        sigma_xi,
        c,
        resample_p: 100,
        resample_xi,
    }
}

/// The largest 2σ_θ maxⱼ B̂ⱼ a corrected row allows: θ's velocity factor 1 − 2σ_θB̂ⱼ stays at
/// least ½ in every coordinate, so the noisiest weights keep half their Hamiltonian transport.
pub const NOISE_HEADROOM: f64 = 0.5;

/// The settings of `method` on `problem`: [`settings`], and for a corrected row σ_θ lowered to
/// [`NOISE_HEADROOM`] / (2 maxⱼ B̂ⱼ) where the SGMGT-D row's σ_θ exceeds it, with B̂ⱼ the
/// per-weight minibatch noise at the posterior mode ([`Problem::gradient_noise`]) — a valid
/// correction needs 2σ_θB̂ⱼ < 1 in every coordinate (`Sgmgt::set_noise_estimates`).
pub fn corrected_settings(problem: &Problem, method: Method) -> Settings {
    let s = settings(problem.data, method);
    if !method.corrected() {
        return s;
    }
    let b_max = problem
        .gradient_noise(s.h, BATCH)
        .into_iter()
        .fold(0.0, f64::max);
    Settings {
        sigma_theta: s.sigma_theta.min(NOISE_HEADROOM / (2.0 * b_max)),
        ..s
    }
}

/// The column of `data` in Table 1 (P, R, C; none for breast cancer).
fn table1_column(data: DataSet) -> Option<usize> {
    match data {
        DataSet::Pima => Some(0),
        DataSet::Ripley => Some(1),
        DataSet::Caravan => Some(2),
        DataSet::BreastCancer => None,
    }
}

/// Table 1's AUROC (P, R, C; none for breast cancer).
pub fn paper_auroc(data: DataSet, method: Method) -> Option<f64> {
    let col = table1_column(data)?;
    let row: [f64; 3] = match method {
        Method::Sgnht => [0.86, 0.95, 0.65],
        Method::Sgmgt1 => [0.86, 0.87, 0.70],
        Method::SgmgtD1 => [0.93, 0.98, 0.73],
        Method::Sgmgt2 => [0.88, 0.86, 0.62],
        Method::SgmgtD2 => [0.90, 0.97, 0.69],
        Method::SgmgtD1Corrected | Method::SgmgtD2Corrected => return None,
    };
    Some(row[col])
}

/// Table 1's median ESS (reported for SGNHT and SGMGT-D only).
pub fn paper_ess(data: DataSet, method: Method) -> Option<f64> {
    let col = table1_column(data)?;
    let row: [f64; 3] = match method {
        Method::Sgnht => [2077.0, 1761.0, 1873.0],
        Method::SgmgtD1 => [4244.0, 1494.0, 3605.0],
        Method::SgmgtD2 => [3430.0, 2265.0, 2969.0],
        _ => return None,
    };
    Some(row[col])
}

/// The weight whose trace is plotted, and its name.
pub fn trace_weight(data: DataSet) -> (usize, &'static str) {
    match data {
        DataSet::Pima => (2, "glu"),
        DataSet::Ripley => (1, "x₁"),
        DataSet::Caravan => (47, "PPERSAUT"),
        DataSet::BreastCancer => (28, "worst concave points"),
    }
}

/// The data sets a run covers.
fn data_sets(opts: &RunOptions) -> Vec<DataSet> {
    if opts.quick {
        vec![DataSet::Pima]
    } else {
        DataSet::ALL.to_vec()
    }
}

/// The posteriors a run covers, with their held-out splits.
fn problems(opts: &RunOptions) -> Result<Vec<Problem>, ExperimentError> {
    data_sets(opts).into_iter().map(Problem::load).collect()
}

/// Iterations and burn-in of a run: the paper's, or the quick ones.
fn protocol_length(opts: &RunOptions) -> (usize, usize) {
    if opts.quick {
        (QUICK_ITERATIONS, QUICK_BURN_IN)
    } else {
        (ITERATIONS, BURN_IN)
    }
}

/// What `blr` runs: Table 1, or one of the studies behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Table 1 ([`run`]).
    Table,
    /// The step-size search on a validation split ([`tune`]).
    Tune,
    /// The held-out AUROC of the posterior mode on this many random re-splits
    /// ([`run_split_spread`]).
    Splits(usize),
    /// Median ESS against the minibatch size ([`batch_sweep`]).
    BatchSweep,
    /// Table 1's ESS under other readings of its protocol ([`ess_readings`]).
    EssReadings,
    /// The ESS estimators against the true ESS ([`ess_audit`]).
    EssAudit,
    /// The step size (and SGNHT's friction) by the KSD of short runs, against the validation
    /// search's choice ([`ksd_tune`]).
    KsdTune,
}

/// Runs `mode` and returns the text the CLI prints.
pub fn cli(opts: &RunOptions, mode: Mode) -> Result<String, ExperimentError> {
    match mode {
        Mode::Table => run(opts).map(|r| report(&r)),
        Mode::Tune => tune(opts).map(|t| tune::report(&t, opts)),
        Mode::Splits(n) => run_split_spread(opts, n).map(|t| splits::report(&t, n, opts)),
        Mode::BatchSweep => batch_sweep(opts).map(|rows| sweep::report(&rows, opts)),
        Mode::EssReadings => ess_readings(opts).map(|rows| readings::report(&rows, opts)),
        Mode::EssAudit => ess_audit(opts).map(|rows| readings::audit_report(&rows, opts)),
        Mode::KsdTune => ksd_tune(opts).map(|t| ksd_tune::report(&t)),
    }
}
