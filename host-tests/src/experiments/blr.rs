//! `blr`: Bayesian logistic regression on real data, SGNHT against SGMGT and SGMGT-D with a = 1, 2
//! (Zhang et al. 2017 §4.2, Table 1).
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
//!   ([`ess_unsplit`] on that one chain), the median over the weights; the table gives the mean
//!   (± sd) of that median over the runs;
//! * **first-dip ESS** (not in the paper, to explain the ESS gap): the same median with the
//!   autocorrelation sum cut at the first lag where ρ̂ < 0.01 ([`ess_first_dip`]), the rule of
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
//! how much of the ESS gap to Table 1 the minibatch accounts for.

use super::common::{ExperimentError, RunOptions, drive, sig};
use crate::diagnostics::{auroc, ess_first_dip, ess_unsplit, quantile};
use crate::models::LogisticRegression;
use crate::models::logistic_regression::{
    Basis, DataSet, Design, HOLDOUT_FRACTION, Laplace, PRIOR_VARIANCE, RawData, SPLIT_SEED,
    add_probabilities, data_dir, prepare,
};
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use indicatif::ProgressBar;
use rand_pcg::Pcg64;
use rayon::prelude::*;
use sgmcmc::kinetic::{Kinetic, MonomialGamma};
use sgmcmc::rng::standard_normal_f64;
use sgmcmc::sampler::{Sgmgt, SgmgtParams, Sgnht, SgnhtParams};
use sgmcmc::{ChainState, Integrator, Sampler, StepError, Workspace};

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
/// Threshold of the first-dip ESS column ([`ess_first_dip`]): 0.01, as in the first author's
/// MGHMC code.
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
/// --runs 3`, seed 1; its table is `host-tests/results/blr/blr-tune.csv`). γ = 1 and T_p = 100
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

/// Table 1's AUROC (P, R, C; none for breast cancer).
pub fn paper_auroc(data: DataSet, method: Method) -> Option<f64> {
    let col = match data {
        DataSet::Pima => 0,
        DataSet::Ripley => 1,
        DataSet::Caravan => 2,
        DataSet::BreastCancer => return None,
    };
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
    let col = match data {
        DataSet::Pima => 0,
        DataSet::Ripley => 1,
        DataSet::Caravan => 2,
        DataSet::BreastCancer => return None,
    };
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

/// What one run produced.
#[derive(Clone, Debug)]
pub struct RunOut {
    /// AUROC of the posterior-mean predictive probability on the held-out split.
    pub auroc: f64,
    /// Median over the weights of the per-weight ESS of the post-burn-in samples.
    pub median_ess: f64,
    /// The same with the first-dip estimator ([`ess_first_dip`], threshold [`FIRST_DIP`]).
    pub median_ess_first_dip: f64,
    /// Posterior means of the weights (post-burn-in).
    pub mean: Vec<f64>,
    /// Median over the weights of (sample sd / Laplace sd): ≈ 1 for a chain that samples the
    /// posterior (the Laplace approximation is close to it for these N ≫ d data sets), > 1 for
    /// one that runs hot, < 1 for one that runs cold or has not explored yet.
    pub sd_ratio: f64,
    /// Mean kinetic temperature after burn-in (1 at equilibrium).
    pub temperature: f64,
    /// The plotted weight at every iteration (burn-in included).
    pub trace: Vec<f64>,
}

/// One (data set, method) row: its runs and their summaries.
#[derive(Clone, Debug)]
pub struct BlrRow {
    /// Data set.
    pub data: DataSet,
    /// Method.
    pub method: Method,
    /// Settings used.
    pub settings: Settings,
    /// The runs that finished (none if the method is not available).
    pub runs: Vec<RunOut>,
    /// Why the other runs stopped (a sampler that diverges is reported, not hidden).
    pub diverged: Vec<StepError>,
    /// σ_θ × the median minibatch gradient noise B at the posterior mode
    /// ([`Problem::median_gradient_noise`] at the row's h): the excess temperature of SGMGT-D's
    /// first-order θ channel as 001 eq. 13 prints it (0 without that term).
    pub theta_noise_excess: f64,
}

fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, v.sqrt())
}

impl BlrRow {
    /// Mean and sd of the runs' AUROC.
    pub fn auroc(&self) -> Option<(f64, f64)> {
        (!self.runs.is_empty())
            .then(|| mean_sd(&self.runs.iter().map(|r| r.auroc).collect::<Vec<_>>()))
    }

    /// Mean and sd of the runs' median ESS.
    pub fn median_ess(&self) -> Option<(f64, f64)> {
        (!self.runs.is_empty())
            .then(|| mean_sd(&self.runs.iter().map(|r| r.median_ess).collect::<Vec<_>>()))
    }

    /// Mean and sd of the runs' median first-dip ESS ([`ess_first_dip`]).
    pub fn median_ess_first_dip(&self) -> Option<(f64, f64)> {
        (!self.runs.is_empty()).then(|| {
            mean_sd(
                &self
                    .runs
                    .iter()
                    .map(|r| r.median_ess_first_dip)
                    .collect::<Vec<_>>(),
            )
        })
    }

    /// Mean over the runs of the sd ratio to the Laplace approximation.
    pub fn sd_ratio(&self) -> Option<f64> {
        (!self.runs.is_empty())
            .then(|| mean_sd(&self.runs.iter().map(|r| r.sd_ratio).collect::<Vec<_>>()).0)
    }

    /// Mean post-burn-in kinetic temperature over the runs.
    pub fn temperature(&self) -> Option<f64> {
        (!self.runs.is_empty())
            .then(|| mean_sd(&self.runs.iter().map(|r| r.temperature).collect::<Vec<_>>()).0)
    }
}

/// The experiment's result.
#[derive(Clone, Debug)]
pub struct BlrResult {
    /// One row per data set and method.
    pub rows: Vec<BlrRow>,
    /// Iterations per run.
    pub iterations: usize,
    /// Burn-in.
    pub burn_in: usize,
    /// Runs per row.
    pub runs: usize,
}

/// Iterations, burn-in and what to observe in a run.
#[derive(Clone, Copy, Debug)]
struct Protocol {
    iterations: usize,
    burn_in: usize,
    trace_weight: usize,
    /// Minibatch rows per gradient ([`BATCH`] but in [`batch_sweep`]; clamped to the data).
    batch: usize,
}

/// A posterior to sample, the rows to predict and the Laplace reference.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Data set.
    pub data: DataSet,
    /// The posterior on the training rows.
    pub model: LogisticRegression,
    /// The rows whose AUROC is reported.
    pub test: Design,
    /// Laplace approximation of the posterior.
    pub laplace: Laplace,
}

