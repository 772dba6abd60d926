//! Picks the board's memory map (memory/*.x, as `memory.x` for cortex-m-rt's `link.x`) from the target.
use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let board = if target.starts_with("thumbv6m") {
        "microbit" // QEMU `-machine microbit`: nRF51822, Cortex-M0
    } else if target.starts_with("thumbv8m") {
        "mps2-an505" // `-machine mps2-an505 -cpu cortex-m33`
    } else {
        "mps2-an386" // `-machine mps2-an386 -cpu cortex-m4` (M4F)
    };
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::copy(format!("memory/{board}.x"), out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory");
    println!("cargo:rerun-if-changed=build.rs");
}
