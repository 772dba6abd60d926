//! libFuzzer target: random samplers, parameters and gradients through the Rust API; the state contract checked after every step.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sgmcmc_fuzz::api::run(data));