impl Problem {
    /// The minibatch gradient noise at the posterior mode ŵ in SGHMC's units, B_j = ½ h V_j,
    /// per weight j: V_j is the variance of the scaled minibatch gradient (N/n) Σ_{i∈batch} g_ij
    /// for [`BATCH`] rows drawn without replacement, g_ij = (σ(ŵᵀx_i) − y_i) x_ij the row's
    /// likelihood gradient: V_j = N² s_j² (N − n) / (n (N − 1)), s_j² their variance over the
    /// rows (the prior's gradient is exact). Returns the median over the weights.
    ///
    /// Why: SGMGT-D's first-order term −σ_θ∇Ũ carries this noise into θ, where no thermostat
    /// absorbs it (`SgmgtParams::with_noise_estimate`); σ_θ × this value is the excess
    /// temperature of that channel when B̂ = 0, and 2σ_θB̂ < 1 bounds the σ_θ a correction allows.
    pub fn median_gradient_noise(&self, h: f64) -> f64 {
        self.median_gradient_noise_at(h, BATCH)
    }

    /// [`Problem::median_gradient_noise`] for minibatches of `batch` rows (0 for every row).
    pub fn median_gradient_noise_at(&self, h: f64, batch: usize) -> f64 {
        quantile(&self.gradient_noise(h, batch), 0.5).unwrap_or(f64::NAN)
    }

    /// The per-weight minibatch gradient noise B_j = ½hV_j at the posterior mode of
    /// [`Problem::median_gradient_noise`], for minibatches of `batch` rows (0 or ≥ N: every row,
    /// B = 0): the per-coordinate estimates SGMGT-D's θ term needs
    /// (`Sgmgt::set_noise_estimates`).
    pub fn gradient_noise(&self, h: f64, batch: usize) -> Vec<f64> {
        let x = &self.model.data;
        let (n_rows, d) = (x.len(), x.d);
        let w = &self.laplace.mode;
        let mut sum = vec![0.0; d];
        let mut sum2 = vec![0.0; d];
        for i in 0..n_rows {
            let row = x.row(i);
            let z: f64 = row.iter().zip(w).map(|(a, b)| a * b).sum();
            let r = crate::models::logistic_regression::sigmoid(z) - x.y[i];
            for j in 0..d {
                let g = r * row[j];
                sum[j] += g;
                sum2[j] += g * g;
            }
        }
        let nf = n_rows as f64;
        let batch = if batch == 0 {
            n_rows
        } else {
            batch.min(n_rows)
        } as f64;
        (0..d)
            .map(|j| {
                let mean = sum[j] / nf;
                let s2 = (sum2[j] / nf - mean * mean).max(0.0) * nf / (nf - 1.0);
                let v = nf * nf * s2 * (nf - batch) / (batch * (nf - 1.0));
                0.5 * h * v
            })
            .collect()
    }

    fn new(data: DataSet, train: Design, test: Design) -> Result<Self, ExperimentError> {
        let model = LogisticRegression::new(train, PRIOR_VARIANCE);
        let laplace = model.laplace().ok_or_else(|| {
            ExperimentError::Invalid(format!("{}: no Laplace approximation", data.name()))
        })?;
        Ok(Problem {
            data,
            model,
            test,
            laplace,
        })
    }

    /// The training and held-out splits of `data`.
    pub fn load(data: DataSet) -> Result<Self, ExperimentError> {
        let (train, test) = data
            .load(&data_dir())
            .map_err(|e| ExperimentError::Io(e.to_string()))?;
        Self::new(data, train, test)
    }

    /// The training split divided again into 80 % fit / 20 % validation (seed
    /// [`SPLIT_SEED`] + 1), standardised again on the fit part: what [`tune`] uses.
    pub fn validation(&self) -> Result<Self, ExperimentError> {
        let train = &self.model.data;
        let raw = RawData {
            rows: (0..train.len())
                .map(|i| train.row(i)[1..].to_vec())
                .collect(),
            labels: train.y.clone(),
        };
        let (fit, val) = raw.holdout(HOLDOUT_FRACTION, SPLIT_SEED + 1);
        let (fit, val) = prepare(fit, val, Basis::Linear);
        Self::new(self.data, fit, val)
    }
}

/// Runs `sampler` through the protocol and evaluates it on `problem`'s held-out rows.
fn sample<S, G>(
    sampler: &mut S,
    grad: &mut G,
    rng: &mut Pcg64,
    problem: &Problem,
    protocol: Protocol,
    pb: &ProgressBar,
) -> Result<RunOut, StepError>
where
    S: Sampler<f64, G> + ChainState<f64>,
    G: ?Sized,
{
    let test = &problem.test;
    let d = test.d;
    let kept = protocol.iterations - protocol.burn_in;
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(kept); d];
    let mut prob = vec![0.0; test.len()];
    let mut trace = Vec::with_capacity(protocol.iterations);
    let mut temperature = 0.0;
    drive(sampler, grad, rng, protocol.iterations, pb, |t, s, st| {
        let w = s.position();
        trace.push(w[protocol.trace_weight]);
        if t >= protocol.burn_in {
            for (dj, wj) in draws.iter_mut().zip(w) {
                dj.push(*wj);
            }
            add_probabilities(test, w, &mut prob);
            temperature += st.kinetic_temperature.unwrap_or(f64::NAN);
        }
    })?;
    let s = kept as f64;
    for p in &mut prob {
        *p /= s;
    }
    let auc = auroc(&prob, &test.positives()).unwrap_or(f64::NAN);
    let ess: Vec<f64> = draws
        .iter()
        .map(|x| ess_unsplit(&[x]).map_or(f64::NAN, |e| e.ess))
        .collect();
    let ess_dip: Vec<f64> = draws
        .iter()
        .map(|x| ess_first_dip(x, FIRST_DIP).unwrap_or(f64::NAN))
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
    Ok(RunOut {
        auroc: auc,
        median_ess: quantile(&ess, 0.5).unwrap_or(f64::NAN),
        median_ess_first_dip: quantile(&ess_dip, 0.5).unwrap_or(f64::NAN),
        mean,
        sd_ratio: quantile(&ratios, 0.5).unwrap_or(f64::NAN),
        temperature: temperature / s,
        trace,
    })
}

fn random_start(rng: &mut Pcg64, d: usize) -> Vec<f64> {
    (0..d).map(|_| standard_normal_f64(rng)).collect()
}

