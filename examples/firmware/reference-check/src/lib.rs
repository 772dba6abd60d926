//! The firmware cost curve's hand-written references (`examples/firmware/src/curve/reference.rs`), compiled for the host so that `tests/references.rs` can check them against the crate.
#![no_std]

#[path = "../../src/curve/reference.rs"]
pub mod reference;
