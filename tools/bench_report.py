#!/usr/bin/env python3
"""Writes docs/performance.md from one bench run: our portable, dispatched and native builds, the floor, the peers.

Inputs (all from the same `tools/bench.sh` run):
  * `target/criterion` — `cargo bench -p sgmcmc-bench` (portable: default features, no target flags);
  * `target/dispatch/criterion` — `cargo bench -p sgmcmc-bench --features std` (no target flags:
    the default build of a host program, with run-time CPU dispatch);
  * `target/native/criterion` — the same bench built with `-C target-cpu=native --features std`;
  * `tools/peer_bench/out/blackjax.csv` — blackjax's sgld and sgnht (`tools/peer_bench/run.sh`).

Prints Markdown to stdout: per build, ns per (step x dimension) of every sampler x integrator, the
floor (normal fill + update stream, measured in the same run) and each step's ratio to it; ns per
normal draw; and our SGLD / SGNHT against blackjax's (one core and two threads). With `--plot
FILE` also draws ns/dim against d, ours vs blackjax (needs matplotlib: the peer venv has it).

Usage: python3 tools/bench_report.py [--plot docs/performance-peers.png] > docs/performance.md
"""

import argparse
import csv
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_table import CONFIG_ORDER, TYPES, cpu_name, fmt, load  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
BUILDS = [
    ("portable", os.path.join(ROOT, "target", "criterion"),
     "`cargo bench -p sgmcmc-bench`: default features (no_std core, unfused arithmetic, the "
     "crate's own square root), no target flags — SSE2 on x86-64"),
    ("dispatched", os.path.join(ROOT, "target", "dispatch", "criterion"),
     "`cargo bench -p sgmcmc-bench --features std`: no target flags, so the build assumes SSE2, "
     "but every step runs in the widest copy the CPU supports (`sgmcmc::dispatch`: AVX-512 on "
     "this machine); the polynomials' multiply-adds (the noise's, the kinetics' exp, tanh and ln) "
     "fused in the AVX2 and AVX-512 copies, so on a CPU with AVX2 and FMA it draws the native "
     "build's chains (`docs/rng.md`). Its floor rows are the "
     "bench's own "
     "loops, compiled for SSE2: only the native build's floor is a floor"),
    ("native", os.path.join(ROOT, "target", "native", "criterion"),
     "`RUSTFLAGS=\"-C target-cpu=native\" cargo bench -p sgmcmc-bench --features std`: AVX-512 "
     "and FMA on this machine, `std`'s hardware square root and fused multiply-adds"),
]
# Normals drawn per coordinate and step: SGMGT-D's default σ_θ, σ_ξ > 0 add ζ_θ and ζ_ξ (Euler: 3 in all;
# A–O–B–O–A: ζ_θ, ζ_ξ twice and the second O's normal, 5 in all).
NORMALS_PER_COORD = {"sgmgt-d-euler": 3, "sgmgt-d-splitting": 5}
LIMIT = 1.5
# The dispatched build's bound against the native build (issue 32).
DISPATCH_LIMIT = 1.1


def collect(root):
    """cells[(group, func, value)] = ns per element."""
    if not os.path.isdir(root):
        return None
    return {(g, f, v): ns for g, f, v, ns in load(root, "median")}


def step_cells(cells):
    out, dims = {}, set()
    for (g, f, v), ns in cells.items():
        if g.startswith("step/"):
            out[(g.split("/")[1], f, int(v))] = ns
            dims.add(int(v))
    return out, sorted(dims)


def floor_of(cells, ty, d, config):
    fill = cells.get((f"floor/{ty}", "normal-fill", str(d)))
    upd = cells.get((f"floor/{ty}", "update-stream", str(d)))
    if fill is None or upd is None:
        return None, fill, upd
    return NORMALS_PER_COORD.get(config, 1) * fill + upd, fill, upd


def ratio_cell(num, den, limit):
    """num / den to two places, marked ✗ above `limit`; – when either is missing."""
    if num is None or den is None:
        return "–"
    q = num / den
    return f"{q:.2f}" + (" ✗" if q > limit else "")


