//! The command line answers bad input with a clear error naming the flag, never a crash or a hang (issue 15, finding 7).

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
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

/// `--draws` writes one CmdStan-style CSV per chain that `summarize` reads back; a directory
/// that cannot be created fails the run with an error naming it, after the report; a bad
/// `--draws-every` or one without `--draws` is refused by name.
#[test]
fn draws_are_written_and_summarised() {
    let dir = std::env::temp_dir().join(format!("sgmcmc-cli-draws-{}", std::process::id()));
    let figures = dir.join("figures");
    let draws = dir.join("draws");
    let (f, d) = (figures.to_str().unwrap(), draws.to_str().unwrap());
    let out = run(&[
        "double-well",
        "--quick",
        "--chains",
        "2",
        "--out",
        f,
        "--draws",
        d,
        "--draws-every",
        "10",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut chains: Vec<_> = std::fs::read_dir(&draws)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("-000-chain"))
        .collect();
    chains.sort();
    assert_eq!(chains.len(), 2, "{chains:?}");
    let text = std::fs::read_to_string(&chains[0]).unwrap();
    assert!(text.starts_with("# sgmcmc harness draws"));
    assert!(
        text.contains("\nstepsize__,"),
        "{}",
        &text[..300.min(text.len())]
    );
    let args: Vec<&str> = std::iter::once("summarize")
        .chain(chains.iter().map(|p| p.to_str().unwrap()))
        .collect();
    let out = run(&args);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        summary.starts_with("name,mean,sd,mcse,q05,q50,q95,ess,rhat,ess_ar\ntheta.1,"),
        "{summary}"
    );

    // A file where the directory should be: the run reports the error and fails.
    std::fs::write(dir.join("blocked"), "").unwrap();
    let blocked = dir.join("blocked").join("draws");
    let out = run(&[
        "double-well",
        "--quick",
        "--out",
        f,
        "--draws",
        blocked.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("writing the draws") && err.contains("blocked"),
        "{err}"
    );

    refused(&["double-well", "--quick", "--draws-every", "5"], "--draws");
    refused(
        &["double-well", "--quick", "--draws", d, "--draws-every", "0"],
        "--draws-every",
    );
    std::fs::remove_dir_all(&dir).ok();
}
