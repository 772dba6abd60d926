//! The papers' experiments, one module each, and what they share (options, progress, chain driver).

pub mod blr;
pub mod blr_2d;
pub mod common;
pub mod double_well;
pub mod double_well_kl;
pub mod gaussian_mean;
pub mod mcem;
pub mod multi_well;
pub mod normal_1d;
pub mod normal_gamma;

pub use common::{ExperimentError, RunOptions};
