#!/usr/bin/env bash
# Firmware on Cortex-M0 (thumbv6m-none-eabi, QEMU microbit), M4F (thumbv7em-none-eabihf,
# mps2-an386) and M33 (thumbv8m.main-none-eabihf, mps2-an505): builds examples/firmware with
# Debian's rustc and -Zbuild-std=core, runs it under QEMU (semihosting; the exit status is the
# firmware's own verdict on every sampler's moments), checks that the f32-only builds (libm and
# micromath) link no software double-precision routine and that no build links a panic path
# (tools/panic_sites.py), and writes the size and stack table (docs/firmware.md). A last build
# reports as defmt frames instead of text: its output is decoded on the host by defmt-print
# (installed from crates.io into the firmware's target directory on first use). QEMU runs with
# -icount shift=0 (one virtual nanosecond per instruction), so the firmware's SysTick figures
# count executed instructions per step (examples/firmware/src/cost.rs). The second binary,
# sgmcmc-curve (the `curve-*` builds), measures every sampler's instructions per step against
# the dimension beside a hand-written scalar reference of each update
# (examples/firmware/src/curve/), on the M4F (f32, f64) and the M0 (f32); the references are
# first checked against the crate on the host (examples/firmware/reference-check, cargo test).
# The same binary reruns ten of tests/value_stability.rs's cases per type and this script
# compares their hashes with the host's scalar-core pins (tests/data/value_stability_scalar_core.txt):
# a Cortex-M must draw the host's chains bit for bit. Two more binaries are built, not run:
# sgmcmc-flash (`flash-*`: one step per sampler × integrator × mass, fixed at compile time,
# measured by tools/flash_report.py on the three cores) and sgmcmc-sgnht-euler (`alone-*`: a
# firmware that runs SGNHT-Euler with the identity mass alone; it fails the run if its symbols
# name another scheme or mass, and it compares its code with the hand-written step's). Last,
# tools/panic_matrix.sh checks the whole crate rather than this one program for panic paths
# (every public entry point over f32/f64, four sizes, three opt-levels, three cores).
#
#   tools/firmware.sh            # needs rustc-web cargo-web rust-web-src rust-web-llvm lld qemu-system-arm
#   tools/firmware.sh --install  # apt-get installs them first when missing (CI)
#   SGMCMC_HARNESS_BIN="$PWD/target/release/harness" tools/firmware.sh   # an absolute path to a
#                                # current release harness, not built again (CI passes its own)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/examples/firmware"
# (rust-web-llvm: llvm-objdump of rustc's own LLVM, for the panic call-site counts; Debian's
# default `llvm` mis-decodes some Armv8-M code.)
if [[ "${1:-}" == "--install" ]] &&
   { ! [[ -x /usr/bin/rustc && -x /usr/bin/cargo && -x /usr/bin/qemu-system-arm && -x /usr/bin/ld.lld ]] ||
     ! compgen -c llvm-objdump- >/dev/null; }; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    rustc-web cargo-web rust-web-src rust-web-llvm lld llvm qemu-system-arm >/dev/null
fi
export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$PWD/target"
export RUSTFLAGS="-C linker=ld.lld -C linker-flavor=ld.lld -C link-arg=-Tlink.x"
CARGO=/usr/bin/cargo
out_dir="$CARGO_TARGET_DIR/report"
rm -rf "$out_dir"
mkdir -p "$out_dir"

declare -A QEMU=(
  [thumbv6m-none-eabi]="-machine microbit"
  [thumbv7em-none-eabihf]="-machine mps2-an386 -cpu cortex-m4"
  [thumbv8m.main-none-eabihf]="-machine mps2-an505 -cpu cortex-m33"
)
declare -A CORE=(
  [thumbv6m-none-eabi]="Cortex-M0"
  [thumbv7em-none-eabihf]="Cortex-M4F"
  [thumbv8m.main-none-eabihf]="Cortex-M33"
)
# Software double-precision routines of compiler-builtins (EABI and GCC names).
SOFT_DOUBLE='^(__aeabi_d[a-z0-9]+|__aeabi_[a-z0-9]+2d|__[a-z0-9]*df[0-9a-z]*)$'

# Runs an ELF of $target under QEMU (semihosting for output and exit status; -icount shift=0,
# one virtual nanosecond per instruction, for the firmware's instruction counts).
run_qemu() {
  # shellcheck disable=SC2086
  timeout 900 qemu-system-arm ${QEMU[$target]} -icount shift=0 \
    -semihosting-config enable=on,target=native -nographic -monitor none -serial none \
    -kernel "$1"
}