fn run_sgnht(
    problem: &Problem,
    s: Settings,
    protocol: Protocol,
    seed: u64,
    pb: &ProgressBar,
) -> Result<RunOut, StepError> {
    let d = problem.model.dim();
    let mut rng = Pcg64::new(seed as u128, 0xb1a);
    let mut theta = random_start(&mut rng, d);
    let mut p = random_start(&mut rng, d);
    let (mut g, mut scratch) = (vec![0.0; d], vec![0.0; d]);
    let mut grad = problem
        .model
        .stochastic_gradient(protocol.batch, seed ^ 0x5eed_ba7c);
    let params = SgnhtParams::new(s.h, s.sigma_p).expect("settings are valid");
    let mut sampler = Sgnht::new(
        params,
        Integrator::Euler,
        &mut theta,
        &mut p,
        Workspace::new(&mut g, &mut scratch),
    )
    .expect("buffers of one length");
    sample(&mut sampler, &mut grad, &mut rng, problem, protocol, pb)
}

fn run_sgmgt<K: Kinetic<f64>>(
    problem: &Problem,
    kinetic: K,
    s: Settings,
    noise_estimates: Option<&[f64]>,
    protocol: Protocol,
    seed: u64,
    pb: &ProgressBar,
) -> Result<RunOut, StepError> {
    let d = problem.model.dim();
    let mut rng = Pcg64::new(seed as u128, 0xb1a);
    let mut theta = random_start(&mut rng, d);
    let (mut p, mut xi) = (vec![0.0; d], vec![0.0; d]);
    let (mut g, mut scratch) = (vec![0.0; d], vec![0.0; d]);
    let mut grad = problem
        .model
        .stochastic_gradient(protocol.batch, seed ^ 0x5eed_ba7c);
    let params = SgmgtParams::new(s.h)
        .and_then(|p| p.with_sigma_p(s.sigma_p))
        .and_then(|p| p.with_gamma(1.0))
        .and_then(|p| p.with_sigma_theta(s.sigma_theta))
        .and_then(|p| p.with_sigma_xi(s.sigma_xi))
        .expect("settings are valid")
        .with_resampling(s.resample_p, s.resample_xi)
        .with_integrator(Integrator::Euler);
    let mut sampler = Sgmgt::new(
        params,
        kinetic,
        &mut theta,
        &mut p,
        &mut xi,
        Workspace::new(&mut g, &mut scratch),
    )
    .expect("buffers of one length");
    if let Some(b) = noise_estimates {
        sampler
            .set_noise_estimates(b)
            .expect("corrected_settings keeps 2σ_θB̂ⱼ < 1");
    }
    // p₀ from exp(−K); ξ₀ = 0, the mean of exp(−F).
    sampler.resample_momentum(&mut rng);
    sample(&mut sampler, &mut grad, &mut rng, problem, protocol, pb)
}

