#!/usr/bin/env bash
# blackjax on the harness's BNN, then our `harness bnn --timing` beside it (one core each).
#
#   tools/peer_bench/bnn.sh           # -> tools/peer_bench/out/bnn_blackjax.csv, and the table
#   tools/peer_bench/bnn.sh --quick   # smoke test -> out/bnn_blackjax_quick.csv
#
# Uses (and creates on first use) the venv of run.sh, tools/peer_bench/.venv.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../.."
# shellcheck source=venv.sh
source "$HERE/venv.sh"
mkdir -p "$HERE/out"
QUICK=()
OUT="$HERE/out/bnn_blackjax.csv"
for a in "$@"; do
  if [[ "$a" == "--quick" ]]; then QUICK=(--quick); OUT="$HERE/out/bnn_blackjax_quick.csv"; fi
done
# One core for blackjax (XLA's threads included), as for our single-threaded harness.
taskset -c 0 "$PY" "$HERE/bnn_blackjax.py" --out "$OUT" "${QUICK[@]}"
cd "$ROOT"
cargo build --release --quiet -p harness
BNN_PEER_CSV="$OUT" taskset -c 0 target/release/harness bnn --timing "${QUICK[@]}" --out harness/out
