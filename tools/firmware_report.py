#!/usr/bin/env python3
"""Writes docs/firmware.md from tools/firmware.sh's output directory: flash and static RAM of each
firmware build (readelf section sizes), its software double-precision routines, the panic entry
points and call sites it links (tools/panic_sites.py's line), and the stack one step of each
sampler used on each core (the firmware's own stack-painting lines); and the same
build table into docs/embedded.md between its `<!-- firmware-table -->` markers. From the cost-curve
builds (`curve-*`, the sgmcmc-curve binary): the section "Cost curve" (instructions per step of
each sampler and of its hand-written reference against d, one table per core and type), its
plot docs/firmware-cost.svg (written here with the standard library alone), and a summary
into docs/embedded.md between its `<!-- firmware-curve -->` markers.

    firmware_report.py OUT_DIR DOC_PATH SUMMARY_PATH
"""
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from panic_sites import llvm_tool

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
# A sampler's `Sampler::step` for the firmware's model, or, where the compiler inlined that into
# its caller, the out-of-line body it calls (SGMGT's `step_with_estimates`).
STEP = re.compile(r"^<sgmcmc::sampler::\w+::(\w+)<(f32|f64)[,>].*(?: as sgmcmc::sampler::run::Sampler<"
                  r".*sgmcmc_firmware::Posterior>>::step::<|>>::step_with_estimates::<"
                  r"sgmcmc_firmware::Posterior)")


def demangled_functions(elf):
    """[(bytes, demangled name)] of the ELF's functions, from its symbol table through
    `llvm-cxxfilt`; None without it."""
    cxxfilt = llvm_tool("llvm-cxxfilt")
    if cxxfilt is None:
        return None
    out = subprocess.run(["readelf", "-sW", str(elf)], capture_output=True, text=True, check=True)
    funcs = [(int(f[2]), f[7]) for f in (l.split() for l in out.stdout.splitlines())
             if len(f) >= 8 and f[3] == "FUNC"]
    names = subprocess.run([cxxfilt], input="\n".join(n for _, n in funcs), capture_output=True,
                           text=True, check=True).stdout.splitlines()
    return [(size, name) for (size, _), name in zip(funcs, names)]


def step_code(elf):
    """{(sampler, type): bytes} of each sampler's `step` compiled for the firmware's model (the
    integrator, kinetics and checks inlined into it), from the demangled symbol table; None
    without llvm-cxxfilt."""
    funcs = demangled_functions(elf)
    if funcs is None:
        return None
    sizes = {}
    for size, name in funcs:
        m = STEP.match(name)
        if m and m.group(1) in SAMPLER_TYPES:
            key = (SAMPLER_TYPES[m.group(1)], m.group(2))
            sizes[key] = sizes.get(key, 0) + size
    return sizes


DIAG_LINE = re.compile(r"^(f32|f64): (\d+) draws;(.*); Geyer ESS of all draws (\S+); largest difference (\S+)")
DIAG_FIELD = re.compile(r" (\w+) device (\S+) host (\S+) \((\S+)\)")


def diagnostics_code(elf):
    """(bytes of the crate's `sgmcmc::diagnostics` functions kept out of line, bytes of the
    firmware's driver `sgmcmc_firmware::diagnostics::run` with whatever was inlined into it),
    from the demangled symbol table; None without llvm-cxxfilt."""
    funcs = demangled_functions(elf)
    if funcs is None:
        return None
    crate = sum(size for size, name in funcs if "sgmcmc::diagnostics::" in name)
    driver = sum(size for size, name in funcs if "sgmcmc_firmware::diagnostics::" in name)
    return crate, driver


