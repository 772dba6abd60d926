#!/usr/bin/env python3
"""Counts the panic entry points an ELF links and the call sites into them; exits 1 if there are any.

    panic_sites.py ELF [-v | --tsv]

Entry points are the function symbols of core's panic machinery (`core::panicking::*`,
`panic_bounds_check`, the slice-index and `copy_from_slice` failures, `unwrap_failed`, …),
matched in the symbol table (`readelf`, mangled or not). Call sites are the `bl`/`b` (Arm) or `call`/`jmp` (x86) instructions
into them from any other function, counted from `llvm-objdump`'s disassembly when an
`llvm-objdump` is installed (else reported as unknown). Prints one line: `<entry points> <call sites>`.

`-v` then lists each site: its address, the calling function and the panic function it calls
(demangled), and its inlined source location, innermost first (`llvm-addr2line -i`).
`--tsv` lists the same as tab-separated fields (address, panic function, caller, the inlined
frames as `function @ file:line` joined by ` <- `, and, when the caller is not sgmcmc's (an
out-of-line instance of a core function, an outlined sequence), up to four of sgmcmc's
functions that reach it, joined by ` | `), for tools/panic_report.py.
"""
import json
import re
import shutil
import subprocess
import sys

PANIC = re.compile(
    r"panicking|panic_bounds_check|slice_index_fail|len_mismatch_fail|unwrap_failed|"
    r"expect_failed|assert_failed|panic_fmt|panic_const|panic_nounwind|rust_begin_unwind|"
    r"slice_end_index|slice_start_index|str_index_overflow|option_expect"
)


def llvm_tool(name):
    """The newest versioned `name-N` on PATH, else `name`. Debian's unversioned llvm-objdump can
    be an older LLVM than rustc's (14 beside rustc's 22 on bookworm), which mis-decodes some
    Armv8-M instructions, loses the instruction alignment and so misses call sites."""
    for version in range(40, 10, -1):
        if shutil.which(f"{name}-{version}"):
            return f"{name}-{version}"
    return name if shutil.which(name) else None


def entry_points(elf):
    """{address: name} of the panic machinery's function symbols."""
    out = subprocess.run(["readelf", "-sW", elf], stdout=subprocess.PIPE, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and PANIC.search(f[7]):
            # Thumb function symbols carry the low bit. (Aliases at one address: the first.)
            found.setdefault(int(f[1], 16) & ~1, f[7])
    return found


# Branch mnemonics: Arm (`bl`, `blx`, `b`, conditional `bne.w` & co., `cbz`/`cbnz`) and x86.
BRANCH = re.compile(r"^(?:bl|blx|b|b(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)|cbn?z|"
                    r"call|callq|jmp|jmpq)(?:\.w|\.n)?$")
TARGET = re.compile(r"(?:^|[\s,])(?:0x)?([0-9a-f]+) <")


def disassembly(elf, demangle=True):
    """Yields (function start, function label, instruction address, mnemonic, operands) for
    every instruction of `llvm-objdump -d`, or nothing without objdump."""
    objdump = llvm_tool("llvm-objdump")
    if objdump is None:
        return
    args = [objdump, "-d", "--no-show-raw-insn"] + (["-C"] if demangle else []) + [elf]
    # Only stdout piped: a plain read, not select() on 4 KiB chunks.
    dis = subprocess.run(args, stdout=subprocess.PIPE, text=True, check=True).stdout
    start, label = None, None
    for line in dis.splitlines():
        if not line:
            continue
        if line[0] != " ":
            m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
            # Arm mapping symbols ($t, $d, …) mark code and data inside a function, not a new one.
            if m and not m.group(2).startswith("$"):
                start, label = int(m.group(1), 16) & ~1, m.group(2)
            continue
        parts = line.split("\t")
        if start is None or len(parts) < 2:
            continue
        # (Newer objdumps print the bytes of literal pools, `.word`, even without raw insns.)
        address = int(parts[0].split(":", 1)[0], 16)
        yield start, label, address, parts[1].strip(), parts[2] if len(parts) > 2 else ""


def branch_target(mnemonic, operands):
    """The address a direct branch goes to, or None."""
    if not BRANCH.match(mnemonic):
        return None
    m = TARGET.search(operands)
    return int(m.group(1), 16) & ~1 if m else None


def call_sites(elf, targets):
    """[(address, caller, target address, caller's address)] of calls into `targets` from
    outside them; the demangled label of every function; and the direct callers of every
    function ({address: {caller address}}). (None, {}, {}) without objdump."""
    if llvm_tool("llvm-objdump") is None:
        return None, {}, {}
    sites, labels, callers = [], {}, {}
    for start, label, address, mnemonic, operands in disassembly(elf):
        if start not in labels:
            labels[start] = label
        target = branch_target(mnemonic, operands)
        if target is None:
            continue
        if target != start:
            callers.setdefault(target, set()).add(start)
        inside = start in targets or PANIC.search(label)
        if not inside and target in targets:
            sites.append((address, label, target, start))
    return sites, labels, callers


def inlined_frames(elf, addresses):
    """{address: [(function, file:line), …]} innermost first, from one `llvm-addr2line` run."""
    addr2line = llvm_tool("llvm-addr2line")
    if addr2line is None or not addresses:
        return {}
    out = subprocess.run([addr2line, "-e", elf, "-f", "-i", "-C", "--output-style=JSON"],
                         input="".join(f"{a:#x}\n" for a in addresses),
                         capture_output=True, text=True).stdout
    frames = {}
    for line in out.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        frames[int(entry.get("Address", "0"), 16)] = [
            (f.get("FunctionName", "??"), f"{f.get('FileName', '??')}:{f.get('Line', 0)}")
            for f in entry.get("Symbol", [])
        ]
    return frames


CRATE = re.compile(r"^<?sgmcmc::|^pc_")


def crate_callers(start, labels, callers, crate=CRATE, depth=4):
    """The nearest of sgmcmc's functions (or the check crate's exports, `pc_*`) that call the
    function at `start`, directly or through others (out-of-line instances of core's generic
    functions, the machine outliner's OUTLINED_FUNCTION_n), up to `depth` calls away; [] when
    it is one of them itself."""
    if crate.search(labels.get(start, "")):
        return []
    found, seen, frontier = [], {start}, {start}
    for _ in range(depth):
        up = set()
        for f in frontier:
            for c in callers.get(f, ()):
                if c in seen:
                    continue
                seen.add(c)
                if crate.search(labels.get(c, "")):
                    found.append(c)
                else:
                    up.add(c)
        frontier = up
        if found or not frontier:
            break
    return sorted({labels[c] for c in found})


def main():
    elf = sys.argv[1]
    targets = entry_points(elf)
    sites, labels, callers = call_sites(elf, targets)
    print(f"{len(targets)} {len(sites) if sites is not None else 'unknown'}")
    verbose, tsv = "-v" in sys.argv, "--tsv" in sys.argv
    if (verbose or tsv) and sites:
        frames = inlined_frames(elf, [site[0] for site in sites])
        for address, caller, target, start in sites:
            callee = labels.get(target, targets.get(target, hex(target)))
            chain = frames.get(address, [])
            if tsv:
                where = " <- ".join(f"{fn} @ {loc}" for fn, loc in chain)
                up = " | ".join(crate_callers(start, labels, callers)[:4])
                print(f"{address:#x}\t{callee}\t{caller}\t{where}\t{up}")
            else:
                where = " <- ".join(loc for _, loc in chain)
                print(f"  {address:#x} in {caller} -> {callee}: {where}")
    sys.exit(1 if targets or sites else 0)


if __name__ == "__main__":
    main()
