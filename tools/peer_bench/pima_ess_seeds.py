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
blackjax on one core with each reading: seed 0's (the table's), and the seed means. It also
averages the other natural readings of ESS over the seeds (tail ESS, ArviZ's "mean" ESS without
rank normalisation, the ESS of the log posterior density; see OTHER) and prints the ratio each
gives, so that a target is not judged on one reading alone.

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
    """(min, median) over the 8 weights of ArviZ's bulk ESS: python_pima's reading."""
    import arviz as az

    ess = np.asarray(az.ess(az.convert_to_dataset(draws)).to_array()).ravel()
    return float(ess.min()), float(np.median(ess))


def log_posterior(draws, X, y):
    """The full-data log posterior (up to a constant) at each draw: Σ y z − log(1 + eᶻ) over
    the N = 532 rows, z = Xθ, plus the N(0, PRIOR_VAR) prior; shape (chains, draws)."""
    lp = np.empty(draws.shape[:2])
    for c in range(draws.shape[0]):
        z = draws[c] @ X.T
        lp[c] = (z * y).sum(1) - np.logaddexp(0.0, z).sum(1) \
            - 0.5 * (draws[c] ** 2).sum(1) / python_pima.PRIOR_VAR
    return lp


# The other natural readings of "ESS" (the project's rule: try each before calling a target
# unreachable): ArviZ's tail ESS (Vehtari et al. 2021's 5 % and 95 % quantiles), its "mean"
# ESS (Geyer's initial monotone sequence on the raw draws, no rank normalisation), each the
# minimum over the weights, and the bulk ESS of the full-data log posterior density.
OTHER = ("tail min", "mean-method min", "log posterior bulk")


def other_readings(draws, X, y):
    import arviz as az

    ds = az.convert_to_dataset(draws)
    tail = np.asarray(az.ess(ds, method="tail").to_array()).ravel()
    mean = np.asarray(az.ess(ds, method="mean").to_array()).ravel()
    lp = float(az.ess(log_posterior(draws, X, y)))
    return float(tail.min()), float(mean.min()), lp


def sgmcmc_draws(seed, args, tmp=None):
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

    X, y = python_pima.load()
    rows = {"sgmcmc": [], "blackjax": []}
    others = {"sgmcmc": [], "blackjax": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            for name, draw in (("sgmcmc", sgmcmc_draws), ("blackjax", blackjax_draws)):
                draws = draw(seed, args, tmp)
                rows[name].append(ess_readings(draws))
                others[name].append(other_readings(draws, X, y))
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
    so, bo = np.array(others["sgmcmc"]), np.array(others["blackjax"])
    lines += ["", "The other readings of ESS, each averaged over the seeds (mean ± sd), and the "
              "ESS/s ratio to blackjax on one core that each gives with the same wall times:", "",
              "| reading | sgmcmc | blackjax | " + " | ".join(
                  f"{m} × blackjax" for m in ("builtin", "cfunc_rows_fastmath", "cfunc_rows")
                  if m in walls and "blackjax" in walls) + " |",
              "| --- | --- | --- |" + " --- |" * sum(
                  m in walls and "blackjax" in walls
                  for m in ("builtin", "cfunc_rows_fastmath", "cfunc_rows"))]
    for k, reading in enumerate(OTHER):
        cells = []
        for method in ("builtin", "cfunc_rows_fastmath", "cfunc_rows"):
            if method in walls and "blackjax" in walls:
                t = walls["blackjax"] / walls[method]
                cells.append(f"{t * so[:, k].mean() / bo[:, k].mean():.2f}")
        lines.append(f"| {reading} | {so[:, k].mean():.0f} ± {so[:, k].std(ddof=1):.0f} "
                     f"| {bo[:, k].mean():.0f} ± {bo[:, k].std(ddof=1):.0f} | "
                     + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
