# Sourced by this folder's benchmarks: waits (up to $WAIT_IDLE seconds, default 0) until the
# machine is idle, i.e. less than 0.1 core busy over 5 s (USER_HZ = 100 on Linux). Other
# processes on a 2-core box distort the timings. $1 names the caller in the messages.
busy_ticks() { awk 'NR==1{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
WAIT_IDLE="${WAIT_IDLE:-0}"
waited=0
while (( waited < WAIT_IDLE )); do
  a=$(busy_ticks); sleep 5; b=$(busy_ticks); waited=$((waited + 5))
  if (( b - a < 50 )); then break; fi
  echo "${1:-bench}: machine busy ($(( (b - a) / 5 ))% of one core); waiting (${waited}s/${WAIT_IDLE}s)" >&2
done
