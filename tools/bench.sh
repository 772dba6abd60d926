#!/usr/bin/env bash
# One bench run, everything in it comparable: our portable build, our dispatched build (`std`, no
# target flags), our native build, blackjax right after, then docs/performance.md and
# docs/performance-peers.png from those results.
#
#   tools/bench.sh              # ~18 min on the 2-core development machine
#   tools/bench.sh --no-peers   # our two builds only (the report keeps the last peer CSV out)
#
# Run it on an otherwise idle machine: timings are only comparable within one run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
peers=1
for a in "$@"; do [[ "$a" == "--no-peers" ]] && peers=0; done

stage() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }
stage "portable build: cargo bench -p sgmcmc-bench"
cargo bench -p sgmcmc-bench
# Absolute target directories: criterion writes its results under CARGO_TARGET_DIR, resolved
# from the bench's own working directory (the package's, `benches/`), so a relative one would
# put them in benches/target/ where bench_report.py does not look.
stage "dispatched build: --features std, no target flags (run-time CPU dispatch)"
CARGO_TARGET_DIR="$PWD/target/dispatch" cargo bench -p sgmcmc-bench --features std
stage "native build: -C target-cpu=native --features std"
RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR="$PWD/target/native" \
  cargo bench -p sgmcmc-bench --features std

PY=python3
if [[ $peers == 1 ]]; then
  stage "peers: tools/peer_bench/run.sh"
  tools/peer_bench/run.sh
  PY=tools/peer_bench/.venv/bin/python
  "$PY" -c "import matplotlib" 2>/dev/null ||
    "$PY" -m pip install --quiet --disable-pip-version-check "matplotlib==3.10.*"
  stage "report"
  "$PY" tools/bench_report.py --plot docs/performance-peers.png > docs/performance.md
else
  stage "report (no peers)"
  "$PY" tools/bench_report.py --peers /dev/null > docs/performance.md
fi
echo "wrote docs/performance.md"