/// One run of `method` with settings `s` on `problem`.
fn run_chain(
    problem: &Problem,
    method: Method,
    s: Settings,
    protocol: Protocol,
    seed: u64,
    pb: &ProgressBar,
) -> Result<RunOut, StepError> {
    match method {
        Method::Sgnht => run_sgnht(problem, s, protocol, seed, pb),
        _ => {
            let kinetic = MonomialGamma::softened(method.a(), s.c).expect("a ∈ {1, 2}, c > 0");
            // The corrected rows' per-weight B̂ⱼ = ½hVⱼ at the posterior mode.
            let b = method
                .corrected()
                .then(|| problem.gradient_noise(s.h, protocol.batch));
            run_sgmgt(problem, kinetic, s, b.as_deref(), protocol, seed, pb)
        }
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

/// Runs the experiment (quick: Pima only, [`QUICK_ITERATIONS`] iterations, `opts.chains` runs;
/// full: all four data sets, [`ITERATIONS`], `opts.chains` runs — the CLI passes 5). Writes
/// `blr.csv` (the table), `blr-runs.csv` (every run) and `blr-trace-<data>.png` (one weight's
/// trace in the first run of each method) into `opts.out`.
pub fn run(opts: &RunOptions) -> Result<BlrResult, ExperimentError> {
    opts.prepare()?;
    let (iterations, burn_in) = protocol_length(opts);
    let problems: Vec<Problem> = data_sets(opts)
        .into_iter()
        .map(Problem::load)
        .collect::<Result<_, _>>()?;
    let tasks: Vec<(usize, Method, usize)> = (0..problems.len())
        .flat_map(|k| {
            Method::REPORTED
                .into_iter()
                .flat_map(move |m| (0..opts.chains).map(move |c| (k, m, c)))
        })
        .collect();
    let pb = opts.progress_bar((tasks.len() * iterations) as u64, "blr");
    let outs: Vec<Result<RunOut, StepError>> = tasks
        .par_iter()
        .map(|&(k, m, c)| {
            let problem = &problems[k];
            let protocol = Protocol {
                iterations,
                burn_in,
                trace_weight: trace_weight(problem.data).0,
                batch: BATCH,
            };
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
            run_chain(problem, m, s, protocol, opts.chain_seed(config, c), &pb)
        })
        .collect();
    pb.finish_and_clear();
    let mut outs = outs.into_iter();
    let mut rows = Vec::new();
    for problem in &problems {
        for method in Method::REPORTED {
            let s = corrected_settings(problem, method);
            let mut row = BlrRow {
                data: problem.data,
                method,
                settings: s,
                runs: Vec::new(),
                diverged: Vec::new(),
                theta_noise_excess: s.sigma_theta * problem.median_gradient_noise(s.h),
            };
            for r in outs.by_ref().take(opts.chains) {
                match r {
                    Ok(run) => row.runs.push(run),
                    Err(e) => row.diverged.push(e),
                }
            }
            rows.push(row);
        }
    }
    let result = BlrResult {
        rows,
        iterations,
        burn_in,
        runs: opts.chains,
    };
    write_outputs(opts, &result)?;
    Ok(result)
}

fn write_outputs(opts: &RunOptions, r: &BlrResult) -> Result<(), ExperimentError> {
    csv_table(r).write_csv(&opts.out.join("blr.csv"))?;
    let mut runs = Table::new([
        "data",
        "method",
        "run",
        "auroc",
        "median_ess",
        "median_ess_first_dip",
        "sd_ratio_to_laplace",
        "temperature",
    ]);
    for row in &r.rows {
        for (i, run) in row.runs.iter().enumerate() {
            runs.row([
                row.data.letter().to_string(),
                row.method.label().to_string(),
                i.to_string(),
                format!("{}", run.auroc),
                format!("{}", run.median_ess),
                format!("{}", run.median_ess_first_dip),
                format!("{}", run.sd_ratio),
                format!("{}", run.temperature),
            ]);
        }
    }
    runs.write_csv(&opts.out.join("blr-runs.csv"))?;
    let sets: Vec<DataSet> = DataSet::ALL
        .into_iter()
        .filter(|d| r.rows.iter().any(|row| row.data == *d))
        .collect();
    for ds in sets {
        let (_, name) = trace_weight(ds);
        let series: Vec<Series> = r
            .rows
            .iter()
            .filter(|row| row.data == ds && !row.runs.is_empty())
            .enumerate()
            .map(|(i, row)| {
                let pts = row.runs[0]
                    .trace
                    .iter()
                    .enumerate()
                    .map(|(t, &w)| (t as f64, w))
                    .collect();
                Series::new(row.method.label(), pts, i + 1)
            })
            .collect();
        let title = format!(
            "BLR {} ({}): trace of the weight of {name}, run 1 (burn-in {})",
            ds.name(),
            ds.letter(),
            r.burn_in
        );
        line_chart(
            &opts.out.join(format!("blr-trace-{}.png", ds.name())),
            &Chart {
                title: &title,
                x_label: "iteration",
                y_label: "weight",
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
            },
            &series,
        )?;
    }
    Ok(())
}

fn pm(x: Option<(f64, f64)>, digits: usize) -> String {
    x.map_or("–".into(), |(m, s)| {
        format!("{} ± {}", sig(m, digits), sig(s, 2))
    })
}

/// Our numbers beside Table 1's, one row per data set and method.
pub fn table(r: &BlrResult) -> Table {
    let mut t = Table::new([
        "data (D)",
        "method",
        "settings",
        "AUROC",
        "paper AUROC",
        "median ESS",
        "first-dip ESS",
        "paper ESS",
        "sd/Laplace",
        "temp.",
        "σ_θB",
        "diverged",
    ]);
    for row in &r.rows {
        t.row([
            format!("{} ({})", row.data.letter(), row.data.dim()),
            row.method.label().to_string(),
            row.settings.describe(row.method),
            pm(row.auroc(), 3),
            paper_auroc(row.data, row.method).map_or("–".into(), |x| format!("{x:.2}")),
            row.median_ess()
                .map_or("–".into(), |(m, s)| format!("{m:.0} ± {s:.0}")),
            row.median_ess_first_dip()
                .map_or("–".into(), |(m, s)| format!("{m:.0} ± {s:.0}")),
            paper_ess(row.data, row.method).map_or("–".into(), |x| format!("{x:.0}")),
            row.sd_ratio().map_or("–".into(), |x| sig(x, 3)),
            row.temperature().map_or("–".into(), |x| sig(x, 3)),
            if row.theta_noise_excess > 0.0 {
                sig(row.theta_noise_excess, 2)
            } else {
                "–".into()
            },
            format!(
                "{}/{}",
                row.diverged.len(),
                row.runs.len() + row.diverged.len()
            ),
        ]);
    }
    t
}

/// The table as machine-readable CSV columns.
fn csv_table(r: &BlrResult) -> Table {
    let mut t = Table::new([
        "data",
        "weights",
        "method",
        "h",
        "sigma_p",
        "sigma_theta",
        "sigma_xi",
        "c",
        "runs",
        "auroc_mean",
        "auroc_sd",
        "paper_auroc",
        "median_ess_mean",
        "median_ess_sd",
        "median_ess_first_dip_mean",
        "paper_median_ess",
        "sd_ratio_to_laplace",
        "temperature",
        "sigma_theta_times_b",
        "diverged",
    ]);
    let f = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    for row in &r.rows {
        let s = row.settings;
        t.row([
            row.data.letter().to_string(),
            row.data.dim().to_string(),
            row.method.label().to_string(),
            format!("{}", s.h),
            format!("{}", s.sigma_p),
            format!("{}", s.sigma_theta),
            format!("{}", s.sigma_xi),
            format!("{}", s.c),
            row.runs.len().to_string(),
            f(row.auroc().map(|x| x.0)),
            f(row.auroc().map(|x| x.1)),
            f(paper_auroc(row.data, row.method)),
            f(row.median_ess().map(|x| x.0)),
            f(row.median_ess().map(|x| x.1)),
            f(row.median_ess_first_dip().map(|x| x.0)),
            f(paper_ess(row.data, row.method)),
            f(row.sd_ratio()),
            f(row.temperature()),
            format!("{}", row.theta_noise_excess),
            row.diverged.len().to_string(),
        ]);
    }
    t
}

/// Random re-splits behind [`split_spread`]: enough for a 5–95 % range to within ≈ ±0.01.
pub const SPLITS: usize = 100;

/// How much the held-out AUROC of the model itself (not of a sampler) moves with the split.
#[derive(Clone, Debug)]
pub struct SplitSpread {
    /// Data set.
    pub data: DataSet,
    /// AUROC of the posterior mode's predictive probability on our fixed split.
    pub fixed_split: f64,
    /// The same on each random re-split, sorted.
    pub aurocs: Vec<f64>,
}

impl SplitSpread {
    /// Mean and sd over the re-splits.
    pub fn mean_sd(&self) -> (f64, f64) {
        mean_sd(&self.aurocs)
    }

    /// The `q`-quantile over the re-splits.
    pub fn quantile(&self, q: f64) -> f64 {
        quantile(&self.aurocs, q).unwrap_or(f64::NAN)
    }

    /// The share of re-splits whose AUROC is at least `x`.
    pub fn share_at_least(&self, x: f64) -> f64 {
        self.aurocs.iter().filter(|&&a| a >= x).count() as f64 / self.aurocs.len().max(1) as f64
    }
}

/// The held-out AUROC of the posterior mode ŵ ([`LogisticRegression::laplace`]) on our split
/// and on `splits` random re-splits of the pooled rows with the same held-out fraction
/// ([`DataSet::pooled`]; each split standardised on its own training part), seeds
/// `seed + 1 … seed + splits`.
///
/// Why the mode: on every data set our five samplers' posterior-mean predictive AUROCs agree
/// within 0.002 on P, R, B and 0.04 on C, and the mode's ranks the held-out rows almost as
/// they do; so this spread is what the model and the data allow, the part of an AUROC
/// difference between two papers that no sampler can change.
pub fn split_spread(
    data: DataSet,
    splits: usize,
    seed: u64,
) -> Result<SplitSpread, ExperimentError> {
    let io = |e: crate::models::logistic_regression::DataError| ExperimentError::Io(e.to_string());
    let mode_auroc = |train: Design, test: &Design| -> Result<f64, ExperimentError> {
        let model = LogisticRegression::new(train, PRIOR_VARIANCE);
        let lap = model.laplace().ok_or_else(|| {
            ExperimentError::Invalid(format!("{}: Hessian not positive definite", data.name()))
        })?;
        let mut prob = vec![0.0; test.len()];
        add_probabilities(test, &lap.mode, &mut prob);
        auroc(&prob, &test.positives()).map_err(|e| ExperimentError::Invalid(e.to_string()))
    };
    let (train, test) = data.load(&data_dir()).map_err(io)?;
    let fixed_split = mode_auroc(train, &test)?;
    let (pooled, fraction, basis) = data.pooled(&data_dir()).map_err(io)?;
    let mut aurocs = (1..=splits as u64)
        .into_par_iter()
        .map(|k| {
            let (tr, te) = pooled.holdout(fraction, seed.wrapping_add(k));
            let (tr, te) = prepare(tr, te, basis);
            mode_auroc(tr, &te)
        })
        .collect::<Result<Vec<f64>, _>>()?;
    aurocs.sort_by(f64::total_cmp);
    Ok(SplitSpread {
        data,
        fixed_split,
        aurocs,
    })
}

/// [`split_spread`] for every data set (P, R, C with `splits` re-splits; B too, except in quick
/// mode, which does Pima only); writes `blr-splits.csv` (one row per data set and split) and
/// returns [`split_table`].
pub fn run_split_spread(opts: &RunOptions, splits: usize) -> Result<Table, ExperimentError> {
    opts.prepare()?;
    let sets: &[DataSet] = if opts.quick {
        &[DataSet::Pima]
    } else {
        &DataSet::ALL
    };
    let spreads = sets
        .iter()
        .map(|&d| split_spread(d, splits, opts.seed))
        .collect::<Result<Vec<_>, _>>()?;
    let mut csv = Table::new([
        "data",
        "rank among re-splits (ours: the fixed split)",
        "mode_auroc",
    ]);
    for sp in &spreads {
        csv.row([
            sp.data.letter().into(),
            "ours".into(),
            format!("{}", sp.fixed_split),
        ]);
        for (k, a) in sp.aurocs.iter().enumerate() {
            csv.row([sp.data.letter().into(), (k + 1).to_string(), format!("{a}")]);
        }
    }
    csv.write_csv(&opts.out.join("blr-splits.csv"))?;
    Ok(split_table(&spreads))
}

/// [`split_spread`] beside Table 1's AUROCs: where the paper's values fall among the splits.
pub fn split_table(spreads: &[SplitSpread]) -> Table {
    let mut t = Table::new([
        "data (D)",
        "mode AUROC, our split",
        "re-splits: mean ± sd",
        "5–95 %",
        "max",
        "paper AUROC (5 methods)",
        "share ≥ paper's best",
    ]);
    for sp in spreads {
        let paper: Vec<f64> = Method::ALL
            .iter()
            .filter_map(|&m| paper_auroc(sp.data, m))
            .collect();
        let (m, s) = sp.mean_sd();
        let best = paper.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        t.row([
            format!("{} ({})", sp.data.letter(), sp.data.dim()),
            format!("{:.3}", sp.fixed_split),
            format!("{m:.3} ± {s:.3}"),
            format!("{:.3}–{:.3}", sp.quantile(0.05), sp.quantile(0.95)),
            format!("{:.3}", sp.aurocs.last().copied().unwrap_or(f64::NAN)),
            if paper.is_empty() {
                "–".into()
            } else {
                paper
                    .iter()
                    .map(|x| format!("{x:.2}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            if paper.is_empty() {
                "–".into()
            } else {
                format!("{:.2}", sp.share_at_least(best))
            },
        ]);
    }
    t
}

/// The means over a [`tune`] cell's finished runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneMeans {
    /// Validation AUROC.
    pub auroc: f64,
    /// Median ESS.
    pub ess: f64,
    /// Sample sd / Laplace sd (median over the weights).
    pub sd_ratio: f64,
    /// Kinetic temperature.
    pub temperature: f64,
}

/// One cell of a [`tune`] grid: its family, how many runs diverged, and the means over the other
/// runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneCell {
    /// Index of the family (settings equal but for h) within the grid.
    pub family: usize,
    /// Runs that diverged.
    pub diverged: usize,
    /// Means over the runs that finished, if any did.
    pub means: Option<TuneMeans>,
}

/// Tolerances on |ln(sd ratio)| tried in turn by [`choose`]: ≈ ±10 %, ±22 %, ±50 %, any.
pub const SD_TOLERANCES: [f64; 4] = [0.1, 0.2, 0.4, f64::INFINITY];

/// The selection rule of [`tune`] over one data set and method's grid, each family in
/// increasing h:
///
/// 1. a cell is *stable* if no run diverged, neither at its h nor at the next larger h of its
///    family (a margin: the fit split is smaller than the training split, so the final run sees
///    larger gradients and gradient noise);
/// 2. it is *competitive* if also its validation AUROC is within 0.02 of the best stable cell's
///    (validation splits of 50–930 rows make smaller AUROC differences noise);
/// 3. it is *accurate* within τ if |ln(sd ratio)| ≤ τ, the sample sds matching the Laplace sds
///    (a chain can buy ESS by running hot, which the AUROC of a posterior mean hardly sees);
///    τ is the first of [`SD_TOLERANCES`] for which some competitive cell is accurate;
/// 4. among those, the one with the largest median ESS wins. Returns its index.
pub fn choose(grid: &[TuneCell]) -> Option<usize> {
    let stable: Vec<(usize, TuneMeans)> = grid
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            c.diverged == 0
                && grid
                    .get(i + 1)
                    .is_none_or(|next| next.family != c.family || next.diverged == 0)
        })
        .filter_map(|(i, c)| c.means.map(|m| (i, m)))
        .collect();
    let best = stable
        .iter()
        .map(|(_, m)| m.auroc)
        .fold(f64::NEG_INFINITY, f64::max);
    let competitive: Vec<&(usize, TuneMeans)> = stable
        .iter()
        .filter(|(_, m)| m.auroc >= best - 0.02)
        .collect();
    SD_TOLERANCES.iter().find_map(|&tol| {
        competitive
            .iter()
            .filter(|(_, m)| m.sd_ratio.ln().abs() <= tol)
            .max_by(|a, b| a.1.ess.total_cmp(&b.1.ess))
            .map(|(i, _)| *i)
    })
}

