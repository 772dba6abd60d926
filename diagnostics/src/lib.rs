//! Host (std) MCMC diagnostics for `sgmcmc` chains: ESS, split-R̂, the kernel Stein discrepancy, and a step-size search that minimises it.
//!
//! The on-device, allocation-free diagnostics are `sgmcmc::diagnostics`; these are the offline
//! ones, for a run stored whole in memory, used by the harness and by any binding:
//!
//! * [`ess()`], [`ess_unsplit`]: Geyer's initial-monotone-sequence ESS (Geyer 1992), split as in
//!   Stan and ArviZ (Vehtari et al. 2021), autocovariance by FFT;
//! * [`ess_spectral_ar`]: R coda's AR spectral ESS (Plummer et al. 2006), which stays right on
//!   the oscillating autocorrelations of momentum samplers where Geyer's does not;
//!   [`tau_windowed`] (Sokal's window) and [`ess_from_replicates`];
//! * [`split_rhat`], [`rhat()`]: the potential scale reduction (Gelman et al. 2013; Vehtari et al.
//!   2021);
//! * [`imq_ksd`]: the inverse-multiquadric kernel Stein discrepancy (Gorham & Mackey 2017);
//! * [`ksd_search`]: the step-size (or friction) search of Coullon, South & Nemeth (2023), which
//!   picks the setting whose short run has the smallest KSD ([`KsdSearch::best`]), optionally
//!   with a one-step stability margin ([`KsdSearch::best_with_margin`], not in the paper).
//!
//! The derivations, with references, are the module docs: [`mod@ess`], [`spectral`], [`rhat`](mod@rhat),
//! [`ksd`], [`tuning`]; `docs/ess-estimators.md` in the repository compares the ESS estimators
//! on SG-MCMC chains.
//!
//! Every function validates its input and returns [`DiagnosticError`] rather than panicking or
//! returning `NaN`.
//!
//! ```
//! use sgmcmc_diagnostics::{Imq, ess, imq_ksd, split_rhat};
//! // Two chains of an AR(1) process with N(0, 1) marginals; the target's score is −x.
//! let mut rng = rand_pcg::Pcg64::new(1, 2);
//! let mut chain = |mut x: f64| -> Vec<f64> {
//!     (0..1000).map(|_| { x = 0.5 * x + 0.75f64.sqrt() * sgmcmc::rng::standard_normal_f64(&mut rng); x }).collect()
//! };
//! let chains = [chain(0.0), chain(1.0)];
//! // τ = (1 + φ)/(1 − φ) = 3, so the ESS of the 2000 draws is about 667.
//! let (ess, rhat) = (ess(&chains)?.ess, split_rhat(&chains)?.rhat);
//! assert!((400.0..1000.0).contains(&ess) && rhat < 1.05);
//! let scores: Vec<f64> = chains[0].iter().map(|x| -x).collect();
//! assert!(imq_ksd(&chains[0], &scores, 1, Imq::default())? < 0.15); // O(n^-1/2): ≈ 0.05
//! # Ok::<(), sgmcmc_diagnostics::DiagnosticError>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod chains;
pub mod error;
pub mod ess;
pub mod ksd;
pub mod rhat;
pub mod spectral;
#[cfg(test)]
mod testing;
pub mod tuning;

pub use chains::{check_chains, split_chains};
pub use error::DiagnosticError;
pub use ess::{
    EssEstimate, MIN_DRAWS, autocorrelation, autocovariance, ess, ess_first_dip, ess_unsplit,
    integrated_autocorrelation_time,
};
pub use ksd::{Imq, imq_ksd};
pub use rhat::{RhatEstimate, rhat, split_rhat};
pub use spectral::{SpectralEss, WindowedTau, ess_from_replicates, ess_spectral_ar, tau_windowed};
pub use tuning::{CandidateKsd, KsdSearch, RunFailure, ShortRun, ksd_search};
