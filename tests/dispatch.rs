//! The tests the run-time-dispatch build (`--features std`) runs in every copy the CPU has: the value-stability pins, the kernel references and the state contract, a subset of `integration`'s modules built as its own binary.

mod kernel_reference;
mod state_contract;
mod value_stability;
