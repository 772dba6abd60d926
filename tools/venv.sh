# Sourced with VENV_HOME set to a folder that holds a requirements.txt (tools/peer_bench,
# tools/arviz): creates $VENV_HOME/.venv on first use and (re)installs the requirements when they
# changed. Sets PY to the venv's python.
: "${VENV_HOME:?set VENV_HOME to the folder holding requirements.txt}"
VENV="$VENV_HOME/.venv"
PY="$VENV/bin/python"
REQ="$VENV_HOME/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [[ ! -x "$PY" ]]; then
  echo "$(basename "$VENV_HOME"): creating venv $VENV" >&2
  "${PYTHON:-python3}" -m venv "$VENV"
fi
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$want" ]]; then
  echo "$(basename "$VENV_HOME"): installing $REQ" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$REQ"
  echo "$want" > "$STAMP"
fi
