//! The harness's integration tests in one binary (one compile and one link instead of one per file); each module is one topic, named after its file.

mod blr;
mod bnn;
mod calibration;
mod cli;
mod cv;
mod demo;
mod experiments;
mod gradient_noise;
mod lda;
mod mcem_experiments;
mod multi_well;