status=0
runs=()
# target variant build-flags run|no|defmt (The M0 emulates every float operation in software:
# it runs the f32 checks with a quarter of the steps, `quick`, whose tolerances widen
# accordingly; so does the defmt build, whose point is the transport.) A variant named
# `curve-*` is the cost-curve binary (sgmcmc-curve), `flash-*` the one-step-per-combination
# flash build (sgmcmc-flash; `size`: measured by tools/flash_report.py, not run), `alone-*` the
# SGNHT-Euler-only firmware (sgmcmc-sgnht-euler: its symbol listing must hold no other scheme or
# mass), every other one the moment checks (sgmcmc-firmware); each build links only its own
# binary.
plan=(
  "thumbv7em-none-eabihf f32+f64 --features=f64 run"
  "thumbv7em-none-eabihf f32 --no-default-features no"
  "thumbv7em-none-eabihf f32-micromath --no-default-features,--features=micromath run"
  "thumbv8m.main-none-eabihf f32+f64 --features=f64 run"
  "thumbv8m.main-none-eabihf f32 --no-default-features no"
  "thumbv6m-none-eabi f32+f64 --features=f64 no"
  "thumbv6m-none-eabi f32-quick --no-default-features,--features=quick run"
  "thumbv7em-none-eabihf f32-defmt --no-default-features,--features=defmt,--features=quick defmt"
  "thumbv7em-none-eabihf curve-f32+f64 --features=f64 run"
  "thumbv6m-none-eabi curve-f32 --no-default-features run"
  "thumbv6m-none-eabi flash-f32 --no-default-features size"
  "thumbv7em-none-eabihf flash-f32 --no-default-features size"
  "thumbv8m.main-none-eabihf flash-f32 --no-default-features size"
  "thumbv7em-none-eabihf alone-f32 --no-default-features alone"
)
# The defmt build's host decoder (defmt-print, from crates.io, built with the host toolchain).
defmt_print="$CARGO_TARGET_DIR/tools/bin/defmt-print"
if ! [[ -x $defmt_print ]]; then
  t0=$(date +%s)
  env -u RUSTC -u RUSTC_BOOTSTRAP -u RUSTFLAGS -u CARGO_TARGET_DIR \
    cargo install -q defmt-print --version 1.2.0 --locked --root "$CARGO_TARGET_DIR/tools"
  echo "== defmt-print 1.2.0 installed in $(( $(date +%s) - t0 )) s"
fi
# The harness, whose estimators check the firmware's on-device diagnostics (its `draw` and
# `diagnostics` lines; `harness firmware-diagnostics`): built with the host toolchain, in the
# background while the firmware builds, unless SGMCMC_HARNESS_BIN names a release build of this
# checkout's harness (CI's earlier stages build one: a second build took 5 min of the firmware
# stage, on the two cores its builds share).
if [[ -n ${SGMCMC_HARNESS_BIN:-} && -x ${SGMCMC_HARNESS_BIN} ]]; then
  harness_bin="$SGMCMC_HARNESS_BIN"
  echo "prebuilt 0" > "$out_dir/harness-build.status"
else
  harness_bin="$CARGO_TARGET_DIR/harness/release/harness"
  (
    t0=$(date +%s)
    build_status=0
    env -u RUSTC -u RUSTC_BOOTSTRAP -u RUSTFLAGS CARGO_TARGET_DIR="$CARGO_TARGET_DIR/harness" \
      cargo build -q --release --locked --manifest-path "$root/Cargo.toml" -p harness \
      > "$out_dir/harness-build.log" 2>&1 || build_status=$?
    echo "$build_status $(( $(date +%s) - t0 ))" > "$out_dir/harness-build.status"
  ) &