/// The step sizes [`tune`] tries.
pub const TUNE_STEPS: [f64; 10] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1,
];

/// The diffusions on p [`tune`] tries for SGNHT (its A, which is also its ξ₀: with a large
/// gradient noise B the scalar thermostat must climb from ξ₀ to ≈ A + B at a rate of order 1 per
/// time unit, which a run of 5000 h time units may not allow unless A carries the friction).
pub const TUNE_SIGMA_P: [f64; 3] = [1.0, 10.0, 100.0];
/// The softenings c of eq. 12 [`tune`] tries for SGMGT and SGMGT-D.
pub const TUNE_C: [f64; 2] = [1.0, 5.0];
/// SGMGT-D's σ_θ values [`tune`] tries.
pub const TUNE_SIGMA_THETA: [f64; 2] = [0.01, 0.1];
/// SGMGT-D's σ_ξ values [`tune`] tries.
pub const TUNE_SIGMA_XI: [f64; 2] = [0.01, 0.1];
/// Resampling periods of ξ [`tune`] tries for SGMGT and SGMGT-D: the paper's 100, and never
/// (p is always resampled every 100 steps, as in the paper).
pub const TUNE_RESAMPLE_XI: [u32; 2] = [100, 0];

/// The grid [`tune`] searches for a data set and method: families of [`Settings`] that differ
/// only in h, each in increasing h.
pub fn tune_grid(data: DataSet, method: Method) -> Vec<Vec<Settings>> {
    let base = Settings {
        resample_p: 100,
        ..settings(data, method)
    };
    let family = |s: Settings| -> Vec<Settings> {
        TUNE_STEPS.iter().map(|&h| Settings { h, ..s }).collect()
    };
    let mut out = Vec::new();
    match method {
        Method::Sgnht => {
            for sigma_p in TUNE_SIGMA_P {
                out.push(family(Settings { sigma_p, ..base }));
            }
        }
        Method::Sgmgt1 | Method::Sgmgt2 => {
            for c in TUNE_C {
                for resample_xi in TUNE_RESAMPLE_XI {
                    out.push(family(Settings {
                        sigma_p: 1.0,
                        sigma_theta: 0.0,
                        sigma_xi: 0.0,
                        c,
                        resample_xi,
                        ..base
                    }));
                }
            }
        }
        // (The corrected rows are not searched — they derive from the SGMGT-D rows — but have
        // the same grid.)
        Method::SgmgtD1 | Method::SgmgtD2 | Method::SgmgtD1Corrected | Method::SgmgtD2Corrected => {
            for c in TUNE_C {
                for resample_xi in TUNE_RESAMPLE_XI {
                    for sigma_theta in TUNE_SIGMA_THETA {
                        for sigma_xi in TUNE_SIGMA_XI {
                            out.push(family(Settings {
                                sigma_p: 1.0,
                                sigma_theta,
                                sigma_xi,
                                c,
                                resample_xi,
                                ..base
                            }));
                        }
                    }
                }
            }
        }
    }
    out
}

