//! MCMC diagnostics for the harness: ESS and τ (Geyer, Sokal's window, coda's AR spectrum, replicates), split-R̂, the IMQ KSD and its step-size search from `sgmcmc-diagnostics`, and the harness's own histogram densities (KL, RMSE), moment errors, summaries.
//!
//! The estimators live in the `sgmcmc-diagnostics` crate and are re-exported here, so the
//! harness has one copy of each and its call sites name them as `diagnostics::…`.

mod auroc;
mod density;
mod device;
mod draws;
mod moments;
mod summary;
#[cfg(test)]
mod testing;

pub use auroc::auroc;
pub use density::{
    Axis, Bin, Histogram, Histogram2d, KSDENSITY_POINTS, KernelDensity, Normalization, kde,
    kde_binned, ksdensity, ksdensity_bandwidth,
};
pub use device::check_log as check_device_log;
pub use draws::{DrawCollector, Draws};
pub use moments::{MomentError, MomentEstimate, moment_errors, moments, moments_of};
pub use sgmcmc_diagnostics::{
    CandidateKsd, DiagnosticError, EssEstimate, Imq, KsdSearch, MIN_DRAWS, RhatEstimate,
    RunFailure, ShortRun, SpectralEss, WindowedTau, autocorrelation, autocovariance, ess,
    ess_first_dip, ess_from_replicates, ess_spectral_ar, ess_unsplit, imq_ksd,
    integrated_autocorrelation_time, ksd_search, rhat, split_rhat, tau_windowed,
};
pub use summary::{DimSummary, Summary, quantile, summarize};
