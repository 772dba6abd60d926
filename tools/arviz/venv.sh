# Sourced by this folder's scripts: its venv (.venv) from its requirements.txt, by tools/venv.sh.
# Sets PY to the venv's python.
VENV_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../venv.sh
source "$VENV_HOME/../venv.sh"
