#!/usr/bin/env bash
# Builds the shared library of the C ABI (libsgmcmc_ffi.so, the crate's cdylib) in release, as
# is and with run-time dispatch (--features dispatch), and runs ffi/tests/ctypes_sgnht.py against
# each with python3 (standard library only): SGNHT's stationary means and variances through a
# Python gradient callback, an error path, and the time per step. .ci/run runs this in its own
# target directory (CARGO_TARGET_DIR=target/ctypes).
#
#   ffi/tests/ctypes.sh        # uses $CARGO_TARGET_DIR, else the workspace's target/
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

# Builds the cdylib with the cargo arguments given, then checks and runs it. The cdylib's path
# comes from cargo's own report of the artifact it built (robust to the target directory, a
# --target triple in the environment, or another platform's file name).
check_library() {
    local json lib exported declared
    json="$(cargo build --release -p sgmcmc-ffi "$@" --message-format=json-render-diagnostics)"
    lib="$(printf '%s\n' "$json" | grep '"name":"sgmcmc_ffi"' |
        grep -o '"[^"]*libsgmcmc_ffi\.\(so\|dylib\)"' | tr -d '"' | tail -n 1)"
    if [[ -z "$lib" || ! -f "$lib" ]]; then
        echo "FAIL: no libsgmcmc_ffi.so among cargo's artifacts" >&2
        exit 1
    fi

    # The shared library exports exactly the header's functions: every sgmcmc_* of
    # include/sgmcmc.h and nothing else (std, core and the kernel stay hidden).
    if command -v nm >/dev/null; then
        exported="$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort)"
        declared="$(grep -o '\bsgmcmc_[a-z0-9_]*(' ffi/include/sgmcmc.h | tr -d '(' | sort -u)"
        if [[ "$exported" != "$declared" ]]; then
            echo "FAIL: $lib exports other symbols than the header declares:" >&2
            diff <(echo "$declared") <(echo "$exported") >&2 || true
            exit 1
        fi
        echo "$lib exports the header's $(echo "$exported" | wc -l) functions and nothing else"
    else
        echo "no nm on this machine: the exported symbols were not checked"
    fi

    python3 ffi/tests/ctypes_sgnht.py "$lib"
}

echo "== the default build"
check_library
# The build README.md recommends for other runtimes on x86-64: run-time CPU dispatch (std linked;
# the f64 noise is the Box–Muller). The same checks: the moments hold on its stream too. It
# rebuilds sgmcmc and sgmcmc-ffi only, in the same target directory.
echo "== with --features dispatch"
check_library --features dispatch