def build_tables(name, cells):
    steps, dims = step_cells(cells)
    if not steps:
        return [f"(no results for the {name} build)"]
    configs = {k[1] for k in steps}
    rows = [c for c in CONFIG_ORDER if c in configs] + sorted(configs - set(CONFIG_ORDER))
    types = [t for t in TYPES if any(k[0] == t for k in steps)]
    cols = [(t, d) for t in types for d in dims]
    head = "| | " + " | ".join(f"{t} d={d}" for t, d in cols) + " |"
    rule = "|---|" + "---:|" * len(cols)
    out = ["ns per (step × dimension):", "", head, rule]
    for r in rows:
        out.append(f"| {r} | " + " | ".join(fmt(steps.get((t, r, d))) for t, d in cols) + " |")
    for part in ["normal-fill", "update-stream"]:
        out.append(f"| *{part}* | " + " | ".join(
            fmt(cells.get((f"floor/{t}", part, str(d)))) for t, d in cols) + " |")
    out.append("| *floor* | " + " | ".join(
        fmt(floor_of(cells, t, d, "")[0]) for t, d in cols) + " |")
    out += ["", f"Step / floor (marked ✗ above {LIMIT}; SGMGT-D's floor counts its 3 (Euler) or 5 (splitting) normals "
            "per coordinate):", "", head, rule]
    for r in rows:
        if r.startswith("hmc"):
            continue
        cells_out = [ratio_cell(steps.get((t, r, d)), floor_of(cells, t, d, r)[0], LIMIT)
                     for t, d in cols]
        out.append(f"| {r} | " + " | ".join(cells_out) + " |")
    return out


def dispatch_table(builds):
    """Dispatched / native per step, d >= 1024."""
    got = dict(builds)
    if "dispatched" not in got or "native" not in got:
        return ["(needs both the dispatched and the native build)"]
    disp, dims = step_cells(got["dispatched"])
    nat, _ = step_cells(got["native"])
    dims = [d for d in dims if d >= 1024]
    configs = {k[1] for k in disp}
    rows = [c for c in CONFIG_ORDER if c in configs] + sorted(configs - set(CONFIG_ORDER))
    cols = [(t, d) for t in TYPES for d in dims]
    out = [f"Dispatched / native, ns per step (marked ✗ above {DISPATCH_LIMIT}):", "",
           "| | " + " | ".join(f"{t} d={d}" for t, d in cols) + " |", "|---|" + "---:|" * len(cols)]
    for r in rows:
        cells_out = [ratio_cell(disp.get((t, r, d)), nat.get((t, r, d)), DISPATCH_LIMIT)
                     for t, d in cols]
        out.append(f"| {r} | " + " | ".join(cells_out) + " |")
    return out