fi
for line in "${plan[@]}"; do
  read -r target variant flags run <<<"$line"
  IFS=, read -r -a flag_args <<<"$flags"
  bin=sgmcmc-firmware
  [[ $variant == curve-* ]] && bin=sgmcmc-curve
  [[ $variant == flash-* ]] && bin=sgmcmc-flash
  [[ $variant == alone-* ]] && bin=sgmcmc-sgnht-euler
  t0=$(date +%s)
  # The defmt build also links defmt's section layout (defmt.x).
  extra_flags=""
  [[ $run == defmt ]] && extra_flags=" -C link-arg=-Tdefmt.x"
  RUSTFLAGS="$RUSTFLAGS$extra_flags" \
    $CARGO build -q --release --target "$target" -Zbuild-std=core --bin "$bin" "${flag_args[@]}"
  elf="$out_dir/$target-$variant.elf"
  cp "$CARGO_TARGET_DIR/$target/release/$bin" "$elf"
  msg="== ${CORE[$target]} ($target) $variant: built in $(( $(date +%s) - t0 )) s"
  if [[ $variant != *f64* ]]; then
    bad=$(readelf -sW "$elf" | awk '$4 == "FUNC" {print $8}' | grep -E "$SOFT_DOUBLE" || true)
    if [[ -n $bad ]]; then
      echo "$msg; FAILED: software double-precision routines linked:" $bad; status=1
    else
      echo "$msg; no software double-precision routine linked"
    fi
  else
    echo "$msg; $(readelf -sW "$elf" | awk '$4 == "FUNC" {print $8}' | grep -cE "$SOFT_DOUBLE" || true) software double routines (f64 cases)"
  fi
  # No panic path may be linked (tools/panic_sites.py: entry points of core's panic machinery in
  # the symbol table, and the call sites into them).
  if panics=$(python3 "$root/tools/panic_sites.py" "$elf"); then
    echo "   no panic entry point linked (entry points, call sites: $panics)"
  else
    echo "   FAILED: panic paths linked (entry points, call sites: $panics):"; status=1
    # (The listing may be cut short: its status must not end the script under `set -e`.)
    python3 "$root/tools/panic_sites.py" "$elf" -v | tail -n +2 | head -40 | sed 's/^/   /' || true
  fi
  echo "$panics" > "$out_dir/$target-$variant.panics"
  if [[ $run == defmt ]]; then
    # defmt frames on QEMU's standard output, decoded on the host against the ELF.
    t0=$(date +%s)
    qemu_status=0
    run_qemu "$elf" > "$out_dir/$target-$variant.frames" 2>/dev/null || qemu_status=$?
    "$defmt_print" -e "$elf" < "$out_dir/$target-$variant.frames" > "$out_dir/$target-$variant.log" 2>&1 || true
    frames=$(wc -c < "$out_dir/$target-$variant.frames")
    if [[ $qemu_status -eq 0 ]] && grep -q "^sgmcmc-firmware: ok" "$out_dir/$target-$variant.log" \
        && ! grep -q "^FAIL" "$out_dir/$target-$variant.log"; then
      echo "   QEMU: $frames bytes of defmt frames, decoded by defmt-print: every check passed, $(( $(date +%s) - t0 )) s"
    else
      echo "   QEMU + defmt-print: FAILED (exit status $qemu_status), $(( $(date +%s) - t0 )) s"; status=1
      grep -E "^(FAIL|sgmcmc-)" "$out_dir/$target-$variant.log" | sed 's/^/   /' | head -20 || true
    fi
  fi
  if [[ $run == size ]]; then
    python3 "$root/tools/flash_report.py" combos "$elf" > "$out_dir/$target-$variant.flash"
    echo "   flash of $(wc -l < "$out_dir/$target-$variant.flash") sampler × integrator × mass combinations measured"
  fi
  if [[ $run == alone ]]; then
    if python3 "$root/tools/flash_report.py" alone "$elf" > "$out_dir/$target-$variant.alone"; then
      echo "   SGNHT-Euler alone: $(head -1 "$out_dir/$target-$variant.alone"); no splitting, diagonal, dense or run-time dispatch symbol"
    else
      echo "   FAILED: the SGNHT-Euler-only firmware links other code: $(grep FORBIDDEN "$out_dir/$target-$variant.alone")"; status=1
    fi
  fi
  if [[ $run == run ]]; then
    # In the background, while the next builds run (QEMU is one thread; -icount makes the
    # instruction counts independent of the host's load). Reported after the last build.
    (
      t0=$(date +%s)
      qemu_status=0
      run_qemu "$elf" > "$out_dir/$target-$variant.log" 2>&1 || qemu_status=$?
      echo "$qemu_status $(( $(date +%s) - t0 ))" > "$out_dir/$target-$variant.qemu"
    ) &
    runs+=("$target $variant")
  fi
done
# The cost curve's references against the crate on the host (a host build of its own: the
# host toolchain, not Debian's rustc and the firmware flags), while the last QEMU runs finish.
(
  t0=$(date +%s)
  check_status=0
  env -u RUSTC -u RUSTC_BOOTSTRAP -u RUSTFLAGS CARGO_TARGET_DIR="$CARGO_TARGET_DIR/reference-check" \
    cargo test -q --release --locked --manifest-path reference-check/Cargo.toml \
    > "$out_dir/reference-check.log" 2>&1 || check_status=$?
  echo "$check_status $(( $(date +%s) - t0 ))" > "$out_dir/reference-check.status"
) &
wait
read -r build_status seconds < "$out_dir/harness-build.status"
if [[ $build_status == prebuilt ]]; then
  echo "== host: the diagnostics check uses the harness at \$SGMCMC_HARNESS_BIN ($harness_bin)"
elif [[ $build_status -eq 0 ]]; then
  echo "== host: harness built for the diagnostics check, $seconds s"
else
  echo "== host: harness build FAILED (exit status $build_status), $seconds s"; status=1
  tail -20 "$out_dir/harness-build.log" | sed 's/^/   /'
