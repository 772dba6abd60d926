#!/usr/bin/env python3
"""How much of python_pima's ESS/s ratio is the seed: min bulk ESS over seeds (issue 35).

python_pima.sh reports ESS per second from one seed (seed 0) per method. ESS has Monte Carlo
error of its own, so the ratio to blackjax carries the two seeds' luck. This runs the same
settings (SGNHT Euler, h = 0.005, A = 10, minibatch 32, 4 chains x (1 000 + 25 000) steps) for
--seeds seeds, untimed:

* sgmcmc's built-in LogisticRegression (minibatches without replacement, drawn in Rust; the
  numba cfunc on sgmcmc's rows draws the same chain, python_pima.py's ESS equality);
* blackjax's sgnht (minibatches with replacement, as python_pima's blackjax row), through
  blackjax_pima.py in blackjax's venv, one process per seed.

For each: ArviZ bulk ESS, the minimum over the 8 weights (python_pima's reading) and the median
over the weights, per seed, then their mean and standard deviation over seeds. With the wall
times of the last python_pima.sh run (out/python_pima_*_1.json), it prints the ESS/s ratio to
blackjax on one core with each reading: seed 0's (the table's), and the seed means.

    tools/peer_bench/pima_ess_seeds.sh            # -> out/pima_ess_seeds.md
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import python_pima  # noqa: E402  (load, BATCH)


def ess_readings(draws):
    import arviz as az

    ess = np.asarray(az.ess(az.convert_to_dataset(draws)).to_array()).ravel()
    return float(ess.min()), float(np.median(ess))


def sgmcmc_draws(seed, args):
    import sgmcmc

    X, y = python_pima.load()
    model = sgmcmc.LogisticRegression(X, y, batch_size=python_pima.BATCH)
    fit = sgmcmc.sample(model, "sgnht", chains=4, draws=args.draws, warmup=args.warmup,
                        seed=seed, progress=False, step_size=0.005, diffusion=10.0,
                        integrator="euler")
    return np.asarray(fit.draws)


def blackjax_draws(seed, args, tmp):
    out, npz = os.path.join(tmp, f"bj{seed}.json"), os.path.join(tmp, f"bj{seed}.npz")
    subprocess.run([args.blackjax_python, os.path.join(HERE, "blackjax_pima.py"), "--seed",
                    str(seed), "--reps", "1", "--draws", str(args.draws), "--warmup",
                    str(args.warmup), "--out", out, "--draws-out", npz], check=True)
    return np.load(npz)["draws"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--draws", type=int, default=25000)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--blackjax-python", required=True)
    p.add_argument("--out", required=True, help="markdown file")
    args = p.parse_args()

    rows = {"sgmcmc": [], "blackjax": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            rows["sgmcmc"].append(ess_readings(sgmcmc_draws(seed, args)))
            rows["blackjax"].append(ess_readings(blackjax_draws(seed, args, tmp)))
            print(f"[pima_ess_seeds] seed {seed}: sgmcmc {rows['sgmcmc'][-1]}, "
                  f"blackjax {rows['blackjax'][-1]}", file=sys.stderr, flush=True)

    walls = {}
    for name, method in [("sgmcmc_1", "builtin"), ("sgmcmc_1", "cfunc_rows_fastmath"),
                         ("sgmcmc_1", "cfunc_rows"), ("blackjax_1", "blackjax")]:
        path = os.path.join(HERE, "out", f"python_pima_{name}.json")
        if os.path.exists(path):
            with open(path) as f:
                for r in json.load(f):
                    if r["method"] == method:
                        walls[method] = r["wall_s"]

    s, b = np.array(rows["sgmcmc"]), np.array(rows["blackjax"])
    lines = [f"ESS over {args.seeds} seeds (0..{args.seeds - 1}), untimed; SGNHT Euler, "
             f"h = 0.005, A = 10, minibatch {python_pima.BATCH}, 4 chains × "
             f"({args.warmup} + {args.draws}) steps. ArviZ bulk ESS: the minimum over the 8 "
             "weights, and the median over them.", "",
             "| seed | sgmcmc min | blackjax min | sgmcmc median | blackjax median |",
             "| --- | --- | --- | --- | --- |"]
    for i in range(args.seeds):
        lines.append(f"| {i} | {s[i, 0]:.0f} | {b[i, 0]:.0f} | {s[i, 1]:.0f} | {b[i, 1]:.0f} |")
    lines.append(f"| mean ± sd | {s[:, 0].mean():.0f} ± {s[:, 0].std(ddof=1):.0f} "
                 f"| {b[:, 0].mean():.0f} ± {b[:, 0].std(ddof=1):.0f} "
                 f"| {s[:, 1].mean():.0f} ± {s[:, 1].std(ddof=1):.0f} "
                 f"| {b[:, 1].mean():.0f} ± {b[:, 1].std(ddof=1):.0f} |")
    if "blackjax" in walls:
        lines += ["", "ESS/s against blackjax on one core, with the wall times of the last "
                  "python_pima.sh run (out/python_pima_*_1.json):", "",
                  "| method | wall s | × blackjax, seed 0 min ESS (the table's reading) "
                  "| × blackjax, mean min ESS | × blackjax, mean median ESS |",
                  "| --- | --- | --- | --- | --- |"]
        for method in ("builtin", "cfunc_rows_fastmath", "cfunc_rows"):
            if method not in walls:
                continue
            t = walls["blackjax"] / walls[method]
            lines.append(f"| {method} | {walls[method]:.4f} | {t * s[0, 0] / b[0, 0]:.2f} "
                         f"| {t * s[:, 0].mean() / b[:, 0].mean():.2f} "
                         f"| {t * s[:, 1].mean() / b[:, 1].mean():.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