/// The validation search behind [`settings`]: for each data set (Pima only in quick mode) and
/// method, every setting of [`tune_grid`], `opts.chains` runs of the full protocol on
/// [`Problem::validation`] — the held-out split is never touched. Writes `blr-tune.csv`;
/// returns the table (validation AUROC, median ESS, sd ratio to the validation fit's Laplace
/// approximation, temperature; a run that diverges is counted and left out of the means; the
/// setting [`choose`] picks is marked).
pub fn tune(opts: &RunOptions) -> Result<Table, ExperimentError> {
    opts.prepare()?;
    let problems: Vec<Problem> = data_sets(opts)
        .into_iter()
        .map(|ds| Problem::load(ds)?.validation())
        .collect::<Result<_, _>>()?;
    let mut cells = Vec::new();
    for (k, problem) in problems.iter().enumerate() {
        for method in Method::ALL {
            push_grid(
                &mut cells,
                k,
                method,
                BATCH,
                tune_grid(problem.data, method),
            );
        }
    }
    let results = search(&problems, &cells, opts, 1000, "blr --tune");
    let mut t = Table::new([
        "data",
        "method",
        "settings",
        "diverged",
        "validation AUROC",
        "median ESS",
        "sd/Laplace",
        "temp.",
        "chosen",
    ]);
    for (range, chosen) in search_groups(&cells, &results) {
        for i in range.clone() {
            let f = |x: Option<f64>| x.map_or("–".to_string(), |v| sig(v, 4));
            let means = results[i].means;
            let c = cells[i];
            t.row([
                problems[c.problem].data.letter().to_string(),
                c.method.label().to_string(),
                c.settings.describe(c.method),
                format!("{}/{}", results[i].diverged, opts.chains),
                f(means.map(|x| x.auroc)),
                f(means.map(|x| x.ess)),
                f(means.map(|x| x.sd_ratio)),
                f(means.map(|x| x.temperature)),
                if chosen == Some(i) {
                    "←".into()
                } else {
                    String::new()
                },
            ]);
        }
    }
    t.write_csv(&opts.out.join("blr-tune.csv"))?;
    Ok(t)
}

/// Iterations and burn-in of a run: the paper's, or the quick ones.
fn protocol_length(opts: &RunOptions) -> (usize, usize) {
    if opts.quick {
        (QUICK_ITERATIONS, QUICK_BURN_IN)
    } else {
        (ITERATIONS, BURN_IN)
    }
}

/// One setting of a validation search: which problem, method, family, settings and minibatch.
#[derive(Clone, Copy, Debug)]
struct SearchCell {
    problem: usize,
    method: Method,
    family: usize,
    settings: Settings,
    /// Minibatch rows; 0 for every row of the problem.
    batch: usize,
}

/// Appends every setting of `grid` (families in order) as cells of one problem, method and
/// minibatch.
fn push_grid(
    cells: &mut Vec<SearchCell>,
    problem: usize,
    method: Method,
    batch: usize,
    grid: Vec<Vec<Settings>>,
) {
    for (family, fam) in grid.into_iter().enumerate() {
        for settings in fam {
            cells.push(SearchCell {
                problem,
                method,
                family,
                settings,
                batch,
            });
        }
    }
}

/// Rows per minibatch of `batch` (0 for all) on `problem`.
fn batch_rows(problem: &Problem, batch: usize) -> usize {
    if batch == 0 {
        problem.model.len()
    } else {
        batch.min(problem.model.len())
    }
}

