#!/usr/bin/env bash
# Builds the two libFuzzer targets of fuzz/ (api: the state contract of the Rust API; ffi: the C
# ABI's checks) with sanitizer coverage on the stable toolchain, then fuzzes each target for
# SECONDS (default 60) from a corpus seeded with the committed inputs (fuzz/regressions/*, which
# libFuzzer replays first; `cd fuzz && cargo test` replays them as plain tests, with a smoke run
# of short and pseudo-random inputs) and prints libFuzzer's final counts. Any crash fails the script and leaves the
# input in fuzz/artifacts/<target>/ (commit it under fuzz/regressions/<target>/).
#
#   tools/fuzz.sh [--install] [SECONDS]   # --install: apt-get installs a C++ compiler if missing
# (`cargo +nightly fuzz run api` works too, with cargo-fuzz installed, under AddressSanitizer.)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
if [[ "${1:-}" == "--install" ]]; then
    shift
    if ! command -v c++ >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >/dev/null
    fi
fi
seconds="${1:-60}"
target=x86_64-unknown-linux-gnu
export CARGO_TARGET_DIR="$PWD/target/fuzz"

RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks" \
    cargo build --release --quiet --bins --target "$target"

for t in api ffi; do
    corpus="target/corpus/$t"
    mkdir -p "$corpus" "artifacts/$t"
    cp -n regressions/"$t"/* "$corpus"/ 2>/dev/null || true
    echo "== fuzzing $t for $seconds s"
    "$CARGO_TARGET_DIR/$target/release/$t" -max_total_time="$seconds" -max_len=256 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="artifacts/$t/" "$corpus" \
        2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)|panicked|ERROR|Test unit written" || true
    if ls "artifacts/$t"/crash-* >/dev/null 2>&1; then
        echo "fuzz target $t found a crash: artifacts/$t/"
        exit 1
    fi
done
