#!/usr/bin/env python3
"""The code each sampler × integrator × mass links, from the flash firmware builds
(examples/firmware/src/flash/): a function and every function it reaches through calls, apart
from what every firmware shares.

    flash_report.py combos ELF          # one line per `flash_*` function: name, bytes
    flash_report.py alone ELF           # the SGNHT-Euler-only build: its function list, the
                                        # symbols it must not hold, crate vs reference bytes

The call graph comes from `llvm-objdump -d` (every `bl`, `blx`, `b`/`b.w` to another function's
start), the sizes from `llvm-nm -S`. Shared, and so not counted: the ziggurat's out-of-line
tail (`sgmcmc::ziggurat`; its tables are data), libm, compiler-builtins and `core`, the
`__aeabi_*` helpers, the generator (`rand_pcg`) and the flash builds' model. Exit status 1 when
`alone` finds a forbidden symbol.
"""
import re
import subprocess
import sys
from collections import defaultdict

from panic_sites import llvm_tool

SHARED = re.compile(r"(sgmcmc::ziggurat::|libm::|compiler_builtins::|^core::|^<core::|__aeabi_|"
                    r"^mem(cpy|set|move|cmp)$|rand_pcg|::model::Model|^__)")
# What a firmware that runs SGNHT-Euler with the identity mass must not link: the splitting
# scheme, the diagonal and dense masses' kinetics and flows, the run-time mass and integrator
# dispatch, the dense linear algebra.
FORBIDDEN = re.compile(r"(splitting|Splitting|aboba|aoboa|Diagonal|diagonal|Dense|dense|"
                       r"MassBuffer|visit_mass|friction_flow|linalg|cholesky|eigen|Integrator>)")


def tool(name):
    """panic_sites.llvm_tool (the newest LLVM: an older one mis-decodes Armv8-M), or exit."""
    return llvm_tool(name) or sys.exit(f"flash_report.py: {name} not found (Debian's llvm package)")


def functions(elf):
    """{start address: (name, size)} of every defined function."""
    out = subprocess.run([tool("llvm-nm"), "-S", "--defined-only", "--demangle", elf],
                         capture_output=True, text=True, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in "tTwW":
            addr, size, name = int(parts[0], 16) & ~1, int(parts[1], 16), parts[3]
            if size and (addr not in funcs or funcs[addr][1] < size):
                funcs[addr] = (name, size)
    return funcs


def call_graph(elf, funcs):
    """{caller name: {callee names}} from the direct branches between functions."""
    out = subprocess.run([tool("llvm-objdump"), "-d", "--no-show-raw-insn", elf],
                         capture_output=True, text=True, check=True).stdout
    starts = sorted(funcs)
    owner = {}

    def containing(addr):
        lo, hi = 0, len(starts) - 1
        best = None
        while lo <= hi:
            mid = (lo + hi) // 2
            if starts[mid] <= addr:
                best, lo = starts[mid], mid + 1
            else:
                hi = mid - 1
        if best is not None and addr < best + funcs[best][1]:
            return best
        return None

    edges = defaultdict(set)
    branch = re.compile(r"^\s*([0-9a-f]+):\s+(bl|blx|b|b\.w|beq\.w|bne\.w)\s+0x([0-9a-f]+)")
    for line in out.splitlines():
        m = branch.match(line)
        if not m:
            continue
        at, target = int(m.group(1), 16), int(m.group(3), 16)
        src = owner.get(at) or containing(at)
        owner[at] = src
        if src is None or target not in funcs or target == src:
            continue
        edges[funcs[src][0]].add(funcs[target][0])
    return edges


def reached(root, edges):
    """Every function `root` reaches, apart from the shared ones (whose callees are shared too)."""
    seen, todo = {root}, [root]
    while todo:
        f = todo.pop()
        for g in edges.get(f, ()):
            if g not in seen and not SHARED.search(g):
                seen.add(g)
                todo.append(g)
    return seen


def closure_size(root, funcs, edges):
    sizes = {name: size for name, size in funcs.values()}
    return sum(sizes.get(f, 0) for f in reached(root, edges))


def main():
    mode, elf = sys.argv[1], sys.argv[2]
    funcs = functions(elf)
    edges = call_graph(elf, funcs)
    if mode == "combos":
        for name, _ in sorted(funcs.values()):
            if name.startswith("flash_"):
                print(name[len("flash_"):], closure_size(name, funcs, edges))
        return 0
    # The SGNHT-Euler-only build.
    names = sorted(name for name, _ in funcs.values())
    bad = [n for n in names if FORBIDDEN.search(n)]
    crate = closure_size("crate_step", funcs, edges)
    reference = closure_size("reference_step", funcs, edges)
    print(f"crate {crate} reference {reference} ratio {crate / reference:.2f}")
    print("crate reaches: " + ", ".join(sorted(reached("crate_step", edges))))
    print("functions: " + str(len(names)))
    for n in names:
        print("  " + n)
    if bad:
        print("FORBIDDEN: " + "; ".join(bad))
        return 1
    print("forbidden: none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
