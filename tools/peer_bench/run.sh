#!/usr/bin/env bash
# Peer benchmark of blackjax's SG-MCMC samplers (sgld, sgnht).
#
#   tools/peer_bench/run.sh            # full run -> out/blackjax.csv
#   tools/peer_bench/run.sh --quick    # smoke test -> out/blackjax_quick.csv
#   tools/peer_bench/run.sh --dims 17,1024   # extra args go to blackjax_bench.py
#   WAIT_IDLE=600 tools/peer_bench/run.sh     # first wait up to 600 s for an idle machine
#
# Creates tools/peer_bench/.venv on first use and installs requirements.txt.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUTDIR="$HERE/out"

QUICK=0
for a in "$@"; do [[ "$a" == "--quick" ]] && QUICK=1; done
if [[ $QUICK == 1 ]]; then OUT="$OUTDIR/blackjax_quick.csv"; else OUT="$OUTDIR/blackjax.csv"; fi
LOG="${OUT%.csv}.log"
TMP="$OUT.tmp"

command -v taskset >/dev/null || { echo "run.sh: taskset (util-linux) is required" >&2; exit 1; }

# --- venv (re)install only when requirements.txt changed -------------------
# shellcheck source=venv.sh
source "$HERE/venv.sh"

# --- optional: wait (up to $WAIT_IDLE seconds) for the machine to go idle ---
# The bench retries rows that were disturbed, but starting on an idle machine is better.
# shellcheck source=wait_idle.sh
source "$HERE/wait_idle.sh" run.sh

mkdir -p "$OUTDIR"
rm -f "$TMP"
: > "$LOG"
NCPU="$(nproc)"
start=$(date +%s.%N)

# --- run 1: one core -------------------------------------------------------
# taskset pins the process (and every XLA/Eigen worker thread) to CPU 0; XLA
# sizes its CPU thread pool from the affinity mask. XLA_FLAGS additionally turns
# off Eigen's multithreading (the "intra_op_parallelism_threads=1" token is
# the commonly quoted recipe; XLA ignores it, it is harmless).
echo "run.sh: [1/2] threads=1 (taskset -c 0)" >&2
env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
    taskset -c 0 "$PY" "$HERE/blackjax_bench.py" --dtype both --threads-label 1 \
    --out "$TMP" "$@" 2> >(tee -a "$LOG" >&2)

# --- run 2: all cores (2 on the reference machine) -------------------------
echo "run.sh: [2/2] threads=$NCPU (taskset -c 0-$((NCPU - 1)))" >&2
env -u XLA_FLAGS -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u MKL_NUM_THREADS \
    taskset -c "0-$((NCPU - 1))" "$PY" "$HERE/blackjax_bench.py" --dtype both \
    --threads-label "$NCPU" --out "$TMP" "$@" 2> >(tee -a "$LOG" >&2)

mv "$TMP" "$OUT"
nwarn=$(grep -c WARNING "$LOG" || true)
if [[ "$nwarn" != 0 ]]; then
  echo "run.sh: $nwarn row(s) were timed while other processes were busy (see $LOG);" \
       "rerun on a quiet machine before quoting them" >&2
fi
end=$(date +%s.%N)
printf 'run.sh: wrote %s (log %s); total wall time %.1f s\n' "$OUT" "$LOG" \
  "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')" >&2
cat "$OUT"
