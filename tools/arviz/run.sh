#!/usr/bin/env bash
# Writes the draws of three quick harness runs (gaussian-mean: SGHMC/SGNHT/mSGNHT on a 1-d mean;
# blr: SGNHT/SGMGT/SGMGT-D on Pima's 9 weights; normal-1d: the MCEM samplers) with --draws,
# loads them with ArviZ (its own venv, tools/arviz/.venv) and prints az.summary beside
# harness' ESS and split-R̂ of the same draws; checks `harness ksd` against NumPy
# (tools/arviz/ksd_check.py). Exits non-zero if any disagree.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/arviz/venv.sh
cargo build --release -q -p harness
BIN="$PWD/target/release/harness"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
"$BIN" gaussian-mean --quick --chains 2 --out "$OUT/figures" --draws "$OUT/gaussian-mean" > /dev/null
"$BIN" blr --quick --out "$OUT/figures" --draws "$OUT/blr" --draws-every 5 > /dev/null
"$BIN" normal-1d --quick --out "$OUT/figures" --draws "$OUT/normal-1d" > /dev/null
status=0
for run in gaussian-mean blr normal-1d; do
  "$PY" tools/arviz/compare.py "$BIN" "$OUT/$run" || status=1
done
# The kernel Stein discrepancy against a direct NumPy computation.
"$PY" tools/arviz/ksd_check.py "$BIN" || status=1
exit $status
