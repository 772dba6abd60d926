# Sourced by run.sh and bnn.sh: creates tools/peer_bench/.venv on first use and (re)installs
# requirements.txt when it changed. Sets PY to the venv's python.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
PY="$VENV/bin/python"
REQ="$HERE/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [[ ! -x "$PY" ]]; then
  echo "peer_bench: creating venv $VENV" >&2
  "${PYTHON:-python3}" -m venv "$VENV"
fi
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$want" ]]; then
  echo "peer_bench: installing $REQ" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$REQ"
  echo "$want" > "$STAMP"
fi