/// Runs every cell `opts.chains` times on `problems` (validation splits) with the protocol's
/// length; configuration seeds start at `seed_base`. One [`TuneCell`] per cell.
fn search(
    problems: &[Problem],
    cells: &[SearchCell],
    opts: &RunOptions,
    seed_base: usize,
    label: &'static str,
) -> Vec<TuneCell> {
    let (iterations, burn_in) = protocol_length(opts);
    let tasks: Vec<(usize, usize)> = (0..cells.len())
        .flat_map(|i| (0..opts.chains).map(move |c| (i, c)))
        .collect();
    let pb = opts.progress_bar((tasks.len() * iterations) as u64, label);
    let outs: Vec<Option<RunOut>> = tasks
        .par_iter()
        .map(|&(i, c)| {
            let cell = cells[i];
            let protocol = Protocol {
                iterations,
                burn_in,
                trace_weight: 0,
                batch: batch_rows(&problems[cell.problem], cell.batch),
            };
            run_chain(
                &problems[cell.problem],
                cell.method,
                cell.settings,
                protocol,
                opts.chain_seed(seed_base + i, c),
                &pb,
            )
            .ok()
        })
        .collect();
    pb.finish_and_clear();
    outs.chunks(opts.chains)
        .zip(cells)
        .map(|(chunk, cell)| {
            let ok: Vec<&RunOut> = chunk.iter().flatten().collect();
            let avg =
                |f: fn(&RunOut) -> f64| mean_sd(&ok.iter().map(|r| f(r)).collect::<Vec<_>>()).0;
            TuneCell {
                family: cell.family,
                diverged: chunk.len() - ok.len(),
                means: (!ok.is_empty()).then(|| TuneMeans {
                    auroc: avg(|r| r.auroc),
                    ess: avg(|r| r.median_ess),
                    sd_ratio: avg(|r| r.sd_ratio),
                    temperature: avg(|r| r.temperature),
                }),
            }
        })
        .collect()
}

/// The runs of consecutive cells with one (problem, method, minibatch), each with the index
/// [`choose`] picks among them (an index into `cells`).
fn search_groups(
    cells: &[SearchCell],
    results: &[TuneCell],
) -> Vec<(std::ops::Range<usize>, Option<usize>)> {
    let key = |c: &SearchCell| (c.problem, c.method, c.batch);
    let mut out = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let end = (start..cells.len())
            .find(|&i| key(&cells[i]) != key(&cells[start]))
            .unwrap_or(cells.len());
        let chosen = choose(&results[start..end]).map(|i| start + i);
        out.push((start..end, chosen));
        start = end;
    }
    out
}

/// Minibatch sizes of [`batch_sweep`]: the paper's 16, two larger, and every training row
/// (written 0 here).
pub const SWEEP_BATCHES: [usize; 4] = [16, 64, 256, 0];

/// The step sizes [`batch_sweep`] tries: [`TUNE_STEPS`] and larger ones, which less gradient
/// noise may allow.
pub const SWEEP_STEPS: [f64; 14] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5,
];

/// Runs per setting in [`batch_sweep`]'s validation search (at most; `--runs` if fewer).
pub const SWEEP_SEARCH_RUNS: usize = 3;

/// The methods whose ESS Table 1 reports.
pub const SWEEP_METHODS: [Method; 3] = [Method::Sgnht, Method::SgmgtD1, Method::SgmgtD2];

/// The families [`batch_sweep`] searches for a data set and method: the table's [`settings`]
/// with h over [`SWEEP_STEPS`], and for SGNHT each A of [`TUNE_SIGMA_P`] (its friction must
/// carry the gradient noise, which the minibatch size changes).
pub fn sweep_grid(data: DataSet, method: Method) -> Vec<Vec<Settings>> {
    let base = settings(data, method);
    let family = |s: Settings| -> Vec<Settings> {
        SWEEP_STEPS.iter().map(|&h| Settings { h, ..s }).collect()
    };
    match method {
        Method::Sgnht => TUNE_SIGMA_P
            .iter()
            .map(|&sigma_p| family(Settings { sigma_p, ..base }))
            .collect(),
        _ => vec![family(base)],
    }
}

/// One (data set, method, minibatch) of [`batch_sweep`].
#[derive(Clone, Debug)]
pub struct SweepRow {
    /// Minibatch rows (the training rows for a full batch).
    pub batch: usize,
    /// Training rows N.
    pub rows: usize,
    /// The runs at the setting the validation search chose (no runs if none was stable).
    pub row: BlrRow,
}

impl SweepRow {
    /// Iterations kept per run × n/N, capped at the iterations kept: the ESS of one independent
    /// draw per N/n iterations.
    pub fn ess_scale(&self, kept: usize) -> f64 {
        kept as f64 * (self.batch as f64 / self.rows as f64).min(1.0)
    }
}

/// How the median ESS depends on the minibatch size: for each data set (Pima only in quick
/// mode), each method of [`SWEEP_METHODS`] and each minibatch of [`SWEEP_BATCHES`], the
/// validation search of [`tune`] (rule [`choose`], grid [`sweep_grid`]) picks the settings,
/// then `opts.chains` runs of the protocol at that minibatch on the real split give the row.
/// Only the minibatch (and with it the chosen h, and SGNHT's A) changes between rows.
/// Writes `blr-batch-sweep.csv` and `blr-batch-sweep-<data>.png`.
pub fn batch_sweep(opts: &RunOptions) -> Result<Vec<SweepRow>, ExperimentError> {
    opts.prepare()?;
    let (iterations, burn_in) = protocol_length(opts);
    let problems: Vec<Problem> = data_sets(opts)
        .into_iter()
        .map(Problem::load)
        .collect::<Result<_, _>>()?;
    let validation: Vec<Problem> = problems
        .iter()
        .map(Problem::validation)
        .collect::<Result<_, _>>()?;
    let mut cells = Vec::new();
    for (k, problem) in validation.iter().enumerate() {
        for method in SWEEP_METHODS {
            // A minibatch as large as the fit split is the full batch, run once as 0.
            for batch in SWEEP_BATCHES
                .into_iter()
                .filter(|&b| b < problem.model.len())
            {
                push_grid(
                    &mut cells,
                    k,
                    method,
                    batch,
                    sweep_grid(problem.data, method),
                );
            }
        }
    }
    let search_opts = RunOptions {
        chains: opts.chains.min(SWEEP_SEARCH_RUNS),
        ..opts.clone()
    };
    let results = search(
        &validation,
        &cells,
        &search_opts,
        5000,
        "blr --batch-sweep (search)",
    );
    // The chosen cell of every group; its minibatch in rows of the training split.
    let chosen: Vec<(usize, Method, usize, Option<Settings>)> = search_groups(&cells, &results)
        .into_iter()
        .map(|(range, pick)| {
            let c = cells[range.start];
            let batch = batch_rows(&problems[c.problem], c.batch);
            (c.problem, c.method, batch, pick.map(|i| cells[i].settings))
        })
        .collect();
    let tasks: Vec<(usize, usize)> = (0..chosen.len())
        .filter(|&g| chosen[g].3.is_some())
        .flat_map(|g| (0..opts.chains).map(move |c| (g, c)))
        .collect();
    let pb = opts.progress_bar((tasks.len() * iterations) as u64, "blr --batch-sweep");
    let outs: Vec<(usize, Result<RunOut, StepError>)> = tasks
        .par_iter()
        .map(|&(g, c)| {
            let (k, method, batch, s) = chosen[g];
            let protocol = Protocol {
                iterations,
                burn_in,
                trace_weight: 0,
                batch,
            };
            let s = s.expect("only groups with a choice run");
            let seed = opts.chain_seed(9000 + g, c);
            (g, run_chain(&problems[k], method, s, protocol, seed, &pb))
        })
        .collect();
    pb.finish_and_clear();
    let rows: Vec<SweepRow> = chosen
        .iter()
        .enumerate()
        .map(|(g, &(k, method, batch, s))| {
            let problem = &problems[k];
            let settings = s.unwrap_or_else(|| settings(problem.data, method));
            let mut row = BlrRow {
                data: problem.data,
                method,
                settings,
                runs: Vec::new(),
                diverged: Vec::new(),
                theta_noise_excess: settings.sigma_theta
                    * problem.median_gradient_noise_at(settings.h, batch),
            };
            for (_, r) in outs.iter().filter(|(i, _)| *i == g) {
                match r {
                    Ok(run) => row.runs.push(run.clone()),
                    Err(e) => row.diverged.push(*e),
                }
            }
            SweepRow {
                batch,
                rows: problem.model.len(),
                row,
            }
        })
        .collect();
    sweep_table(&rows, iterations - burn_in).write_csv(&opts.out.join("blr-batch-sweep.csv"))?;
    sweep_plot(opts, &rows, iterations - burn_in)?;
    Ok(rows)
}

