#!/usr/bin/env bash
# Proves the core is freestanding: builds and runs the libc-free example, and keeps std/alloc out of the core's dependency tree.
#
# 1. Builds `examples/freestanding` (no_std, no_main, no libc, static, `-nostartfiles -nostdlib`)
#    in release, once with default features and once with `sgmcmc/micromath`, checks the binary
#    is static with no interpreter, runs it and fails unless it exits 0 (its chain's posterior
#    mean is within the Monte Carlo tolerance derived in its `src/main.rs`).
#
#    What this link proves: the binary's crate graph is exactly sgmcmc, libm, rand_core,
#    rand_pcg and the sysroot's core + compiler_builtins. If `std` entered the graph anywhere (an
#    `extern crate std;` in the core, even one whose items are never called, or a dependency with
#    its std feature on), compiling the binary fails with `error[E0152]: found duplicate lang item
#    'panic_impl'` (std brings its own panic handler); if `alloc` entered it, with `no global
#    memory allocator found but one is required`. Both were checked on a scratch copy of the
#    repository with those lines injected into src/lib.rs. And with `-nostdlib`, any reference
#    to a libc symbol would be an undefined symbol at link time. What the link cannot see is a
#    dependency the core declares but never names in code: rustc does not load an unused
#    `--extern` crate, so e.g. `memchr` with its default `std` feature passed step 1 in the same
#    experiment. Step 2 catches that case.
#
# 2. Checks the core's normal dependency tree, with every optional feature and for every target
#    (`--target all`, so target-specific dependencies count too), against an allow-list, and that
#    no crate in it has a feature named `std` or `alloc` enabled. Proc-macro crates (defmt-macros
#    and its syn/quote subtree) are excluded with `no-proc-macro`: they run inside the compiler on
#    the host and are never linked into the core's users, so their use of std is irrelevant.
#
# 3. If this machine has a bare-metal (no-std) target installed, or nightly with `rust-src`
#    (for `-Zbuild-std=core`), also builds the core for it. Neither is installed on the project's
#    machine as of this writing (rustup cannot download them here), in which case step 1 is the
#    proof and this step says it was skipped.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
example="$root/examples/freestanding"

# The example's `.cargo/config.toml` carries its link flags; environment overrides would replace
# them (RUSTFLAGS takes precedence over config rustflags), so drop any that CI may set.
clean_env=(env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_RUSTFLAGS
    -u CARGO_BUILD_TARGET -u "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS")

echo "== 1. freestanding example (no std, no alloc, no libc)"
for features in "" "sgmcmc/micromath"; do
    label="${features:-default features}"
    echo "-- build ($label)"
    # Cargo reads .cargo/config.toml from the working directory, so build from the example's.
    json="$(cd "$example" && "${clean_env[@]}" cargo build --release \
        ${features:+--features "$features"} --message-format=json-render-diagnostics)"
    bin="$(printf '%s\n' "$json" | grep -o '"executable":"[^"]*"' | tail -n 1 | cut -d'"' -f4)"
    if [[ -z "$bin" || ! -x "$bin" ]]; then
        echo "FAIL: no executable from the freestanding build ($label)" >&2
        exit 1
    fi
    if command -v readelf >/dev/null; then
        if readelf -lW "$bin" | grep -q -E 'INTERP|DYNAMIC'; then
            echo "FAIL: $bin has a program interpreter or a dynamic section" >&2
            exit 1
        fi
        undefined="$(readelf -sW "$bin" | awk '$7 == "UND" && $8 != ""' || true)"
        if [[ -n "$undefined" ]]; then
            echo "FAIL: $bin has undefined symbols:" >&2
            echo "$undefined" >&2
            exit 1
        fi
        echo "static, no interpreter, no dynamic section, no undefined symbols: $bin"
    fi
    echo "-- run ($label)"
    status=0
    "$bin" || status=$?
    if [[ "$status" -ne 0 ]]; then
        echo "FAIL: freestanding example ($label) exited with status $status" >&2
        exit 1
    fi
done

echo "== 2. dependency tree of the core"
# sgmcmc itself; libm and rand_core (always); micromath and defmt (optional features); bitflags
# (a dependency of defmt).
allowed="bitflags defmt libm micromath rand_core sgmcmc"
tree="$(cd "$root" && cargo tree -p sgmcmc -e normal,no-proc-macro --features micromath,defmt \
    --target all --prefix none -f '{p}|{f}')"
echo "$tree" | sed 's/^/  /'
bad=0
while IFS='|' read -r package features; do
    [[ -z "$package" ]] && continue
    name="${package%% *}"
    if [[ " $allowed " != *" $name "* ]]; then
        echo "FAIL: '$name' is in the core's dependency tree but not in the allow-list" >&2
        bad=1
    fi
    if [[ ",$features," == *",std,"* || ",$features," == *",alloc,"* ]]; then
        echo "FAIL: '$name' has a std/alloc feature enabled: $features" >&2
        bad=1
    fi
done <<< "$tree"
if [[ "$bad" -ne 0 ]]; then
    exit 1
fi
echo "only allowed crates, no std/alloc feature enabled"

echo "== 3. core built for a no-std target"
built=0
if command -v rustup >/dev/null; then
    for target in $(rustup target list --installed | grep -E -- '-none|^thumb|^riscv' || true); do
        echo "-- cargo build -p sgmcmc --lib --target $target"
        (cd "$root" && "${clean_env[@]}" cargo build -p sgmcmc --lib --release --target "$target" \
            --features micromath)
        built=1
    done
    nightly_sysroot="$(rustc +nightly --print sysroot 2>/dev/null || true)"
    if [[ "$built" -eq 0 && -n "$nightly_sysroot" \
        && -d "$nightly_sysroot/lib/rustlib/src/rust/library/core" ]]; then
        echo "-- cargo +nightly build -Zbuild-std=core --target x86_64-unknown-none"
        (cd "$root" && "${clean_env[@]}" cargo +nightly build -p sgmcmc --lib --release \
            -Zbuild-std=core --target x86_64-unknown-none --features micromath)
        built=1
    fi
fi
if [[ "$built" -eq 0 ]]; then
    echo "skipped: no bare-metal target installed and no nightly rust-src for -Zbuild-std;"
    echo "the libc-free link of step 1 is the proof that the core needs neither std nor alloc"
fi

echo "freestanding: all checks passed"
