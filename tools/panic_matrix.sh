#!/usr/bin/env bash
# The crate-wide "no panic path" check. tools/firmware.sh checks one program (the firmware);
# this builds examples/panic-check, which exports every public entry point of every sampler
# (constructors, setters, step, run, run_scheduled, checkpoint save/restore; SGLD, SGHMC,
# SGNHT, mSGNHT, SGMGT/SGMGT-D, HMC, SG-NPHMC, MCEM, the calibrated wrapper; each integrator
# and mass; f32 and f64; d = 1, 3, 17, 64 as fixed-size arrays and a run-time length; and the
# free functions: rng, linalg, masses, kinetics, noise estimate, schedules; see its
# src/main.rs) as standalone C functions, for thumbv6m-none-eabi, thumbv7em-none-eabihf and
# thumbv8m.main-none-eabihf at opt-level s, z and 3 (9 ELFs), with Debian's rustc and
# -Zbuild-std=core; counts in each ELF the panic entry points and the call sites into them
# (tools/panic_sites.py); checks that every export is in the ELF's symbol table and that every
# export that runs the chain reaches the model's callback (tools/panic_exports.py: an export
# the compiler folded to an error path would check nothing); prints a table per build and,
# on failure, every source line with a panic call site (tools/panic_report.py: the panic
# function, the builds, the functions it is inlined into). Exit status 1 on any panic entry
# point or call site, missing export or dead export.
#
#   tools/panic_matrix.sh            # needs rustc-web cargo-web rust-web-src rust-web-llvm lld
#   tools/panic_matrix.sh --install  # apt-get installs them first when missing (CI)
#   tools/panic_matrix.sh --full     # every entry point at every fixed size, each fixed-size
#                                    # `step` free to be inlined whole (feature `full`; several
#                                    # times the build time: not for CI)
#   PANIC_MATRIX_OPTS="s" PANIC_MATRIX_TARGETS="thumbv7em-none-eabihf" tools/panic_matrix.sh
#   PANIC_MATRIX_REPORT_ONLY=1 tools/panic_matrix.sh   # re-check the last run's ELFs
#
# The builds: two cargo invocations at the same time (each with two jobs, its three targets in
# parallel); the check crate is one package per opt-level, examples/panic-check{,/opt-z,/opt-3},
# so that its opt-level is a per-package profile override:
#   * opt-level s and z (one invocation): fat LTO, one codegen unit, `panic = "abort"`, the
#     firmware's profile. core, compiler_builtins and the rand crates keep the profile's
#     settings and are compiled once per target for both; so is sgmcmc (fat LTO re-optimises
#     all of it at the check package's opt-level).
#   * opt-level 3 (the other, in target/nolto): no LTO, 16 codegen units for the check package,
#     sgmcmc at opt-level 3: cargo's default release profile, where core is not re-optimised
#     with the crate and generic code not marked #[inline] is not inlined across codegen units,
#     so other inlining decisions are checked (and LLVM merges fewer panic calls, so the source
#     lines are more precise). Without LTO core is compiled once more per target, without
#     bitcode.
#   Everything is cached in examples/panic-check/target across runs; each build's time is the
#   check package's (wall/CPU: the wall times overlap), the total is printed after the table.
#
# What is covered, and what is not:
#   * Release profiles only: no `overflow-checks`, no `debug-assertions`. With overflow checks
#     every integer `+`, `-`, `*` the compiler cannot bound is a call site of
#     `panic_const_add_overflow` & co. (`--overflow-checks` builds sgmcmc and the check package
#     with them, for information: expect many); debug assertions turn on core's precondition
#     checks (`panic_nounwind`) and the crate's own `debug_assert!`s, panic paths by design.
#   * `panic = "abort"`, as in any no_std program; unwinding has the same call sites.
#   * Debian's rustc and its LLVM: another compiler makes other inlining decisions. The check
#     crate models two kinds of caller. The run-time-length exports (`..._any_dn_...`) take the
#     configuration and n at run time and share one copy of every sampler function (a program
#     that calls the library from several places, or chooses its settings at run time). The
#     fixed-size exports (`..._d17_step` & co.) have the configuration and n as constants at
#     the call site; with this compiler the constructors and `step` stay out of line, so they
#     mostly check the call-site glue, unless --full gives each `step` a copy of its own that
#     LLVM may inline whole (a program that calls `step` in one place). A program whose
#     inlining differs from all of these can still, in principle, keep a check the compiler
#     could not remove here.
#   * Not the Display/Debug implementations of the error types (core::fmt has panic paths of
#     its own, and a program that formats links them anyway).
set -euo pipefail

