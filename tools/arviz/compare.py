"""Loads chains written by `harness ... --draws DIR` with ArviZ and prints az.summary beside
harness' own ESS and split-R̂ of the same draws; fails if they disagree.

Usage: compare.py HOST_TESTS_BINARY DIR [--skip N]

Chain files are grouped by run (the name before `-chain<c>`); each group with at least two chains
is one comparison. ArviZ's `az.summary` reports the rank-normalised bulk and tail ESS and R̂
(Vehtari et al. 2021); harness computes the basic split-chain ESS of the mean and split-R̂,
which are ArviZ's `az.ess(method="mean")` and `az.rhat(method="split")`. Those two must agree
to 1e-6 (relative): the same estimator on the same numbers, so any difference is a bug. The
rank-normalised columns are printed beside them for the reader; they differ by design.
"""

import collections
import io
import re
import subprocess
import sys
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd

TOLERANCE = 1e-6


def groups(directory: Path):
    runs = collections.defaultdict(list)
    for f in sorted(directory.glob("*.csv")):
        m = re.match(r"(.*)-chain(\d+)(-run\d+)?\.csv$", f.name)
        if m:
            runs[m.group(1) + (m.group(3) or "")].append(f)
    return {k: v for k, v in runs.items() if len(v) >= 2}


def ours(binary: str, files, skip: int) -> pd.DataFrame:
    out = subprocess.run(
        [binary, "summarize", "--skip", str(skip), *map(str, files)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return pd.read_csv(io.StringIO(out)).set_index("name")


def theirs(files, skip: int):
    idata = az.from_cmdstan(posterior=[str(f) for f in files])
    post = idata.posterior.isel(draw=slice(skip, None))
    summary = az.summary(post, var_names=["theta"], round_to="none")
    ess_mean = az.ess(post, var_names=["theta"], method="mean")["theta"].values
    rhat_split = az.rhat(post, var_names=["theta"], method="split")["theta"].values
    return summary, np.atleast_1d(ess_mean), np.atleast_1d(rhat_split)


def close(a: float, b: float) -> bool:
    if np.isinf(a) and np.isinf(b):
        return True
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    binary, directory = sys.argv[1], Path(sys.argv[2])
    skip = int(sys.argv[sys.argv.index("--skip") + 1]) if "--skip" in sys.argv else 0
    runs = groups(directory)
    if not runs:
        print(f"no run with two or more chains in {directory}")
        return 1
    failures = 0
    for run, files in runs.items():
        ours_df = ours(binary, files, skip)
        summary, ess_mean, rhat_split = theirs(files, skip)
        print(f"\n## {run}: {len(files)} chains, {directory}")
        print(
            f"{'parameter':>10} {'mean':>10} {'sd':>9} | {'az ess_bulk':>11} {'az ess_tail':>11}"
            f" {'az r_hat':>9} | {'az ess(mean)':>12} {'our ess':>12} | {'az rhat(split)':>14}"
            f" {'our rhat':>10}"
        )
        for j, name in enumerate(ours_df.index):
            row = summary.iloc[j]
            o = ours_df.loc[name]
            ok = close(o["ess"], ess_mean[j]) and close(o["rhat"], rhat_split[j]) and close(
                o["mean"], row["mean"]
            )
            failures += not ok
            print(
                f"{name:>10} {row['mean']:>10.4g} {row['sd']:>9.4g} | {row['ess_bulk']:>11.1f}"
                f" {row['ess_tail']:>11.1f} {row['r_hat']:>9.4f} | {ess_mean[j]:>12.3f}"
                f" {o['ess']:>12.3f} | {rhat_split[j]:>14.6f} {o['rhat']:>10.6f}"
                f"{'' if ok else '   <-- DISAGREE'}"
            )
    print(
        f"\n{'all agree' if failures == 0 else f'{failures} parameters disagree'} "
        f"(ESS of the mean and split-R̂ to {TOLERANCE:g} relative; ArviZ {az.__version__})"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
