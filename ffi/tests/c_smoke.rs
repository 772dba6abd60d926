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

/// The header's structs have the layout of the library's `#[repr(C)]` types: a C program built
/// from the header prints `sizeof`, `_Alignof` (C11) and every field's `offsetof` for
/// `sgmcmc_rng`, `sgmcmc_stats` and both `sgmcmc_sgmgt_params_*`, and each must equal Rust's
/// `size_of`, `align_of` and `offset_of!`. A field added, dropped, reordered or retyped on one
/// side only fails here, even where the smoke run would not notice (a trailing field the C side
/// leaves at zero, say).
#[test]
fn struct_layouts_match_the_header() {
    use sgmcmc_ffi::{SgmcmcRng, SgmcmcStats, SgmgtParamsF32, SgmgtParamsF64};
    use std::mem::{align_of, offset_of, size_of};
    macro_rules! layout {
        ($c:literal, $t:ty, [$($f:ident),* $(,)?]) => {{
            let mut c = format!(
                "printf(\"{0} size %zu\\n\", sizeof({0})); printf(\"{0} align %zu\\n\", _Alignof({0}));\n",
                $c
            );
            let mut rust = vec![
                format!("{} size {}", $c, size_of::<$t>()),
                format!("{} align {}", $c, align_of::<$t>()),
            ];
            $(
                c += &format!(
                    "printf(\"{0}.{1} %zu\\n\", offsetof({0}, {1}));\n",
                    $c,
                    stringify!($f)
                );
                rust.push(format!("{}.{} {}", $c, stringify!($f), offset_of!($t, $f)));
            )*
            (c, rust)
        }};
    }
    let parts = [
        layout!("sgmcmc_rng", SgmcmcRng, [s0, s1]),
        layout!(
            "sgmcmc_stats",
            SgmcmcStats,
            [kinetic_temperature, thermostat, steps]
        ),
        layout!(
            "sgmcmc_sgmgt_params_f32",
            SgmgtParamsF32,
            [
                h,
                sigma_p,
                gamma,
                sigma_theta,
                sigma_xi,
                a,
                c,
                resample_momentum,
                resample_thermostat,
                integrator,
                noise_estimate,
                temperature
            ]
        ),
        layout!(
            "sgmcmc_sgmgt_params_f64",
            SgmgtParamsF64,
            [
                h,
                sigma_p,
                gamma,
                sigma_theta,
                sigma_xi,
                a,
                c,
                resample_momentum,
                resample_thermostat,
                integrator,
                noise_estimate,
                temperature
            ]
        ),
    ];
    let body: String = parts.iter().map(|(c, _)| c.as_str()).collect();
    let expected: Vec<String> = parts.iter().flat_map(|(_, r)| r.clone()).collect();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("layout_check.c");
    let exe = dir.join("layout_check");
    std::fs::write(
        &src,
        format!(
            "#include <stddef.h>\n#include <stdio.h>\n#include \"sgmcmc.h\"\nint main(void) {{\n{body}return 0;\n}}\n"
        ),
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    run(Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(manifest_dir().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe));
    let printed = run(&mut Command::new(&exe));
    let got: Vec<&str> = printed.lines().collect();
    assert_eq!(got, expected, "C layout (left) vs Rust layout (right)");
}
