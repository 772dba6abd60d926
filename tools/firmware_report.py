#!/usr/bin/env python3
"""Writes docs/firmware.md from tools/firmware.sh's output directory: flash and static RAM of each
firmware build (readelf section sizes), its software double-precision routines, the panic entry
points and call sites it links (tools/panic_sites.py's line), and the stack one step of each
sampler used on each core (the firmware's own stack-painting lines); and the same
build table into the README between its `<!-- firmware-table -->` markers.

    firmware_report.py OUT_DIR DOC_PATH README_PATH
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

CORES = {
    "thumbv6m-none-eabi": "Cortex-M0 (no FPU)",
    "thumbv7em-none-eabihf": "Cortex-M4F",
    "thumbv8m.main-none-eabihf": "Cortex-M33",
}
FLASH = (".vector_table", ".text", ".rodata")
RAM = (".data", ".bss", ".uninit")
SOFT_DOUBLE = re.compile(r"^(__aeabi_d[a-z0-9]+|__aeabi_[a-z0-9]+2d|__[a-z0-9]*df[0-9a-z]*)$")


def sections(elf):
    out = subprocess.run(["readelf", "-SW", str(elf)], capture_output=True, text=True, check=True)
    sizes = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            sizes[m.group(1)] = int(m.group(2), 16)
    return sizes


def soft_double(elf):
    out = subprocess.run(["readelf", "-sW", str(elf)], capture_output=True, text=True, check=True)
    names = {l.split()[7] for l in out.stdout.splitlines() if len(l.split()) >= 8 and l.split()[3] == "FUNC"}
    return sorted(n for n in names if SOFT_DOUBLE.match(n))


SAMPLER_TYPES = {"Sgld": "sgld", "Sghmc": "sghmc", "Sgnht": "sgnht", "MSgnht": "msgnht",
                 "Sgmgt": "sgmgt-d", "Hmc": "hmc"}
STEP = re.compile(r"^<sgmcmc::sampler::\w+::(\w+)<(f32|f64)[,>].* as sgmcmc::sampler::run::Sampler<"
                  r".*sgmcmc_firmware::Posterior>")


def llvm_tool(name):
    """`name` or the newest versioned `name-N` on PATH."""
    for candidate in [name] + [f"{name}-{v}" for v in range(30, 10, -1)]:
        if shutil.which(candidate):
            return candidate
    return None


def step_code(elf):
    """{(sampler, type): bytes} of each sampler's `step` compiled for the firmware's model (the
    integrator, kinetics and checks inlined into it), from the demangled symbol table; None
    without llvm-cxxfilt."""
    cxxfilt = llvm_tool("llvm-cxxfilt")
    if cxxfilt is None:
        return None
    out = subprocess.run(["readelf", "-sW", str(elf)], capture_output=True, text=True, check=True)
    funcs = [(int(f[2]), f[7]) for f in (l.split() for l in out.stdout.splitlines())
             if len(f) >= 8 and f[3] == "FUNC"]
    names = subprocess.run([cxxfilt], input="\n".join(n for _, n in funcs), capture_output=True,
                           text=True, check=True).stdout.splitlines()
    sizes = {}
    for (size, _), name in zip(funcs, names):
        m = STEP.match(name)
        if m and m.group(1) in SAMPLER_TYPES:
            key = (SAMPLER_TYPES[m.group(1)], m.group(2))
            sizes[key] = sizes.get(key, 0) + size
    return sizes


def print_per_sampler(print, values):
    """A table of {(sampler, type, target, variant): value}: a row per sampler and type (f32
    first), a column per build that reported any."""
    order = list(CORES)
    cols = sorted({(t, v) for (_, _, t, v) in values}, key=lambda c: (order.index(c[0]), c[1]))
    print("| sampler | type | " + " | ".join(f"{CORES[t]} ({v})" for t, v in cols) + " |")
    print("|---|---|" + "---:|" * len(cols))
    samplers = []
    for (name, ty, _, _) in values:
        if (name, ty) not in samplers:
            samplers.append((name, ty))
    for name, ty in sorted(samplers, key=lambda x: (x[1], x[0])):
        vals = [str(values.get((name, ty, t, v), "")) for t, v in cols]
        print(f"| {name} | {ty} | " + " | ".join(vals) + " |")


def main():
    d, doc, readme = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    lines = []
    print = lambda *a: lines.append(" ".join(str(x) for x in a))  # noqa: E731
    rows, stacks, steps, costs = [], {}, {}, {}
    for elf in sorted(d.glob("*.elf")):
        target = next((t for t in CORES if elf.stem.startswith(t + "-")), None)
        if target is None:
            continue
        variant = elf.stem[len(target) + 1:]
        s = sections(elf)
        flash = sum(s.get(k, 0) for k in FLASH)
        ram = sum(s.get(k, 0) for k in RAM)
        panics = elf.with_suffix(".panics")
        panic_counts = panics.read_text().split() if panics.exists() else ["?", "?"]
        rows.append((target, variant, flash, ram, len(soft_double(elf)), " / ".join(panic_counts)))
        if "f64" in variant:
            steps[target] = step_code(elf)
        log = elf.with_suffix(".log")
        if log.exists():
            for line in log.read_text().splitlines():
                m = re.match(r"stack (\S+) (f32|f64): (\d+) bytes", line)
                if m:
                    stacks[(m.group(1), m.group(2), target, variant)] = int(m.group(3))
                m = re.match(r"cost (\S+) (f32|f64): (\d+) ticks for (\d+) steps, (\d+) ticks for "
                             r"(\d+) instructions", line)
                if m:
                    ticks, batch, cal_ticks, cal = (int(m.group(k)) for k in range(3, 7))
                    costs[(m.group(1), m.group(2), target, variant)] = round(
                        ticks / batch * cal / cal_ticks)
    print("# Firmware: flash, RAM and stack on Cortex-M\n")
    print("Generated by `tools/firmware.sh` (`tools/firmware_report.py`): `examples/firmware` built "
          "with Debian's rustc 1.96 and `-Zbuild-std=core` (release: `opt-level = \"s\"`, fat LTO, "
          "`panic = \"abort\"`) and run under QEMU 7.2. Each binary holds all six samplers (SGLD, "
          "SGHMC, SGNHT, mSGNHT, SGMGT-D, HMC) and their checks on two models (a 3-d Gaussian, and "
          "a logistic regression on 50 points of Ripley's data in flash with its exact moments by "
          "quadrature on the device), in `f32` and, for `f32+f64`, in `f64` too (`f32-defmt` reports "
          "as defmt frames over semihosting, decoded on the host by `defmt-print`); the f32 builds are checked to link no software double-precision routine, and "
          "every build to link no panic path: no function of core's panic machinery "
          "(`core::panicking::*`, `panic_bounds_check`, slice-index failures, …) in the symbol "
          "table and no call into one (`tools/panic_sites.py`). Before the firmware and the crate "
          "were made panic-free (commit 46342cd, counted by the same script), every build linked "
          "14 panic entry points with 63–117 call sites (M4F f32: 76, of which 28 from sgmcmc and "
          "48 from `core::fmt`'s float and integer formatting in the firmware's output).\n")
    table_start = len(lines)
    print("| core | build | flash (.vector_table + .text + .rodata), bytes | static RAM (.data + .bss), bytes | soft-double routines | panic entry points / call sites | largest one-step stack, bytes |")
    print("|---|---|---:|---:|---:|---:|---:|")
    order = list(CORES)
    for target, variant, flash, ram, sd, panics in sorted(rows, key=lambda r: (order.index(r[0]), r[1])):
        own = [v for (_, _, t, var), v in stacks.items() if t == target and var == variant]
        worst = str(max(own)) if own else "(not run)"
        print(f"| {CORES[target]} | {variant} | {flash} | {ram} | {sd} | {panics} | {worst} |")
    table = lines[table_start:]
    if any(v for v in steps.values()):
        print("\nFlash per sampler (bytes): the sampler's `step` as compiled for the firmware's model "
              "(one type for both posteriors) in the `f32+f64` build, with the integrator, kinetics and state checks inlined into it "
              "(function sizes from the symbol table, demangled by `llvm-cxxfilt`). Functions the "
              "compiler kept out of line are not counted: the normal fill, libm, and any helper "
              "it chose not to inline (in the M4F build: the mass's friction flow, part of the "
              "monomial-gamma kinetics). SGHMC's and SGNHT's steps carry both integrators and "
              "all three mass shapes (identity, diagonal, dense), dispatched at run time.\n")
        cols = [t for t in order if steps.get(t)]
        print("| sampler | type | " + " | ".join(CORES[t] for t in cols) + " |")
        print("|---|---|" + "---:|" * len(cols))
        for ty in ("f32", "f64"):
            for name in SAMPLER_TYPES.values():
                vals = [str(steps[t].get((name, ty), "")) for t in cols]
                print(f"| {name} | {ty} | " + " | ".join(vals) + " |")
    if stacks:
        print("\nStack one step used (bytes): the firmware paints the free stack, takes one step and "
              "finds the deepest overwritten word (`examples/firmware/src/stack.rs`); it includes the "
              "gradient closure's frame and, for the SDE samplers, the noise blocks on the stack "
              "(128 normals, plus SGMGT's four further blocks).\n")
        print_per_sampler(print, stacks)
    if costs:
        print("\nInstructions per step, executed under QEMU with `-icount shift=0` (its virtual clock "
              "advances one nanosecond per instruction, and SysTick counts it): SysTick ticks of 64 "
              "steps on the Gaussian after the burn-in (HMC: 64 proposals of ten leapfrog steps), "
              "converted by the ticks of a calibration loop of exactly 130 562 instructions "
              "(`examples/firmware/src/cost.rs`; it reads 40 instructions per tick on the MPS2 "
              "boards' 25 MHz clock, 62.5 on the micro:bit's 16 MHz, as expected). QEMU counts "
              "instructions, not cycles: a Cortex-M4F takes one to a few cycles per instruction, "
              "more for divisions and the M0's software floats are already in the count. A step "
              "of d = 3 is dominated by the noise: each fill draws a whole Box–Muller round of 32 "
              "normals in 16 lanes (the lane count is fixed so that every build draws the same "
              "stream), which costs a scalar core far more than the 3 normals it uses. The micromath "
              "build's counts are within 0.5 % of libm's: a step's transcendental work is the "
              "noise's own polynomials, which no shim touches (only HMC's Metropolis exp and "
              "SGMGT-D's kinetics call the shim).\n")
        print_per_sampler(print, costs)
    doc.write_text("\n".join(lines) + "\n")
    text = readme.read_text()
    begin, end = "<!-- firmware-table -->", "<!-- /firmware-table -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        readme.write_text(head + begin + "\n" + "\n".join(table) + "\n" + end + tail)


if __name__ == "__main__":
    main()
