#!/usr/bin/env python3
"""Checks that examples/panic-check's ELF holds what it claims to; exits 1 if not.

    panic_exports.py ELF [--list]

The check crate lists every export's name, one per line, in its `.pc_names` section. This
checks that each is a function symbol of the ELF (the linker kept it), and that each export of
an entry point that runs the chain (`step`, `run`, `run_scheduled`, `set_leapfrog_steps`,
`integrate`, `block`) reaches, through direct calls, an indirect call: the model's callback. An
export that cannot reach it was folded to an error path (a buffer length or a setting the
compiler proved wrong) and would check nothing. Prints one line:
`<exports> <missing from the symbol table> <chain exports> <not reaching the model>`, then the
offenders; `--list` prints every export's name instead.
"""
import re
import struct
import subprocess
import sys

from panic_sites import branch_target, disassembly

CHAIN = re.compile(r"_(step|run|run_scheduled|set_leapfrog_steps|integrate|block)$")


def section(elf, name):
    """The bytes of section `name` of a little-endian ELF32 or ELF64 file."""
    data = open(elf, "rb").read()
    is64 = data[4] == 2
    if is64:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    else:
        shoff, = struct.unpack_from("<I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)

    def header(i):
        base = shoff + i * shentsize
        if is64:
            nm, _, _, _, off, size = struct.unpack_from("<IIQQQQ", data, base)
        else:
            nm, _, _, _, off, size = struct.unpack_from("<IIIIII", data, base)
        return nm, off, size

    _, stroff, _ = header(shstrndx)
    for i in range(shnum):
        nm, off, size = header(i)
        end = data.index(b"\0", stroff + nm)
        if data[stroff + nm:end].decode() == name:
            return data[off:off + size]
    return b""


def functions(elf):
    """{name: address} of the function symbols."""
    out = subprocess.run(["readelf", "-sW", elf], stdout=subprocess.PIPE, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC":
            found[f[7]] = int(f[1], 16) & ~1
    return found


def call_graph(elf):
    """{function address: [direct call/branch targets, has an indirect call]}."""
    graph = {}
    for start, _, _, mnemonic, operands in disassembly(elf, demangle=False):
        node = graph.setdefault(start, [set(), False])
        target = branch_target(mnemonic, operands)
        if target is not None:
            if target != start:
                node[0].add(target)
        elif mnemonic.split(".")[0] in ("blx", "call", "callq", "jmp", "jmpq") or (
            mnemonic.split(".")[0] == "bx" and operands.strip() != "lr"
        ):
            # An indirect call (`blx lr` too: LLVM may hold the callee in lr); `bx lr` returns.
            node[1] = True
    return graph


def reaches_indirect(graph, start):
    seen, todo = set(), [start]
    while todo:
        a = todo.pop()
        if a in seen or a not in graph:
            continue
        seen.add(a)
        targets, indirect = graph[a]
        if indirect:
            return True
        todo.extend(targets)
    return False


def main():
    elf = sys.argv[1]
    names = [n for n in section(elf, ".pc_names").decode().split("\n") if n]
    if "--list" in sys.argv:
        print("\n".join(sorted(names)))
        return
    funcs = functions(elf)
    missing = [n for n in names if n not in funcs]
    chain = [n for n in names if CHAIN.search(n) and n in funcs]
    graph = call_graph(elf)
    dead = [n for n in chain if not reaches_indirect(graph, funcs[n])]
    print(f"{len(names)} {len(missing)} {len(chain)} {len(dead)}")
    for n in missing:
        print(f"  missing: {n}")
    for n in dead:
        print(f"  never calls the model: {n}")
    sys.exit(1 if missing or dead or not names else 0)


if __name__ == "__main__":
    main()