fi
read -r check_status seconds < "$out_dir/reference-check.status"
if [[ $check_status -eq 0 ]]; then
  echo "== host: the cost curve's references agree with the crate (reference-check: states on the crate's noise, stationary moments), $seconds s"
else
  echo "== host: reference-check FAILED (exit status $check_status), $seconds s"; status=1
  grep -E "panicked|left the crate|z = |error" "$out_dir/reference-check.log" | head -20 | sed 's/^/   /' || true
fi
for run in "${runs[@]}"; do
  read -r target variant <<<"$run"
  read -r qemu_status seconds < "$out_dir/$target-$variant.qemu"
  if [[ $qemu_status -eq 0 && $variant == curve-* ]]; then
    echo "== QEMU ${CORE[$target]} ($target) $variant: $(grep -c '^curve ' "$out_dir/$target-$variant.log") points of the cost curve," \
      "$(sed -n 's/^peak stack: \([0-9]*\) bytes.*/\1/p' "$out_dir/$target-$variant.log") bytes of stack, $seconds s"
    # The determinism check: the pinned chains of the host's scalar-core build, bit for bit
    # (examples/firmware/src/curve/pins.rs; tests/data/value_stability_scalar_core.txt).
    pins=0 mismatched=()
    while read -r _ name state stats; do
      pins=$((pins + 1))
      want=$(awk -v n="$name" '$1 == n {print $2, $3}' "$root/tests/data/value_stability_scalar_core.txt")
      [[ "$state $stats" == "$want" ]] || mismatched+=("$name")
    done < <(grep '^pin ' "$out_dir/$target-$variant.log")
    if [[ $pins -gt 0 && ${#mismatched[@]} -eq 0 ]]; then
      echo "   all $pins pinned chains of the host's scalar-core build reproduced bit for bit"
    else
      echo "   FAILED: $pins pins, differing from tests/data/value_stability_scalar_core.txt: ${mismatched[*]}"
      status=1
    fi
  elif [[ $qemu_status -eq 0 ]]; then
    echo "== QEMU ${CORE[$target]} ($target) $variant: every check passed, $seconds s"
    # The device's ESS and MCSE against the harness's estimators on the same draws.
    if grep -q '^diagnostics ' "$out_dir/$target-$variant.log"; then
      if "$harness_bin" firmware-diagnostics "$out_dir/$target-$variant.log" \
          > "$out_dir/$target-$variant.diagnostics" 2>&1; then
        echo "   on-device diagnostics agree with the harness's on the same draws:"
      else
        echo "   FAILED: on-device diagnostics against the harness's:"; status=1
      fi
      sed 's/^/   /' "$out_dir/$target-$variant.diagnostics"
    else
      echo "   FAILED: no on-device diagnostics in the log"; status=1
    fi
  else
    echo "== QEMU ${CORE[$target]} ($target) $variant: FAILED (exit status $qemu_status), $seconds s"
    status=1
    grep -E "^(FAIL|sgmcmc-)" "$out_dir/$target-$variant.log" | sed 's/^/   /' | head -20 || true
  fi
done
# The defmt build's diagnostics, decoded by defmt-print (run while building, before the harness
# was there).
for log in "$out_dir"/*-defmt.log; do
  [[ -e $log ]] || continue
  if "$harness_bin" firmware-diagnostics "$log" > "${log%.log}.diagnostics" 2>&1; then
    echo "== $(basename "${log%.log}") (defmt): on-device diagnostics agree with the harness's on the same draws"
  else
    echo "== $(basename "${log%.log}") (defmt): FAILED: on-device diagnostics against the harness's"; status=1
    sed 's/^/   /' "${log%.log}.diagnostics"
  fi
done
# The crate-wide check (tools/panic_matrix.sh: every public entry point, f32/f64, d = 1, 3, 17,
# 64 and run-time, opt-level s, z, 3, on all three cores): the firmware above is one program.
# FIRMWARE_PANIC_MATRIX=0 skips it.
if [[ ${FIRMWARE_PANIC_MATRIX:-1} != 0 ]]; then
  t0=$(date +%s)
  if "$root/tools/panic_matrix.sh" > "$out_dir/panic-matrix.txt" 2>&1; then
    echo "== the crate-wide panic matrix: no panic path in any of its builds, $(( $(date +%s) - t0 )) s"
  else
    echo "== the crate-wide panic matrix FAILED, $(( $(date +%s) - t0 )) s:"; status=1
    tail -40 "$out_dir/panic-matrix.txt" | sed 's/^/   /'
  fi
  sed -n '/^target  /,/^$/p' "$out_dir/panic-matrix.txt" | sed 's/^/   /'
fi
python3 "$root/tools/firmware_report.py" "$out_dir" "$root/docs/firmware.md" "$root/docs/embedded.md"
echo "wrote docs/firmware.md and docs/embedded.md's firmware table"
exit $status
