//! The tests every engine build runs (the scalar core, run-time dispatch, x86-64-v3, aarch64): a second, smaller binary of the same modules as `integration`, so those builds compile only these.

mod common;

mod checkpoint;
mod errors;
mod kernel_reference;
mod mass;
mod sgmgt;
mod state_contract;
mod value_stability;
