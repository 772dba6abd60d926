#!/usr/bin/env python3
"""Turns the criterion results of `cargo bench -p sgmcmc-bench` into Markdown tables of ns/element.

Reads every `<criterion dir>/**/new/benchmark.json` (group_id, function_id, value_str,
throughput {"Elements": n}) and the `estimates.json` beside it (times in ns per iteration) as
written by criterion 0.8, divides the chosen statistic by the element count and prints:

1. ns per (step x dimension): rows = sampler-integrator, columns = f32/f64 x d;
2. ns per standard normal draw: sgmcmc (scalar calls, fill_standard_normal) vs rand_distr.

Usage: python3 tools/bench_table.py [--stat median|mean|slope] [CRITERION_DIR]
(default: median, target/criterion next to this script's crate). Python 3 stdlib only.
"""

import argparse
import json
import os
import platform
import sys

# Row order of the step table; configs not listed here are appended alphabetically.
CONFIG_ORDER = [
    "sgld",
    "sghmc-euler",
    "sghmc-splitting",
    "sgnht-euler",
    "sgnht-splitting",
    "msgnht-euler",
    "msgnht-splitting",
    "sgmgt-d-euler",
    "sgmgt-d-splitting",
    "sghmc-diagonal-splitting",
    "hmc-leapfrog-l1",
]
TYPES = ["f32", "f64"]


def fmt(x):
    """2-3 significant figures, never in exponent notation."""
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def load(root, stat):
    """Yields (group_id, function_id, value_str, ns per element) for every benchmark found."""
    for dirpath, _dirnames, filenames in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in filenames:
            continue
        try:
            with open(os.path.join(dirpath, "benchmark.json")) as f:
                bench = json.load(f)
            with open(os.path.join(dirpath, "estimates.json")) as f:
                est = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"warning: skipping {dirpath}: {e}", file=sys.stderr)
            continue
        tp = bench.get("throughput") or {}
        elements = tp.get("Elements")
        if not elements:
            print(f"warning: no element throughput in {dirpath}", file=sys.stderr)
            continue
        # `slope` is absent (null) under flat sampling; fall back to the mean.
        chosen = est.get(stat) or est.get("mean")
        ns = chosen["point_estimate"] / elements
        yield bench["group_id"], bench["function_id"], bench.get("value_str"), ns


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def step_table(results):
    # results[(type, config, d)] = ns per step*dim
    cells, configs, dims = {}, set(), set()
    for group, func, value, ns in results:
        if not group.startswith("step/"):
            continue
        ty = group.split("/", 1)[1]
        d = int(value)
        cells[(ty, func, d)] = ns
        configs.add(func)
        dims.add(d)
    if not cells:
        return ["(no `step/*` results found)"]
    dims = sorted(dims)
    rows = [c for c in CONFIG_ORDER if c in configs] + sorted(configs - set(CONFIG_ORDER))
    types = [t for t in TYPES if any(k[0] == t for k in cells)]
    cols = [(t, d) for t in types for d in dims]
    out = [
        "| sampler-integrator | " + " | ".join(f"{t} d={d}" for t, d in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for r in rows:
        out.append(f"| {r} | " + " | ".join(fmt(cells.get((t, r, d))) for t, d in cols) + " |")
    return out


def normal_table(results):
    # per[type][source] = ns per draw
    per = {}
    for group, func, value, ns in results:
        if group == "normal":
            per.setdefault(value, {})[func] = ns
    if not per:
        return ["(no `normal` results found)"]

    def ratio(a, b):
        return f"{a / b:.2f}" if a is not None and b else "–"

    out = [
        "| type | sgmcmc scalar | sgmcmc fill (1024) | rand_distr StandardNormal | "
        "scalar / rand_distr | fill / rand_distr |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for ty in [t for t in TYPES if t in per] + sorted(set(per) - set(TYPES)):
        p = per[ty]
        s, f, r = p.get("sgmcmc-scalar"), p.get("sgmcmc-fill"), p.get("rand_distr")
        out.append(
            f"| {ty} | {fmt(s)} | {fmt(f)} | {fmt(r)} | {ratio(s, r)} | {ratio(f, r)} |"
        )
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stat", choices=["median", "mean", "slope"], default="median")
    ap.add_argument("root", nargs="?", default=os.path.join(here, "..", "target", "criterion"))
    args = ap.parse_args()
    if not os.path.isdir(args.root):
        sys.exit(f"no criterion output at {args.root}; run `cargo bench -p sgmcmc-bench` first")
    results = list(load(args.root, args.stat))

    print(
        f"Figures from this machine only ({cpu_name()}, {os.cpu_count()} logical CPUs, "
        f"{platform.system()} {platform.machine()}); criterion {args.stat} time / elements."
    )
    print()
    print("### ns per (step × dimension), model ∇U(θ) = θ, h = 1e-3, A = 1")
    print()
    print("\n".join(step_table(results)))
    print()
    print(
        "HMC runs L = 1 leapfrog step per proposal (one gradient per step, like the SG "
        "samplers), plus one energy evaluation ½θᵀθ (U at the current θ is cached), "
        "two kinetic-energy sums and the save/restore copies of θ and ∇U."
    )
    print()
    print("### ns per standard normal draw (Pcg64, 1024 draws per iteration)")
    print()
    print("\n".join(normal_table(results)))


if __name__ == "__main__":
    main()