def normal_rows(builds):
    out = ["| build | type | ziggurat, scalar calls | ziggurat fill | Box–Muller fill | "
           "rand_distr | Box–Muller / rand_distr |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, cells in builds:
        for ty in TYPES:
            g = lambda f: cells.get(("normal", f, ty))  # noqa: E731
            s, f, b, r = g("sgmcmc-scalar"), g("sgmcmc-fill"), g("sgmcmc-box-muller"), g("rand_distr")
            ratio = f"{b / r:.2f}" if b and r else "–"
            out.append(f"| {name} | {ty} | {fmt(s)} | {fmt(f)} | {fmt(b)} | {fmt(r)} | {ratio} |")
    return out


def peers(path):
    """rows[(sampler, dtype, threads, d)] = ns per step*dim."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(r["sampler"], r["dtype"], int(r["threads"]), int(r["d"]))] = float(
                r["ns_per_step_dim"])
    return rows


def peer_table(builds, bj):
    ours = {name: step_cells(cells)[0] for name, cells in builds}
    out = ["| sampler | type | d | blackjax 1 core | blackjax 2 threads | ours portable | "
           "ours dispatched | ours native | blackjax 1 core / ours dispatched | "
           "blackjax 1 core / ours native | blackjax 2 threads / ours native |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sampler, config in [("sgnht", "sgnht-euler"), ("sgld", "sgld")]:
        for ty in TYPES:
            for d in sorted({k[3] for k in bj if k[0] == sampler and k[1] == ty}):
                b1, b2 = bj.get((sampler, ty, 1, d)), bj.get((sampler, ty, 2, d))
                po = ours.get("portable", {}).get((ty, config, d))
                di = ours.get("dispatched", {}).get((ty, config, d))
                na = ours.get("native", {}).get((ty, config, d))
                r0 = f"{b1 / di:.1f}" if b1 and di else "–"
                r1 = f"{b1 / na:.1f}" if b1 and na else "–"
                r2 = f"{b2 / na:.1f}" if b2 and na else "–"
                out.append(f"| {sampler} | {ty} | {d} | {fmt(b1)} | {fmt(b2)} | {fmt(po)} | "
                           f"{fmt(di)} | {fmt(na)} | {r0} | {r1} | {r2} |")
    return out


def plot(builds, bj, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, ty in zip(axes, TYPES):
        for name, cells in builds:
            steps, dims = step_cells(cells)
            for config, style in [("sgnht-euler", "-o"), ("sgld", "--o")]:
                ys = [steps.get((ty, config, d)) for d in dims]
                if any(y is not None for y in ys):
                    ax.plot(dims, ys, style, label=f"sgmcmc {config} ({name})")
        for sampler, style in [("sgnht", "-s"), ("sgld", "--s")]:
            for threads in (1, 2):
                ds = sorted({k[3] for k in bj if k[:3] == (sampler, ty, threads)})
                if ds:
                    ax.plot(ds, [bj[(sampler, ty, threads, d)] for d in ds], style, alpha=0.7,
                            label=f"blackjax {sampler} ({threads} thread{'s' if threads > 1 else ''})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("dimension d")
        ax.set_title(ty)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ns per (step × dimension)")
    axes[1].legend(fontsize=7, loc="upper right")
    fig.suptitle("One step on ∇U(θ) = θ: sgmcmc vs blackjax, same machine, same run")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", help="also write the ours-vs-peers plot to this PNG")
    ap.add_argument("--peers", default=os.path.join(HERE, "peer_bench", "out", "blackjax.csv"))
    args = ap.parse_args()
    builds = [(name, c) for name, root, _ in BUILDS if (c := collect(root)) is not None]
    if not builds:
        sys.exit("no criterion output; run tools/bench.sh first")
    bj = peers(args.peers)

    print("# Performance")
    print()
    print(f"Generated by `tools/bench.sh` (which runs `tools/bench_report.py`) on {cpu_name()}, "
          f"{os.cpu_count()} logical CPUs, {platform.system()} {platform.machine()}: every figure "
          "below comes from that one run (criterion medians; absolute times drift between runs "
          "on this machine, ratios within a run are what to compare). Model ∇U(θ) = θ, h = 10⁻³, "
          "A = 1; HMC runs one leapfrog step per proposal.")
    print()
    print("The floor of a step is what it cannot avoid: drawing its normals (`normal-fill`, "
          "`sgmcmc::rng::fill_lane_normals` into a buffer of d) plus one pass that reads θ, p and "
          "∇U, writes θ and p and sums p² (`update-stream`); both are benchmarked in the same "
          "run (`floor/*` in `benches/kernels.rs`).")
    for name, root, how in BUILDS:
        cells = dict(builds).get(name)
        print()
        print(f"## {name.capitalize()} build")
        print()
        print(how + ".")
        print()
        print("\n".join(build_tables(name, cells) if cells else ["(not run)"]))
    print()
    print("## Dispatched against native")
    print()
    print("\n".join(dispatch_table(builds)))
    print()
    print("## Normal draws (ns per draw, 1024 per call)")
    print()
    print("\n".join(normal_rows(builds)))
    print()
    print("## Against blackjax")
    print()
    if bj:
        print("blackjax 1.7.1 on JAX (versions pinned in `tools/peer_bench/requirements.txt`), "
              "`jit` of a `lax.scan` over steps, the same model, run by `tools/peer_bench/run.sh` "
              "right after our benches: pinned to one core, then on both. Our figures are one "
              "thread. ns per (step × dimension):")
        print()
        print("\n".join(peer_table(builds, bj)))
        if args.plot:
            plot(builds, bj, args.plot)
            print()
            print(f"![ns/dim against d]({os.path.basename(args.plot)})")
    else:
        print("(no peer results: run `tools/peer_bench/run.sh`)")


if __name__ == "__main__":
    main()