def diagnostics_section(print, d, code):
    """The on-device diagnostics against the harness's estimators (`harness
    firmware-diagnostics`), from each run's `.diagnostics` report."""
    rows = []
    for path in sorted(d.glob("*.diagnostics")):
        target = next((t for t in CORES if path.stem.startswith(t + "-")), None)
        if target is None:
            continue
        variant = path.stem[len(target) + 1:]
        for line in path.read_text().splitlines():
            m = DIAG_LINE.match(line)
            if not m:
                continue
            fields = {f.group(1): (float(f.group(2)), float(f.group(3))) for f in DIAG_FIELD.finditer(m.group(3))}
            rows.append((target, variant, m.group(1), int(m.group(2)), fields, float(m.group(4)), float(m.group(5))))
    if not rows:
        return
    print("\n## Streaming diagnostics on the device\n")
    print("Each `sgmcmc-firmware` run ends with an SGHMC chain on the Gaussian (h = 0.1, A = 1; 500 "
          "steps of burn-in, then the draws counted below) whose θ₀ goes into the crate's "
          "`RunningMoments`, `BatchMeans<T, 64>` and `WindowedEss<T, 256>` on the device "
          "(`examples/firmware/src/diagnostics.rs`). The firmware prints every draw and every "
          "estimate as bits; `harness firmware-diagnostics` recomputes them from the draws with the "
          "harness's estimators (direct batch means of the same batches; the FFT-based Geyer ESS, "
          "as ArviZ computes it, on the same window) and fails the run if one differs by more than "
          "10 %. The last column is Geyer's ESS over all the draws, a second estimator of what the "
          "batch-means ESS estimates.\n")
    print("| core | build | type | draws | MCSE device / host | ESS, batch means, device / host | ESS, last 256, device / host | largest relative difference | Geyer ESS, all draws |")
    print("|---|---|---|---:|---|---|---|---:|---:|")
    order = list(CORES)
    for target, variant, ty, n, f, geyer, worst in sorted(rows, key=lambda r: (order.index(r[0]), r[1], r[2])):
        pair = lambda k, fmt: f"{fmt.format(f[k][0])} / {fmt.format(f[k][1])}" if k in f else "?"  # noqa: E731
        print(f"| {CORES[target]} | {variant} | {ty} | {n} | {pair('mcse', '{:.5f}')} | "
              f"{pair('ess_bm', '{:.1f}')} | {pair('ess_window', '{:.2f}')} | {worst:.1e} | {geyer:.1f} |")
    if code:
        print("\nFlash of the diagnostics (bytes, from the symbol table): the crate's "
              "`sgmcmc::diagnostics` functions the compiler kept out of line, and the firmware's "
              "driver `diagnostics::run` (one copy per float type) with what it inlined: the pushes, "
              "the estimates and the output of 6000 draws. The chain's SGHMC step is shared with the "
              "moment checks.\n")
        print("| core | build | crate's functions | driver with inlined code |")
        print("|---|---|---:|---:|")
        for (target, variant), (crate, driver) in sorted(code.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
            print(f"| {CORES[target]} | {variant} | {crate} | {driver} |")


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


# The cost curve (examples/firmware/src/curve/main.rs): samplers in the binary's order, the
# dimensions, and the (core, type) panels in the order they are shown.
CURVE_SAMPLERS = ["sgld", "sghmc-euler", "sghmc-split", "sgnht-euler", "sgnht-split",
                  "msgnht-euler", "msgnht-split", "sgmgt-d-euler", "sgmgt-d-split", "hmc"]
CURVE_LINE = re.compile(r"curve (\S+) (f32|f64) d (\d+): crate (\d+), reference (\d+) ticks for "
                        r"(\d+) steps, (\d+) ticks for (\d+) instructions, max \|(?:Δθ|dtheta)\| "
                        r"(\S+)")
CURVE_ORDER = [("thumbv7em-none-eabihf", "f32"), ("thumbv7em-none-eabihf", "f64"),
               ("thumbv8m.main-none-eabihf", "f32"), ("thumbv8m.main-none-eabihf", "f64"),
               ("thumbv6m-none-eabi", "f32")]
# One colour per sampler (matplotlib's tab10, in CURVE_SAMPLERS' order).
CURVE_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"]


def parse_curve(log):
    """{(type, sampler): {d: (crate, reference, max |Δθ|)}} in instructions per step."""
    points = {}
    for line in log.read_text().splitlines():
        m = CURVE_LINE.match(line)
        if not m:
            continue
        name, ty, dim = m.group(1), m.group(2), int(m.group(3))
        crate_ticks, ref_ticks, steps, cal_ticks, cal = (int(m.group(k)) for k in range(4, 9))
        per_tick = cal / cal_ticks
        try:
            diff = float(m.group(9))
        except ValueError:
            diff = math.nan
        points.setdefault((ty, name), {})[dim] = (crate_ticks / steps * per_tick,
                                                 ref_ticks / steps * per_tick, diff)
    return points


def compact(n):
    """An instruction count in three significant digits: 180, 7.12k, 12.7M."""
    if n >= 1e6:
        return f"{n / 1e6:.3g}M"
    if n >= 1e3:
        return f"{n / 1e3:.3g}k"
    return f"{n:.0f}"


def curve_panels(curves):
    """[(target, type, {sampler: {d: point}})] in CURVE_ORDER, for the panels that ran."""
    panels = []
    for target, ty in CURVE_ORDER:
        for (t, _variant), points in sorted(curves.items()):
            if t != target:
                continue
            by_sampler = {name: pts for (pty, name), pts in points.items() if pty == ty}
            if by_sampler:
                panels.append((target, ty, by_sampler))
    return panels


def ratio_range(by_sampler, d):
    """(min, max) over the samplers of crate / reference at dimension d."""
    ratios = [pts[d][0] / pts[d][1] for pts in by_sampler.values() if d in pts and pts[d][1] > 0]
    return (min(ratios), max(ratios)) if ratios else (math.nan, math.nan)


def write_curve_svg(path, panels):
    """A log-log line plot per panel: instructions per step against d, the crate's solid, the
    reference's dashed, one colour per sampler; a shared legend below."""
    w, h = 380, 300                      # one panel
    left, right, top, bottom = 62, 14, 34, 44
    cols = min(len(panels), 3)
    rows = (len(panels) + cols - 1) // cols
    legend_h = 70
    width, height = cols * w, rows * h + legend_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    dims = sorted({d for _, _, by in panels for pts in by.values() for d in pts})
    x_lo, x_hi = math.log2(dims[0]), math.log2(dims[-1])
    for k, (target, ty, by_sampler) in enumerate(panels):
        ox, oy = (k % cols) * w, (k // cols) * h
        pw, ph = w - left - right, h - top - bottom
        values = [v for pts in by_sampler.values() for p in pts.values() for v in p[:2] if v > 0]
        y_lo = math.floor(math.log10(min(values)))
        y_hi = math.ceil(math.log10(max(values)))

        def x(d):
            return ox + left + (math.log2(d) - x_lo) / (x_hi - x_lo) * pw

        def y(v):
            return oy + top + (y_hi - math.log10(v)) / (y_hi - y_lo) * ph

        out.append(f'<text x="{ox + left + pw / 2:.1f}" y="{oy + 20}" text-anchor="middle" '
                   f'font-size="13" font-weight="bold">{CORES[target]}, {ty}</text>')
        # Grid and axes: decades (and 2, 5 between them when there are few) on y, the d on x.
        for e in range(y_lo, y_hi + 1):
            for m in ((1, 2, 5) if y_hi - y_lo <= 3 else (1,)):
                v = m * 10 ** e
                if not (10 ** y_lo <= v <= 10 ** y_hi):
                    continue
                yy = y(v)
                out.append(f'<line x1="{ox + left}" x2="{ox + left + pw}" y1="{yy:.1f}" '
                           f'y2="{yy:.1f}" stroke="{"#ccc" if m == 1 else "#eee"}"/>')
                if m == 1 or y_hi - y_lo <= 2:
                    out.append(f'<text x="{ox + left - 5}" y="{yy + 4:.1f}" '
                               f'text-anchor="end">{compact(v)}</text>')
        for d in dims:
            xx = x(d)
            out.append(f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{oy + top}" y2="{oy + top + ph}" '
                       f'stroke="#eee"/>')
            out.append(f'<text x="{xx:.1f}" y="{oy + top + ph + 15}" text-anchor="middle">{d}</text>')
        out.append(f'<rect x="{ox + left}" y="{oy + top}" width="{pw}" height="{ph}" fill="none" '
                   f'stroke="#444"/>')
        out.append(f'<text x="{ox + left + pw / 2:.1f}" y="{oy + h - 10}" text-anchor="middle">'
                   f'dimension d</text>')
        out.append(f'<text x="{ox + 14}" y="{oy + top + ph / 2:.1f}" text-anchor="middle" '
                   f'transform="rotate(-90 {ox + 14} {oy + top + ph / 2:.1f})">'
                   f'instructions per step</text>')
        for name, colour in zip(CURVE_SAMPLERS, CURVE_COLOURS):
            pts = by_sampler.get(name)
            if not pts:
                continue
            for side, dash in ((0, ""), (1, ' stroke-dasharray="4 3"')):
                coords = " ".join(f"{x(d):.1f},{y(p[side]):.1f}" for d, p in sorted(pts.items())
                                  if p[side] > 0)
                out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" '
                           f'stroke-width="1.5"{dash}/>')
    # Legend: the samplers' colours, then the two line styles.
    ly = rows * h + 12
    for k, (name, colour) in enumerate(zip(CURVE_SAMPLERS, CURVE_COLOURS)):
        lx, lyy = 20 + (k % 5) * (width - 40) / 5, ly + (k // 5) * 18
        out.append(f'<line x1="{lx:.1f}" x2="{lx + 22:.1f}" y1="{lyy:.1f}" y2="{lyy:.1f}" '
                   f'stroke="{colour}" stroke-width="2.5"/>')
        out.append(f'<text x="{lx + 28:.1f}" y="{lyy + 4:.1f}">{name}</text>')
    lyy = ly + 40
    for k, (label, dash) in enumerate((("sgmcmc (solid)", ""),
                                       ("hand-written reference (dashed)",
                                        ' stroke-dasharray="4 3"'))):
        lx = 20 + k * 220
        out.append(f'<line x1="{lx}" x2="{lx + 30}" y1="{lyy}" y2="{lyy}" stroke="#333" '
                   f'stroke-width="1.5"{dash}/>')
        out.append(f'<text x="{lx + 36}" y="{lyy + 4}">{label}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def curve_section(print, panels, builds):
    """The "Cost curve" section of docs/firmware.md."""
    print("\n## Cost curve\n")
    print("Instructions per step of every sampler against the dimension d, beside a hand-written "
          "scalar reference of the same update (`examples/firmware/src/curve/`, the "
          "`sgmcmc-curve` binary, run by `tools/firmware.sh` under QEMU with `-icount shift=0`). "
          "Each sampler is built through the public API with the identity mass on slices of "
          "run-time length d cut from buffers of 128, and runs the d-dimensional Gaussian "
          "(μ and σ² cycling through the 3-d Gaussian's values) from θ = 0 for 16 steps, then a "
          "timed batch of 64 steps (SGMGT-D: 100, its redraw period, so the batch holds exactly "
          "one redraw of p and ξ; HMC: proposals of ten leapfrog steps); its reference then does "
          "the same from the same state with the same seed and calls the same gradient function "
          "(not inlined into either). Settings: SGLD h = 0.05; SGHMC (friction 1), SGNHT and "
          "mSGNHT (diffusion 1, ξ₀ = 1) h = 0.1 with the Euler and the splitting integrator; "
          "SGMGT-D with its defaults (softened monomial-gamma kinetics a = 1, c = 5; "
          "σ_θ = σ_ξ = 0.01; redraws every 100 steps) h = 0.05, both integrators; HMC ε = 0.15.\n")
    print("The references (`examples/firmware/src/curve/reference.rs`) are the crate's equations, "
          "read from its source, written as a firmware author would write them: plain loops over "
          "the slices, constants that depend only on the settings computed once, one ziggurat "
          "normal (`Real::standard_normal`) per use and no more, the crate's math shim for exp, "
          "ln and sqrt, no lanes, no backups and no finiteness checks. Each is checked against "
          "the crate on the host (`examples/firmware/reference-check`, run by `tools/firmware.sh`): "
          "for d = 1…5 in `f32` and `f64`, fed the crate's own normals use by use, θ, p and ξ "
          "agree with the crate's after each of 30 steps to rounding (asserted within 10⁻⁵ "
          "relative in `f32` and 10⁻¹³ in `f64`; at this writing at most 5·10⁻⁷ and 7·10⁻¹⁶, "
          "SGLD and HMC bit for bit), and the stationary mean and variance of θ agree with the "
          "crate's within five standard errors over 10⁵ steps.\n")
    print("![Instructions per step against d: the crate solid, the reference dashed]"
          "(firmware-cost.svg)\n")
    for target, ty, by_sampler in panels:
        dims = sorted({d for pts in by_sampler.values() for d in pts})
        print(f"### {CORES[target]}, {ty}\n")
        print("Instructions per step: sgmcmc / reference (ratio).\n")
        print("| sampler | " + " | ".join(f"d = {d}" for d in dims) + " |")
        print("|---|" + "---:|" * len(dims))
        for name in CURVE_SAMPLERS:
            pts = by_sampler.get(name)
            if not pts:
                continue
            cells = []
            for d in dims:
                if d in pts:
                    c, r, _ = pts[d]
                    cells.append(f"{compact(c)} / {compact(r)} ({c / r:.2f}×)")
                else:
                    cells.append("")
            print(f"| {name} | " + " | ".join(cells) + " |")
        # Per coordinate at large d (the last two dimensions), and the fixed part at d = 1.
        if len(dims) >= 2:
            d0, d1 = dims[-2], dims[-1]
            print(f"\nPer step at d = {dims[0]} beyond the reference's (the crate's fixed cost), "
                  f"and per coordinate between d = {d0} and d = {d1} (the slope): sgmcmc / "
                  "reference.\n")
            print("| sampler | extra at d = 1 | per coordinate |")
            print("|---|---:|---:|")
            for name in CURVE_SAMPLERS:
                pts = by_sampler.get(name)
                if not pts or not all(d in pts for d in (dims[0], d0, d1)):
                    continue
                extra = pts[dims[0]][0] - pts[dims[0]][1]
                slope_c = (pts[d1][0] - pts[d0][0]) / (d1 - d0)
                slope_r = (pts[d1][1] - pts[d0][1]) / (d1 - d0)
                print(f"| {name} | {compact(extra)} | {slope_c:.0f} / {slope_r:.0f} "
                      f"({slope_c / slope_r:.2f}×) |")
        diffs = [p[2] for pts in by_sampler.values() for p in pts.values()]
        finite = [x for x in diffs if not math.isnan(x)]
        if finite and max(finite) < 1e-3:
            note = (f"max |θ_crate − θ_reference| at the end of every run: at most {max(finite):.1e}: "
                    "the crate drew the reference's normals in the reference's order, and both "
                    "computed the same states.")
        else:
            note = ("max |θ_crate − θ_reference| at the end of the runs: up to "
                    f"{max(finite) if finite else math.nan:.2g}: this build of the crate does not "
                    "draw its normals as the reference does (one ziggurat normal per use, in "
                    "coordinate order), so the two chains take different paths; the cost is "
                    "compared on the same work, not the same numbers.")
        print(f"\n{note}\n")
    for (target, variant), (flash, ram, stack, panics) in sorted(builds.items()):
        if stack is not None:
            print(f"- The {CORES[target]} `{variant}` binary: {flash} bytes of flash, {ram} bytes of "
                  f"static RAM, {stack} bytes of stack at most over the whole run; panic entry "
                  f"points / call sites: {panics}.")
    print()


def pins_section(print, out_dir, fixture):
    """The "Determinism" section: the cost-curve builds' pinned chains against the host's."""
    pinned = {}
    if fixture.exists():
        for line in fixture.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and not line.startswith("#"):
                pinned[parts[0]] = (parts[1], parts[2])
    results = []
    for log in sorted(out_dir.glob("*curve*.log")):
        target = next((t for t in CORES if log.stem.startswith(t + "-")), None)
        lines = [l.split() for l in log.read_text().splitlines() if l.startswith("pin ")]
        same = sum(1 for _, name, st, sta in lines if pinned.get(name) == (st, sta))
        results.append((target, len(lines), same, sorted({n.rsplit("-", 1)[-1] for _, n, _, _ in lines})))
    if not results:
        return
    print("\n## Determinism: the host reproduces a Cortex-M's chains\n")
    print("Every scalar core draws the same chain from the same generator and settings: its noise "
          "is the caller's ziggurat normals, drawn where the step uses them, and its arithmetic IEEE "
          "`f32`/`f64` with libm's functions, whether the core has an FPU for the type or not "
          "(`docs/rng.md`, *Determinism*). A host built with `--cfg sgmcmc_scalar_core` is such a "
          "core: `tests/data/value_stability_scalar_core.txt` pins 20 steps of every sampler there. "
          "The cost-curve firmware reruns ten of those cases per type (SGLD; SGHMC, SGNHT, mSGNHT "
          "and SGMGT-D with both schemes; HMC; `examples/firmware/src/curve/pins.rs`) and hashes "
          "their states as the test does:\n")
    for target, n, same, types in results:
        print(f"- {CORES[target]} ({', '.join(types)}): {same} of {n} pinned chains reproduced bit for bit.")
    print()


def flash_section(print, sizes):
    """The "Flash per sampler, integrator and mass" section."""
    print("\n## Flash per sampler, integrator and mass\n")
    print("Bytes of code a firmware links for one combination, built as a firmware that runs it "
          "alone would build it: the integrator fixed at compile time (`with_integrator(Euler)` or "
          "`Splitting`) and the mass too (`with_mass(IdentityMass)`, `DiagonalMass`, `DenseMass`). "
          "`examples/firmware/src/flash/main.rs` holds one out-of-line `f32` step per combination; "
          "`tools/flash_report.py` adds to each the crate's functions it reaches through calls "
          "(the call graph of the disassembly), apart from what every firmware shares: the "
          "ziggurat's tail and tables, libm, compiler-builtins and `core`. (The same build with "
          "the run-time `Integrator` and `MassBuffer` links every scheme and shape into each step: "
          "17–19 KB for SGHMC's and SGNHT's before the compile-time choice existed.)\n")
    cols = [t for t in CORES if any(t in v for v in sizes.values())]
    print("| sampler | integrator | mass | " + " | ".join(CORES[t] for t in cols) + " |")
    print("|---|---|---|" + "---:|" * len(cols))
    for name in sorted(sizes):
        parts = name.split("_")
        sampler = parts[0] if parts[0] != "sgmgt" else "sgmgt-d"
        rest = parts[1:] if parts[0] != "sgmgt" else parts[2:]
        integrator = rest[0] if rest else ""
        mass = " ".join(rest[1:]).replace("monomial gamma", "softened monomial gamma") or "(none)"
        if sampler == "sgld":
            integrator, mass = "Euler–Maruyama", "(none)"
        print(f"| {sampler} | {integrator} | {mass} | " +
              " | ".join(str(sizes[name].get(t, "")) for t in cols) + " |")
    print()


def alone_section(print, alone):
    """The "SGNHT-Euler alone" section."""
    print("\n## A firmware that runs SGNHT-Euler with the identity mass alone\n")
    print("`examples/firmware/src/flash/sgnht_euler.rs` builds SGNHT with "
          "`with_integrator(Euler)` and `with_mass(IdentityMass)`, and beside it the cost curve's "
          "hand-written SGNHT-Euler step (`src/curve/reference.rs`). `tools/flash_report.py` lists "
          "every function of the ELF (none may name the splitting scheme, a diagonal or dense "
          "mass, the run-time `MassBuffer` or its dispatch, a friction flow or the dense linear "
          "algebra; `tools/firmware.sh` fails otherwise) and compares the code each step reaches "
          "through calls, apart from what both share (ziggurat, libm, compiler-builtins, `core`).\n")
    for target, lines in sorted(alone.items()):
        head = lines[0].split() if lines else []
        if len(head) >= 6:
            print(f"- {CORES[target]}: the crate's step {head[1]} bytes, the reference's {head[3]} "
                  f"bytes: {head[5]}× the reference.")
        funcs = [l.strip() for l in lines if l.startswith("  ")]
        forbidden = next((l for l in lines if l.startswith("forbidden") or l.startswith("FORBIDDEN")), "")
        print(f"- Its {len(funcs)} functions ({forbidden}):\n")
        print("  ```text")
        for f in funcs:
            print("  " + f)
        print("  ```")
    print()


def times(r):
    """A ratio as 40× or 2.7×."""
    return f"{r:.0f}×" if r >= 10 else f"{r:.1f}×"


def curve_summary(panels):
    """docs/embedded.md's lines on the cost curve."""
    parts = []
    for target, ty, by_sampler in panels:
        dims = sorted({d for pts in by_sampler.values() for d in pts})
        lo1, hi1 = ratio_range(by_sampler, dims[0])
        lo2, hi2 = ratio_range(by_sampler, dims[-1])
        parts.append(f"{CORES[target]} {ty} {times(lo1)[:-1]}–{times(hi1)} and "
                     f"{times(lo2)[:-1]}–{times(hi2)}")
        first, last = dims[0], dims[-1]
    # (Links relative to docs/, where docs/embedded.md holds this summary.)
    text = ("**Cost curve** ([`docs/firmware.md`](firmware.md#cost-curve), "
            f"[plot](firmware-cost.svg)): instructions per step of each sampler, d = {first}…"
            f"{last}, against a hand-written scalar reference of the same update "
            "(`examples/firmware/src/curve/reference.rs`, checked against the crate on the host). "
            f"Crate / reference over the ten samplers at d = {first} and d = {last}: "
            + "; ".join(parts) + ".")
    return textwrap.wrap(text, width=100, break_on_hyphens=False)


def matrix_section(print, path):
    """The crate-wide panic check (tools/panic_matrix.sh), from its output in this run."""
    if not path.exists():
        return
    text = path.read_text().splitlines()
    table = []
    for line in text:
        if line.startswith("target ") or table:
            if not line.strip():
                break
            cells = line.split()
            table.append(cells[:7] + [" ".join(cells[7:])])
    if len(table) < 2:
        return
    print("\n## No panic path in the crate\n")
    print("The firmware above is one program; `tools/panic_matrix.sh` checks the crate. "
          "`examples/panic-check` exports every public entry point of every sampler "
          "(constructors, setters, `step`, `run`, `run_scheduled`, `Checkpoint::restore`; each "
          "integrator and mass) and the free functions, in `f32` and `f64`, for d = 1, 3, 17 and "
          "64 as fixed-size arrays and for a run-time length, as standalone C functions; it is "
          "built for the three cores at `opt-level` s and z (fat LTO, the firmware's profile) and "
          "3 (no LTO, 16 codegen units: other inlining decisions), and each ELF is searched for "
          "panic entry points and call sites (`tools/panic_sites.py`), and checked to export "
          "every function with the chain still calling the model (`tools/panic_exports.py`). "
          "In this run:\n")
    head = table[0]
    print("| " + " | ".join(head) + " |")
    print("|---|---|" + "---:|" * (len(head) - 3) + "---|")
    for row in table[1:]:
        print("| " + " | ".join(row) + " |")
    print("\n(build: wall/CPU seconds compiling the check package; exports: functions checked; "
          "chain: those that run a sampler. Before this check, the crate's own code linked 5 "
          "panic entry points with 83–131 call sites at opt-level s and z and 11 with 353–362 at "
          "opt-level 3, every one now removed: checked splits and accesses, zipped loops, and "
          "divisions the compiler can prove safe.)")


def main():
    d, doc, readme = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    lines = []
    print = lambda *a: lines.append(" ".join(str(x) for x in a))  # noqa: E731
    rows, stacks, steps, costs = [], {}, {}, {}
    curves, curve_builds = {}, {}
    flash_sizes, alone = {}, {}
    diag_code = {}
    for elf in sorted(d.glob("*.elf")):
        target = next((t for t in CORES if elf.stem.startswith(t + "-")), None)
        if target is None:
            continue
        variant = elf.stem[len(target) + 1:]
        s = sections(elf)
        flash = sum(s.get(k, 0) for k in FLASH)
        ram = sum(s.get(k, 0) for k in RAM)
        if variant.startswith("flash-"):
            sizes = elf.with_suffix(".flash")
            if sizes.exists():
                for line in sizes.read_text().splitlines():
                    name, size = line.split()
                    flash_sizes.setdefault(name, {})[target] = int(size)
        if variant.startswith("alone-"):
            report = elf.with_suffix(".alone")
            if report.exists():
                alone[target] = report.read_text().splitlines()
        if variant.startswith("curve-"):
            log = elf.with_suffix(".log")
            peak = None
            if log.exists():
                curves[(target, variant)] = parse_curve(log)
                m = re.search(r"^peak stack: (\d+) bytes", log.read_text(), re.M)
                peak = int(m.group(1)) if m else None
            panics = elf.with_suffix(".panics")
            panic_counts = " / ".join(panics.read_text().split() if panics.exists() else ["?", "?"])
            curve_builds[(target, variant)] = (flash, ram, peak, panic_counts)
            continue
        panics = elf.with_suffix(".panics")
        panic_counts = panics.read_text().split() if panics.exists() else ["?", "?"]
        rows.append((target, variant, flash, ram, len(soft_double(elf)), " / ".join(panic_counts)))
        if "f64" in variant:
            steps[target] = step_code(elf)
        code = diagnostics_code(elf)
        if code is not None and code[1] > 0:
            diag_code[(target, variant)] = code
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
              "(SGMGT-D's `step_with_estimates` where the compiler inlined its `step` into the caller; "
              "function sizes from the symbol table, demangled by `llvm-cxxfilt`). Functions the "
              "compiler kept out of line are not counted: libm, the ziggurat's tail, and any "
              "helper it chose not to inline. This firmware builds its samplers with the "
              "run-time `Integrator` and `MassBuffer`, so SGHMC's and SGNHT's steps carry both "
              "integrators and all three mass shapes (identity, diagonal, dense); what one "
              "combination fixed at compile time links is in *Flash per sampler, integrator and "
              "mass* below.\n")
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
              "gradient closure's frame. A scalar core keeps no noise block on the stack: it draws "
              "each normal where the step uses it.\n")
        print_per_sampler(print, stacks)
    if costs:
        print("\nInstructions per step, executed under QEMU with `-icount shift=0` (its virtual clock "
              "advances one nanosecond per instruction, and SysTick counts it): SysTick ticks of 64 "
              "steps on the Gaussian after the burn-in (HMC: 64 proposals of ten leapfrog steps), "
              "converted by the ticks of a calibration loop of exactly 130 562 instructions "
              "(`examples/firmware/src/cost.rs`; it reads 40 instructions per tick on the MPS2 "
              "boards' 25 MHz clock, 62.5 on the micro:bit's 16 MHz, as expected). QEMU counts "
              "instructions, not cycles: a Cortex-M4F takes one to a few cycles per instruction, "
              "more for divisions and the M0's software floats are already in the count. A scalar "
              "core draws each of a step's normals by the ziggurat where it is used, one per "
              "coordinate (SGMGT-D: up to five), from the caller's generator, so a step of d = 3 "
              "costs about three normals' worth; the cost curve below compares every sampler "
              "with a hand-written scalar step for d = 1…128.\n")
        print_per_sampler(print, costs)
    panels = curve_panels(curves)
    summary = []
    if panels:
        curve_section(print, panels, curve_builds)
        write_curve_svg(doc.parent / "firmware-cost.svg", panels)
        summary = curve_summary(panels)
    diagnostics_section(print, d, diag_code)
    pins_section(print, d, doc.parent.parent / "tests" / "data" / "value_stability_scalar_core.txt")
    if flash_sizes:
        flash_section(print, flash_sizes)
    if alone:
        alone_section(print, alone)
    matrix_section(print, d / "panic-matrix.txt")
    doc.write_text("\n".join(lines) + "\n")
    text = readme.read_text()
    for (begin, end), block in ((("<!-- firmware-table -->", "<!-- /firmware-table -->"), table),
                                (("<!-- firmware-curve -->", "<!-- /firmware-curve -->"), summary)):
        if begin in text and end in text and block:
            head, rest = text.split(begin, 1)
            _, tail = rest.split(end, 1)
            text = head + begin + "\n" + "\n".join(block) + "\n" + end + tail
    readme.write_text(text)


if __name__ == "__main__":
    main()
