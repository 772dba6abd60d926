#!/usr/bin/env python3
"""Counts the panic entry points an ELF links and the call sites into them; exits 1 if there are any.

    panic_sites.py ELF [-v]

Entry points are the function symbols of core's panic machinery (`core::panicking::*`,
`panic_bounds_check`, the slice-index and `copy_from_slice` failures, `unwrap_failed`, …),
matched in the symbol table (`readelf`, mangled or not). Call sites are the `bl`/`b` (Arm) or `call`/`jmp` (x86) instructions
into them from any other function, counted from `llvm-objdump`'s disassembly when an
`llvm-objdump` is installed (else reported as unknown); `-v` lists each site with its inlined
source location (`llvm-addr2line`). Prints one line: `<entry points> <call sites>`.
"""
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
    """`name` or the newest versioned `name-N` on PATH (Debian installs llvm-objdump-22)."""
    if shutil.which(name):
        return name
    for version in range(30, 10, -1):
        if shutil.which(f"{name}-{version}"):
            return f"{name}-{version}"
    return None


def entry_points(elf):
    """{address: name} of the panic machinery's function symbols."""
    out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and PANIC.search(f[7]):
            # Thumb function symbols carry the low bit.
            found[int(f[1], 16) & ~1] = f[7]
    return found


def call_sites(elf, targets):
    """[(address, caller)] of calls into `targets` from outside them, or None without objdump."""
    objdump = llvm_tool("llvm-objdump")
    if objdump is None:
        return None
    dis = subprocess.run([objdump, "-d", "--no-show-raw-insn", elf],
                         capture_output=True, text=True, check=True).stdout
    sites, caller, inside = [], None, False
    for line in dis.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            caller = m.group(2)
            inside = (int(m.group(1), 16) & ~1) in targets or bool(PANIC.search(caller))
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(bl|blx|b|b\.w|call|callq|jmp|jmpq)\s+(?:0x)?([0-9a-f]+)\b", line)
        if m and not inside and (int(m.group(3), 16) & ~1) in targets:
            sites.append((int(m.group(1), 16), caller))
    return sites


def main():
    elf = sys.argv[1]
    targets = entry_points(elf)
    sites = call_sites(elf, targets)
    print(f"{len(targets)} {len(sites) if sites is not None else 'unknown'}")
    if "-v" in sys.argv and sites:
        addr2line = llvm_tool("llvm-addr2line")
        for address, caller in sites:
            where = ""
            if addr2line:
                where = subprocess.run([addr2line, "-e", elf, "-i", "-C", hex(address)],
                                       capture_output=True, text=True).stdout.split()
                where = " <- ".join(w for w in where if ":" in w)
            print(f"  {address:#x} in {caller}: {where}")
    sys.exit(1 if targets or sites else 0)


if __name__ == "__main__":
    main()
