//! The core crate's integration tests in one binary (one compile and one link instead of one per file); each module is one topic, named after its file.

mod common;

mod accuracy_order;
mod any_sampler;
mod bounded_work;
mod calibrated;
mod checkpoint;
mod control_variates;
mod diagnostics;
mod dual_averaging;
mod em_samplers;
mod errors;
mod kernel_reference;
mod kinetics;
mod lengths;
mod linalg;
mod mass;
mod mass_samplers;
mod micromath;
mod nose_poincare;
mod poisson;
mod psgld;
mod rng_distribution;
mod scale_adapted;
mod schedule;
mod sgmgt;
mod state_contract;
mod stationary;
mod temperature;
mod value_stability;
mod windowed_adaptation;
mod zero_alloc;
