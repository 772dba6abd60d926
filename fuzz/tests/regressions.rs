//! The committed fuzz inputs (`fuzz/regressions/{api,ffi}/*`, every crash the fuzzers found and a seed corpus) run through both targets as plain tests.

use std::fs;
use std::path::Path;

fn inputs(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(target);
    let mut files: Vec<_> = fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().filter_map(|p| fs::read(p).ok()).collect()
}

#[test]
fn api_regressions() {
    for input in inputs("api") {
        sgmcmc_fuzz::api::run(&input);
    }
}

#[test]
fn ffi_regressions() {
    for input in inputs("ffi") {
        sgmcmc_fuzz::ffi::run(&input);
    }
}

/// Every input of up to two bytes, and pseudo-random ones: a smoke run of both targets without
/// libFuzzer.
#[test]
fn short_and_random_inputs() {
    for a in 0..=255u8 {
        for b in [0u8, 1, 7, 64, 128, 255] {
            sgmcmc_fuzz::api::run(&[a, b]);
            sgmcmc_fuzz::ffi::run(&[a, b]);
        }
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..3000 {
        let input: Vec<u8> = (0..96)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        sgmcmc_fuzz::api::run(&input);
        sgmcmc_fuzz::ffi::run(&input);
    }
}
