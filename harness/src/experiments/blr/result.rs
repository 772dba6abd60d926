//! What `blr` produces: one run's numbers, Table 1's rows with their summaries over runs, and the whole result.

use super::{Method, Settings};
use crate::experiments::common::mean_sd;
use crate::models::logistic_regression::DataSet;
use sgmcmc::prelude::*;

/// What one run produced.
#[derive(Clone, Debug)]
pub struct RunOut {
    /// AUROC of the posterior-mean predictive probability on the held-out split.
    pub auroc: f64,
    /// Median over the weights of the per-weight ESS of the post-burn-in samples.
    pub median_ess: f64,
    /// The same with the first-dip estimator
    /// ([`ess_first_dip`](crate::diagnostics::ess_first_dip), threshold
    /// [`FIRST_DIP`](super::FIRST_DIP)).
    pub median_ess_first_dip: f64,
    /// The same with R coda's AR spectral ESS
    /// ([`ess_spectral_ar`](crate::diagnostics::ess_spectral_ar)), which tracks the true ESS
    /// where the autocorrelation oscillates (`blr --ess-audit`).
    pub median_ess_coda: f64,
    /// Posterior means of the weights (post-burn-in).
    pub mean: Vec<f64>,
    /// Median over the weights of (sample sd / Laplace sd): ≈ 1 for a chain that samples the
    /// posterior (the Laplace approximation is close to it for these N ≫ d data sets), > 1 for
    /// one that runs hot, < 1 for one that runs cold or has not explored yet.
    pub sd_ratio: f64,
    /// Mean kinetic temperature after burn-in (1 at equilibrium).
    pub temperature: f64,
    /// The plotted weight at every kept iteration (burn-in included).
    pub trace: Vec<f64>,
    /// Each weight's kept draws, `draws[j][t]` (empty unless the protocol asked for them).
    pub draws: Vec<Vec<f64>>,
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
    /// ([`Problem::median_gradient_noise`](super::problem::Problem::median_gradient_noise) at
    /// the row's h): the excess temperature of SGMGT-D's first-order θ channel as Zhang et al.
    /// 2017, eq. 13 prints it (0 without that term).
    pub theta_noise_excess: f64,
}

impl BlrRow {
    /// Mean and sd over the runs of `f`, if there are runs.
    fn over_runs(&self, f: fn(&RunOut) -> f64) -> Option<(f64, f64)> {
        (!self.runs.is_empty()).then(|| mean_sd(&self.runs.iter().map(f).collect::<Vec<_>>()))
    }

    /// Mean and sd of the runs' AUROC.
    pub fn auroc(&self) -> Option<(f64, f64)> {
        self.over_runs(|r| r.auroc)
    }

    /// Mean and sd of the runs' median ESS.
    pub fn median_ess(&self) -> Option<(f64, f64)> {
        self.over_runs(|r| r.median_ess)
    }

    /// Mean and sd of the runs' median first-dip ESS
    /// ([`ess_first_dip`](crate::diagnostics::ess_first_dip)).
    pub fn median_ess_first_dip(&self) -> Option<(f64, f64)> {
        self.over_runs(|r| r.median_ess_first_dip)
    }

    /// Mean and sd of the runs' median coda ESS
    /// ([`ess_spectral_ar`](crate::diagnostics::ess_spectral_ar)).
    pub fn median_ess_coda(&self) -> Option<(f64, f64)> {
        self.over_runs(|r| r.median_ess_coda)
    }

    /// Mean over the runs of the sd ratio to the Laplace approximation.
    pub fn sd_ratio(&self) -> Option<f64> {
        self.over_runs(|r| r.sd_ratio).map(|x| x.0)
    }

    /// Mean post-burn-in kinetic temperature over the runs.
    pub fn temperature(&self) -> Option<f64> {
        self.over_runs(|r| r.temperature).map(|x| x.0)
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
