#!/usr/bin/env bash
# The Python package (python/): rustfmt and clippy of its extension crate, then a venv
# (python/.venv, from python/requirements.txt) into which `pip install ./python` builds and
# installs the package exactly as a user's would (maturin in pip's isolated build environment),
# then pytest. The tests run examples/python_reference.rs with cargo for the bit-for-bit check.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
(cd python && cargo fmt --check && cargo clippy --quiet --all-targets -- -D warnings)
echo "python: fmt + clippy $(($(date +%s) - t0)) s"
VENV_HOME="$PWD/python"
# shellcheck source=venv.sh
source tools/venv.sh
t1=$(date +%s)
"$PY" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python
echo "python: pip install ./python $(($(date +%s) - t1)) s"
t2=$(date +%s)
TQDM_DISABLE=1 "$PY" -m pytest -q python/tests
echo "python: pytest $(($(date +%s) - t2)) s"
