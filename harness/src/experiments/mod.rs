//! The papers' experiments, one module each (`blr` a folder), and what they share (`common`: options, errors, the progress observer, the samplers built from (h, A), parallel chains).

pub mod blr;
pub mod blr_2d;
pub mod bnn;
pub mod calibration;
pub mod common;
pub mod cv;
pub mod double_well;
pub mod double_well_kl;
pub mod gaussian_mean;
pub mod lda;
pub mod mcem;
pub mod multi_well;
pub mod normal_1d;
pub mod normal_gamma;

pub use common::{ExperimentError, RunOptions};