# As cargo's RUSTC_WRAPPER (set below): runs rustc and logs the crate, target and wall time.
if [[ -n ${PANIC_MATRIX_TIMES:-} && $# -gt 0 && $(basename "$1") == rustc ]]; then
  args=("$@") crate="" target=host
  for ((i = 1; i + 1 < ${#args[@]}; i++)); do
    case ${args[i]} in
      --crate-name) crate=${args[i + 1]} ;;
      --target) target=${args[i + 1]} ;;
    esac
  done
  t0=$EPOCHREALTIME
  status=0
  "$@" || status=$?
  # The compiler's CPU seconds (user + system of this shell's children, from `times`).
  times > "$PANIC_MATRIX_TIMES.$$"
  cpu=$(awk 'NR == 2 { n = split($0, f, /[ ms]+/); print f[1] * 60 + f[2] + f[3] * 60 + f[4] }' \
    "$PANIC_MATRIX_TIMES.$$")
  rm -f "$PANIC_MATRIX_TIMES.$$"
  [[ -n $crate && $crate != ___ ]] && echo "$crate $target $t0 $EPOCHREALTIME $cpu" >> "$PANIC_MATRIX_TIMES"
  exit $status
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
features=() overflow=()
for arg in "$@"; do
  case $arg in
    --install)
      # rust-web-llvm brings the llvm-N tools of rustc's own LLVM (llvm-objdump-22 beside
      # rustc 1.96): Debian's default `llvm` (14) mis-decodes some Armv8-M code.
      if ! [[ -x /usr/bin/rustc && -x /usr/bin/cargo && -x /usr/bin/ld.lld ]] ||
         ! compgen -c llvm-objdump- >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
          rustc-web cargo-web rust-web-src rust-web-llvm lld llvm >/dev/null
      fi
      ;;
    --full) features=(--features full) ;;
    --overflow-checks)
      for pkg in sgmcmc sgmcmc-panic-check sgmcmc-panic-check-z sgmcmc-panic-check-3; do
        overflow+=("--config=profile.release.package.$pkg.overflow-checks=true")
      done
      ;;
    *) echo "usage: $0 [--install] [--full] [--overflow-checks]" >&2; exit 2 ;;
  esac
done
cd "$root/examples/panic-check"
export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$PWD/target"
export RUSTFLAGS="-C linker=ld.lld -C linker-flavor=ld.lld"
CARGO=/usr/bin/cargo
read -r -a targets <<<"${PANIC_MATRIX_TARGETS:-thumbv6m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf}"
read -r -a opts <<<"${PANIC_MATRIX_OPTS:-s z 3}"
out_dir="$CARGO_TARGET_DIR/matrix"
# PANIC_MATRIX_REPORT_ONLY=1 re-checks the ELFs of the last run without building.
report_only=${PANIC_MATRIX_REPORT_ONLY:-}
[[ -n $report_only ]] || rm -rf "$out_dir"
mkdir -p "$out_dir"

