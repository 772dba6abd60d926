//! Builds the staticlib, compiles `tests/c/smoke.c` against `include/sgmcmc.h` with the system
//! C compiler (`cc`, or `$CC`) under `-std=c99 -Wall -Wextra -Werror -pedantic`, links and runs
//! it. A declaration in the header that disagrees with the library (a missing symbol, a wrong
//! argument count or type at a call site) fails the compile or link; a wrong ABI fails the run
//! (the smoke test checks posterior means and error codes). Every failure — including a missing
//! compiler — fails the test; nothing is skipped.
//!
//! Two builds: the freestanding one (`--features panic-handler`, `panic = "abort"`: no std, no
//! libc symbols needed beyond what the C program brings) and the default one (std linked for its
//! panic runtime, with the native libraries rustc reports).

use std::path::{Path, PathBuf};
use std::process::Command;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("could not start {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout + &stderr
}

/// Builds the staticlib in its own target directory (so the outer `cargo test` lock is not
/// contended) and returns its path and the native libraries it needs.
fn build_staticlib(name: &str, freestanding: bool) -> (PathBuf, Vec<String>) {
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(manifest_dir())
        .args(["rustc", "--release", "--lib", "--crate-type", "staticlib"])
        .arg("--target-dir")
        .arg(&target_dir);
    if freestanding {
        cmd.args([
            "--features",
            "panic-handler",
            "--config",
            "profile.release.panic=\"abort\"",
        ]);
    }
    // The outer test run's flags (e.g. coverage instrumentation) must not leak into this build.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
    ] {
        cmd.env_remove(var);
    }
    cmd.args(["--", "--print", "native-static-libs"]);
    let log = run(&mut cmd);
    let native = log
        .lines()
        .find_map(|l| l.split("native-static-libs:").nth(1))
        .map(|libs| libs.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let lib = target_dir.join("release").join("libsgmcmc_ffi.a");
    assert!(lib.is_file(), "no staticlib at {}", lib.display());
    (lib, native)
}

fn compile_and_run_smoke(name: &str, lib: &Path, link: &[String]) -> String {
    let dir = manifest_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("smoke-{name}"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args([
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-O2",
    ])
    .arg("-I")
    .arg(dir.join("include"))
    .arg(dir.join("tests/c/smoke.c"))
    .arg(lib)
    .args(link)
    .arg("-lm")
    .arg("-o")
    .arg(&exe);
    run(&mut cmd);
    run(&mut Command::new(&exe))
}

#[test]
fn c_smoke_freestanding_staticlib() {
    let (lib, native) = build_staticlib("ffi-freestanding", true);
    assert!(
        native.is_empty(),
        "the freestanding staticlib should need no native libraries, rustc says {native:?}"
    );
    // The core of a hosted target is precompiled for unwinding, so its unused unwind tables
    // refer to `rust_eh_personality`; --gc-sections drops them (bare-metal cores do not have them).
    let out = compile_and_run_smoke("freestanding", &lib, &["-Wl,--gc-sections".into()]);
    assert!(out.contains("smoke: all ok"), "{out}");
    println!("{out}");
}

#[test]
fn c_smoke_default_staticlib() {
    let (lib, native) = build_staticlib("ffi-default", false);
    let out = compile_and_run_smoke("default", &lib, &native);
    assert!(out.contains("smoke: all ok"), "{out}");
}

/// The header also compiles as C++ (its `extern "C"` block), when a C++ compiler is installed;
/// the C build above is the mandatory check.
#[test]
fn header_compiles_as_cpp_if_available() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        println!("no C++ compiler ({cxx}); the C99 checks still ran");
        return;
    }
    let dir = manifest_dir();
    let src = Path::new(env!("CARGO_TARGET_TMPDIR")).join("header_check.cpp");
    std::fs::write(
        &src,
        "#include \"sgmcmc.h\"\nint main() { sgmcmc_rng r; sgmcmc_rng_seed(&r, 1); \
         return sgmcmc_rng_next_u64(&r) == 0; }\n",
    )
    .unwrap();
    run(Command::new(&cxx)
        .args(["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
        .arg(dir.join("include"))
        .arg(&src));
}
