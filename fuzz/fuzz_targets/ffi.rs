//! libFuzzer target: the C entry points with random pointers into one arena; return codes and untouched memory checked.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sgmcmc_fuzz::ffi::run(data));
