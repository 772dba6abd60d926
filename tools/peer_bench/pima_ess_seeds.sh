#!/usr/bin/env bash
# The ESS behind python_pima.sh's ESS/s ratios, over 10 seeds (untimed): how much of the
# ratio to blackjax is one seed's luck. Writes out/pima_ess_seeds.md; reads the wall times of
# the last python_pima.sh run from out/python_pima_*_1.json.
#
#   tools/peer_bench/pima_ess_seeds.sh
#   SGMCMC_PY=/path/to/python tools/peer_bench/pima_ess_seeds.sh   # a python with sgmcmc, arviz
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SGMCMC_PY="${SGMCMC_PY:-$ROOT/python/.venv/bin/python}"
[[ -x "$SGMCMC_PY" ]] || { echo "pima_ess_seeds.sh: no $SGMCMC_PY (run tools/python.sh, or set SGMCMC_PY)" >&2; exit 1; }

# blackjax's venv (tools/peer_bench/.venv, from requirements.txt): sets PY.
# shellcheck source=venv.sh
source "$HERE/venv.sh"

mkdir -p "$HERE/out"
"$SGMCMC_PY" "$HERE/pima_ess_seeds.py" --seeds "${SEEDS:-10}" --blackjax-python "$PY" \
  --out "$HERE/out/pima_ess_seeds.md"
