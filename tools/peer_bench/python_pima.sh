#!/usr/bin/env bash
# sgmcmc from Python against blackjax's sgnht on Pima (issue 35's "Speed" must-show):
# wall time to 10^5 draws (4 chains x 25 000, after 1 000 warm-up steps that are timed too) and
# ESS per second, for the built-in model, a numba cfunc (on rows sgmcmc draws, and drawing its
# own), a Python callable and blackjax.
#
#   tools/peer_bench/python_pima.sh                 # -> out/python_pima.md (and out/*.json)
#   WAIT_IDLE=600 tools/peer_bench/python_pima.sh    # first wait up to 10 min for an idle box
#   SGMCMC_PY=/path/to/python tools/peer_bench/python_pima.sh   # a python with sgmcmc, numba, arviz
#
# Every method runs pinned to CPU 0 (taskset -c 0; XLA sizes its thread pool from the affinity
# mask); sgmcmc and blackjax also run on all cores (4 chains on $(nproc) cores).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$HERE/out"
SGMCMC_PY="${SGMCMC_PY:-$ROOT/python/.venv/bin/python}"
[[ -x "$SGMCMC_PY" ]] || { echo "python_pima.sh: no $SGMCMC_PY (run tools/python.sh, or set SGMCMC_PY)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "python_pima.sh: taskset (util-linux) is required" >&2; exit 1; }

# blackjax's venv (tools/peer_bench/.venv, from requirements.txt): sets PY.
# shellcheck source=venv.sh
source "$HERE/venv.sh"

# shellcheck source=wait_idle.sh
source "$HERE/wait_idle.sh" python_pima.sh

mkdir -p "$OUT"
NCPU="$(nproc)"
ALL="0-$((NCPU - 1))"
ONE=(env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
     OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 taskset -c 0)
MANY=(env -u XLA_FLAGS -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u MKL_NUM_THREADS taskset -c "$ALL")
echo "python_pima.sh: $(uptime)" >&2

# The full-batch HMC reference (cached in out/pima_hmc_reference.json) is made on first use.
"${ONE[@]}" "$SGMCMC_PY" "$HERE/python_pima.py" --cores 1 --out "$OUT/python_pima_sgmcmc_1.json"
"${MANY[@]}" "$SGMCMC_PY" "$HERE/python_pima.py" --cores "$NCPU" --out "$OUT/python_pima_sgmcmc_$NCPU.json"

# blackjax with replacement gets as many timed runs as sgmcmc's fast methods (15; the least
# is reported); without replacement one run takes 10-20 s, so one.
"${ONE[@]}" "$PY" "$HERE/blackjax_pima.py" --cores 1 --reps 15 --out "$OUT/python_pima_blackjax_1.raw.json" \
  --draws-out "$OUT/python_pima_blackjax_1.npz"
"${ONE[@]}" "$PY" "$HERE/blackjax_pima.py" --cores 1 --without-replacement --reps 1 \
  --out "$OUT/python_pima_blackjax_norepl_1.raw.json" --draws-out "$OUT/python_pima_blackjax_norepl_1.npz"
"${MANY[@]}" "$PY" "$HERE/blackjax_pima.py" --cores "$NCPU" --reps 15 \
  --out "$OUT/python_pima_blackjax_$NCPU.raw.json" --draws-out "$OUT/python_pima_blackjax_$NCPU.npz"
for f in blackjax_1 blackjax_norepl_1 "blackjax_$NCPU"; do
  "$SGMCMC_PY" "$HERE/python_pima.py" --summarise "$OUT/python_pima_$f.raw.json" \
    --out "$OUT/python_pima_$f.json"
  rm -f "$OUT/python_pima_$f.raw.json"
done
echo "python_pima.sh: $(uptime)" >&2

"$SGMCMC_PY" "$HERE/python_pima.py" --out /dev/null --table \
  "$OUT/python_pima_sgmcmc_1.json" "$OUT/python_pima_blackjax_1.json" \
  "$OUT/python_pima_blackjax_norepl_1.json" "$OUT/python_pima_sgmcmc_$NCPU.json" \
  "$OUT/python_pima_blackjax_$NCPU.json" | tee "$OUT/python_pima.md"