# The package of each opt-level (examples/panic-check/Cargo.toml: the same source, opt-level a
# per-package override) and the cargo invocations: s and z together (fat LTO, the profile's),
# 3 alone (no LTO, sgmcmc at opt-level 3; see the header).
declare -A PACKAGE=([s]=sgmcmc-panic-check [z]=sgmcmc-panic-check-z [3]=sgmcmc-panic-check-3)
invocations=()
lto_opts=() && for opt in "${opts[@]}"; do [[ $opt == 3 ]] || lto_opts+=("$opt"); done
[[ ${#lto_opts[@]} -gt 0 ]] && invocations+=("${lto_opts[*]}")
[[ " ${opts[*]} " == *" 3 "* ]] && invocations+=("3")

t_start=$EPOCHREALTIME
target_args=()
for t in "${targets[@]}"; do target_args+=(--target "$t"); done
# The two invocations run at the same time, each with two jobs: the opt-level 3 one in a target
# directory of its own (its core differs anyway), so that neither waits for the other's lock
# and the cores never idle while one invocation finishes its last unit.
build() {
  local inv=$1 dir=$CARGO_TARGET_DIR args=() opt t0
  read -r -a inv_opts <<<"$inv"
  for opt in "${inv_opts[@]}"; do
    args+=(-p "${PACKAGE[$opt]}")
    [[ ${#features[@]} -gt 0 ]] && args+=(--features "${PACKAGE[$opt]}/full")
  done
  if [[ $inv == 3 ]]; then
    dir=$CARGO_TARGET_DIR/nolto
    args+=(--config=profile.release.lto=false --config=profile.release.package.sgmcmc.opt-level=3)
  fi
  t0=$EPOCHREALTIME
  CARGO_TARGET_DIR=$dir PANIC_MATRIX_TIMES="$out_dir/times" RUSTC_WRAPPER="$root/tools/panic_matrix.sh" \
    $CARGO build -q --release -j 2 -Zbuild-std=core "${target_args[@]}" "${args[@]}" "${overflow[@]}"
  printf '== opt-level %s: %d ELF(s) built in %.0f s\n' "${inv// /, }" \
    $(( ${#inv_opts[@]} * ${#targets[@]} )) "$(echo "$EPOCHREALTIME - $t0" | bc)"
  for opt in "${inv_opts[@]}"; do
    for t in "${targets[@]}"; do
      cp "$dir/$t/release/${PACKAGE[$opt]}" "$out_dir/$t-O$opt.elf"
    done
  done
}
if [[ -z $report_only ]]; then
  pids=()
  for inv in "${invocations[@]}"; do
    build "$inv" > "$out_dir/build-${inv// /}.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  cat "$out_dir"/build-*.log
  [[ $failed == 0 ]] || { echo "FAILED: a build failed (above)"; exit 1; }
fi
build_seconds=$(echo "$EPOCHREALTIME - $t_start" | bc)

# The checks, two ELFs at a time.
check() {
  local elf=$1
  python3 "$root/tools/panic_exports.py" "$elf" > "${elf%.elf}.exports" 2>&1 || true
  python3 "$root/tools/panic_sites.py" "$elf" --tsv > "${elf%.elf}.sites" 2>&1 || true
}
export -f check
export root
t0=$EPOCHREALTIME
printf '%s\n' "$out_dir"/*.elf | xargs -P 2 -I{} bash -c 'check {}'
check_seconds=$(echo "$EPOCHREALTIME - $t0" | bc)

# Wall/CPU seconds compiling each build's check package, from the wrapper's log.
seconds() {
  local crate=${PACKAGE[$1]//-/_}
  touch "$out_dir/times"
  awk -v c="$crate" -v t="$2" '$1 == c && $2 == t { w += $4 - $3; s += $5; n++ }
                               END { if (n) printf "%.0f/%.0fs", w, s; else printf "cached" }' \
    "$out_dir/times"
}

status=0
# build: wall/CPU seconds compiling the check package (sgmcmc, compiled once per target and
# LTO setting, is in the total below); exports: functions in .pc_names (all in the symbol table unless the verdict says
# otherwise); chain: exports that run the chain (all reach the model's callback unless it says
# otherwise); entry, sites: panic entry points and call sites (tools/panic_sites.py).
printf '\n%-27s %-4s %9s %8s %6s %6s %6s %s\n' target opt build exports chain entry sites verdict
for opt in "${opts[@]}"; do
  for t in "${targets[@]}"; do
    base="$out_dir/$t-O$opt"
    read -r names missing chain dead < <(head -1 "$base.exports")
    read -r entry sites < <(head -1 "$base.sites")
    verdict=ok
    if [[ $missing != 0 || $dead != 0 || $names == 0 ]]; then verdict="EXPORTS: $missing missing, $dead dead"; status=1; fi
    if [[ $entry != 0 || $sites != 0 ]]; then verdict="PANIC PATHS"; status=1; fi
    printf '%-27s %-4s %9s %8s %6s %6s %6s %s\n' "$t" "$opt" "$(seconds "$opt" "$t")" \
      "$names" "$chain" "$entry" "$sites" "$verdict"
  done
done
printf '\nbuilds %.0f s wall; CPU: check packages %.0f s, sgmcmc %.0f s, core and the other dependencies %.0f s (cached across runs); checks %.0f s wall\n' \
  "$build_seconds" \
  "$(awk '$1 ~ /^sgmcmc_panic_check/ { s += $5 } END { print s + 0 }' "$out_dir/times" 2>/dev/null || echo 0)" \
  "$(awk '$1 == "sgmcmc" { s += $5 } END { print s + 0 }' "$out_dir/times" 2>/dev/null || echo 0)" \
  "$(awk '$1 != "sgmcmc" && $1 !~ /^sgmcmc_panic_check/ { s += $5 } END { print s + 0 }' "$out_dir/times" 2>/dev/null || echo 0)" \
  "$check_seconds"

# Every distinct panic site: the source line (the innermost frame in sgmcmc's sources), the
# panic function, the function it is in, and the builds and float types it appears in.
if [[ $status != 0 ]]; then
  python3 "$root/tools/panic_report.py" "$out_dir"/*.sites
  for f in "$out_dir"/*.exports; do
    tail -n +2 "$f" | head -20 | sed "s|^|$(basename "${f%.exports}"): |"
  done
fi
exit $status
