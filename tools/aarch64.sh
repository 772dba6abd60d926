#!/usr/bin/env bash
# The crate on aarch64 (NEON, a vector target): its unit tests, the kernel references and the
# value-stability pins, built with Debian's rustc-web and -Zbuild-std (rustup here has only the
# x86-64 target) and run under qemu-user. An aarch64 build has no AVX2, so it must draw the
# portable x86-64 build's chains bit for bit in f32 and f64 (docs/rng.md, *Which builds share a
# chain*): tests/value_stability.rs compares every case with tests/data/value_stability.txt.
#
#   tools/aarch64.sh            # needs rustc-web cargo-web rust-web-src gcc-aarch64-linux-gnu
#                               # libc6-dev-arm64-cross qemu-user
#   tools/aarch64.sh --install  # apt-get installs them first when missing (CI)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [[ "${1:-}" == "--install" ]] &&
   ! [[ -x /usr/bin/rustc && -d /usr/lib/rustlib/src && -x /usr/bin/aarch64-linux-gnu-gcc &&
        -x /usr/bin/qemu-aarch64 && -d /usr/aarch64-linux-gnu/lib ]]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    rustc-web cargo-web rust-web-src gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null
fi
# Debian's rustc (it has the standard library's source for -Zbuild-std) with the host's cargo.
export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$root/target/aarch64"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
# The kernel references' first 16 proptest cases of 64 (tests/kernel_reference.rs): emulated,
# all 64 take six minutes.
export SGMCMC_REFERENCE_CASES=16
t0=$(date +%s)
tests=(--lib --test pins)
cargo test --release -Zbuild-std --target aarch64-unknown-linux-gnu -p sgmcmc "${tests[@]}" --no-run
t1=$(date +%s)
echo "== aarch64: built in $((t1 - t0)) s (the standard library from source included)"
cargo test --release -Zbuild-std --target aarch64-unknown-linux-gnu -p sgmcmc "${tests[@]}"
echo "== aarch64 under qemu-user: unit tests, kernel references, value-stability pins passed in $(($(date +%s) - t1)) s"
