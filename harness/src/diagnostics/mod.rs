//! MCMC diagnostics for the harness: ESS and τ (Geyer, Sokal's window, coda's AR spectrum, replicates), split-R̂, histogram densities (KL, RMSE), moment errors, summaries.

mod auroc;
mod density;
mod device;
mod draws;
mod error;
mod ess;
mod ksd;
mod moments;
mod rhat;
mod spectral;
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
pub use error::DiagnosticError;
pub use ess::{
    EssEstimate, MIN_DRAWS, autocorrelation, autocovariance, ess, ess_first_dip, ess_unsplit,
    integrated_autocorrelation_time,
};
pub use ksd::{Imq, imq_ksd};
pub use moments::{MomentError, MomentEstimate, moment_errors, moments, moments_of};
pub use rhat::{RhatEstimate, rhat, split_rhat};
pub use spectral::{SpectralEss, WindowedTau, ess_from_replicates, ess_spectral_ar, tau_windowed};
pub use summary::{DimSummary, Summary, quantile, summarize};