/// The table of [`batch_sweep`]: per data set, method and minibatch, the chosen settings, the
/// median ESS (mean ± sd over the runs) beside kept × n/N and Table 1's value (at n = 16),
/// sd/Laplace, the θ channel's excess σ_θB, AUROC and divergences.
pub fn sweep_table(rows: &[SweepRow], kept: usize) -> Table {
    let mut t = Table::new([
        "data (N)",
        "method",
        "n",
        "settings",
        "median ESS",
        "kept·n/N",
        "ESS paper (n = 16)",
        "sd/Laplace",
        "σ_θB",
        "AUROC",
        "diverged",
    ]);
    for r in rows {
        let row = &r.row;
        let f = |x: Option<f64>, digits: usize| x.map_or("–".to_string(), |v| sig(v, digits));
        t.row([
            format!("{} ({})", row.data.letter(), r.rows),
            row.method.label().to_string(),
            if r.batch >= r.rows {
                format!("{} (all)", r.batch)
            } else {
                r.batch.to_string()
            },
            if row.runs.is_empty() && row.diverged.is_empty() {
                "no stable setting".into()
            } else {
                row.settings.describe(row.method)
            },
            pm(row.median_ess(), 3),
            sig(r.ess_scale(kept), 3),
            if r.batch == BATCH {
                f(paper_ess(row.data, row.method), 4)
            } else {
                "–".into()
            },
            f(row.sd_ratio(), 3),
            sig(row.theta_noise_excess, 2),
            pm(row.auroc(), 3),
            format!(
                "{}/{}",
                row.diverged.len(),
                row.diverged.len() + row.runs.len()
            ),
        ]);
    }
    t
}

/// `blr-batch-sweep-<data>.png`: median ESS against the minibatch size, a curve per method and
/// the dashed kept·n/N reference, one chart per data set.
fn sweep_plot(opts: &RunOptions, rows: &[SweepRow], kept: usize) -> Result<(), ExperimentError> {
    for ds in DataSet::ALL {
        let of_data: Vec<&SweepRow> = rows.iter().filter(|r| r.row.data == ds).collect();
        if of_data.is_empty() {
            continue;
        }
        let mut series: Vec<Series> = SWEEP_METHODS
            .into_iter()
            .enumerate()
            .map(|(j, method)| {
                let pts = of_data
                    .iter()
                    .filter(|r| r.row.method == method)
                    .filter_map(|r| r.row.median_ess().map(|(m, _)| (r.batch as f64, m)))
                    .collect();
                Series::new(method.label(), pts, j + 1)
            })
            .collect();
        let mut reference: Vec<(f64, f64)> = of_data
            .iter()
            .map(|r| (r.batch as f64, r.ess_scale(kept)))
            .collect();
        reference.sort_by(|a, b| a.0.total_cmp(&b.0));
        reference.dedup();
        series.push(Series::truth(
            format!("{kept}·n/N: one draw per N/n iterations"),
            reference,
        ));
        let title = format!(
            "BLR {} (N = {}): median ESS of {kept} kept draws against the minibatch size",
            ds.name(),
            of_data[0].rows
        );
        line_chart(
            &opts.out.join(format!("blr-batch-sweep-{}.png", ds.name())),
            &Chart {
                title: &title,
                x_label: "minibatch size n",
                y_label: "median ESS",
                x_scale: Scale::Log,
                y_scale: Scale::Log,
            },
            &series,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(family: usize, diverged: usize, auroc: f64, ess: f64, sd_ratio: f64) -> TuneCell {
        TuneCell {
            family,
            diverged,
            means: Some(TuneMeans {
                auroc,
                ess,
                sd_ratio,
                temperature: 1.0,
            }),
        }
    }

    #[test]
    fn choose_applies_margin_auroc_and_accuracy_rules() {
        let grid = [
            cell(0, 0, 0.90, 10.0, 0.5),   // too narrow at τ = 0.1
            cell(0, 0, 0.85, 50.0, 1.0),   // AUROC 0.05 below the best stable cell
            cell(0, 0, 0.90, 30.0, 1.05),  // accurate
            cell(0, 0, 0.89, 90.0, 1.0),   // next h diverged: no margin
            cell(0, 1, 0.95, 95.0, 1.0),   // diverged
            cell(1, 0, 0.895, 40.0, 0.95), // accurate, largest ESS
            cell(1, 0, 0.90, 45.0, 1.5),   // too wide at τ = 0.1
        ];
        assert_eq!(choose(&grid), Some(5));
        // Without accurate cells the tolerance widens: |ln 0.5| = 0.69, |ln 1.3| = 0.26.
        let loose = [grid[0], cell(0, 0, 0.9, 5.0, 1.3)];
        assert_eq!(choose(&loose), Some(1));
        let looser = [cell(0, 0, 0.9, 10.0, 0.5), cell(0, 0, 0.9, 12.0, 3.0)];
        assert_eq!(choose(&looser), Some(1));
        assert_eq!(choose(&[cell(0, 1, 0.9, 1.0, 1.0)]), None);
    }
}
