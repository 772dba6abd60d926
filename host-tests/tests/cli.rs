//! The command line answers bad input with a clear error naming the flag, never a crash or a hang (issue 15, finding 7).

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_host-tests"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Exit code 2 and a message on stderr that names `flag`.
fn refused(args: &[&str], flag: &str) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(flag), "{args:?} must name {flag}: {err}");
}

#[test]
fn chain_and_run_counts_are_bounded_and_named() {
    // `--chains 100000` grew memory at ~130 MB/s with no output until killed.
    refused(
        &["double-well", "--quick", "--chains", "100000"],
        "--chains",
    );
    refused(&["double-well", "--quick", "--chains", "0"], "--chains");
    // `--runs 0` was reported as a bad `--chains`.
    refused(&["blr", "--quick", "--runs", "0"], "--runs");
    refused(&["blr", "--splits", "0"], "--splits");
}

#[test]
fn the_largest_seed_does_not_overflow() {
    // `demo --seed 18446744073709551615` overflowed `seed + 1` (a panic in debug builds).
    let out = run(&["demo", "--seed", "18446744073709551615", "--steps", "50"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
