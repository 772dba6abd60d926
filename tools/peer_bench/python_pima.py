#!/usr/bin/env python3
"""sgmcmc from Python on Pima: wall time to 10^5 draws and ESS per second (issue 35).

Bayesian logistic regression on all 532 rows of harness/data/pima_{train,test}.csv, intercept +
standardised features (python/README.md's example), prior N(0, 10 I), minibatch 32 drawn without
replacement, SGNHT (Euler integrator, h = --step-size, diffusion A = --diffusion), 4 chains of
--warmup + --draws steps each, no thinning. Four ways of giving the gradient (five rows):

* builtin: sgmcmc.LogisticRegression(X, y, batch_size=32), minibatches drawn in Rust;
* cfunc_rows: a numba cfunc behind sgmcmc.CFunction(examples=532, batch_size=32): sgmcmc draws
           the 32 rows (as for the built-in model, so reproducible from the seed) and passes
           them in; cfunc_rows_fastmath: the same function compiled with fastmath=True;
* cfunc:   a numba cfunc behind sgmcmc.CFunction, which draws its own 32 rows without
           replacement per call with numba's np.random (per-thread state in nopython code, so
           the 4 Rust threads calling it concurrently get independent streams; checked below);
* python:  a NumPy function behind sgmcmc.PythonModel (rng.choice(532, 32, replace=False)).

Timing: the wall time of an sgmcmc.sample call, which includes the warm-up steps (so
warmup + draws steps per chain), after an untimed short run (numba's compile time is timed on
its own and reported). ESS: ArviZ bulk ESS of the 4 chains' kept draws, the minimum over the 8
weights; ESS/s = min ESS / wall s. Accuracy against a full-batch HMC reference (HMC, 20 leapfrog
steps of 0.05, 4 x 20 000 draws after 500 warm-up, cached in out/pima_hmc_reference.json): the
largest |mean - ref mean| / ref sd and the sd ratio furthest from 1.

--reps timed runs per method (same seed; at most 5 for the Python callable); the least wall time is reported, the least disturbed by
other processes on a shared machine (all in wall_s_all), with its process CPU time / wall time
(cpu_over_wall: all threads; about 1 per busy core when nothing else competes).

The Python callable's per-step overhead: the NumPy gradient function alone per call (timeit) vs
the wall time per step through sgmcmc with 1 chain, interleaved over 10 rounds (3 x 5000 calls,
then 5000 steps), the least of each.

Writes JSON (--out) with one record per method.
"""

import argparse
import ctypes
import json
import os
import sys
import threading
import time
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
BATCH, PRIOR_VAR = 32, 10.0
NAMES = ["intercept", "npreg", "glu", "bp", "skin", "bmi", "ped", "age"]


def load():
    data = np.vstack([np.loadtxt(os.path.join(ROOT, "harness", "data", f"pima_{s}.csv"),
                                 delimiter=",", skiprows=1) for s in ("train", "test")])
    X, y = data[:, :-1], data[:, -1]
    X = np.hstack([np.ones((len(X), 1)), (X - X.mean(0)) / X.std(0, ddof=1)])
    return np.ascontiguousarray(X), np.ascontiguousarray(y)


def reference(sgmcmc, X, y, path):
    if os.path.exists(path):
        with open(path) as f:
            r = json.load(f)
        return np.array(r["mean"]), np.array(r["sd"])
    t = time.perf_counter()
    fit = sgmcmc.sample(sgmcmc.LogisticRegression(X, y), "hmc", step_size=0.05,
                        leapfrog_steps=20, chains=4, draws=20000, warmup=500, progress=False)
    d = fit.draws.reshape(-1, X.shape[1])
    r = {"mean": d.mean(0).tolist(), "sd": d.std(0, ddof=1).tolist(),
         "settings": "hmc step_size=0.05 leapfrog_steps=20 chains=4 draws=20000 warmup=500 seed=0",
         "seconds": time.perf_counter() - t}
    with open(path, "w") as f:
        json.dump(r, f, indent=1)
    return np.array(r["mean"]), np.array(r["sd"])


def numba_gradient(X, y):
    """The cfunc: ∇U on a minibatch of 32 rows drawn without replacement (rejection of repeats
    against the rows drawn so far), U = -log lik × N/B - log prior. X and y are frozen into the
    compiled code as constants."""
    from numba import carray, cfunc, types

    N, D = X.shape
    scale = N / BATCH
    sig = types.void(types.CPointer(types.double), types.CPointer(types.double), types.size_t,
                     types.voidptr)

    @cfunc(sig, nopython=True, fastmath=False, error_model="numpy")
    def grad(theta_ptr, grad_ptr, n, ctx):
        theta = carray(theta_ptr, (n,))
        g = carray(grad_ptr, (n,))
        rows = np.empty(BATCH, np.int64)
        for k in range(BATCH):
            while True:
                j = np.random.randint(0, N)
                fresh = True
                for m in range(k):
                    if rows[m] == j:
                        fresh = False
                        break
                if fresh:
                    break
            rows[k] = j
        for i in range(n):
            g[i] = theta[i] / PRIOR_VAR
        for k in range(BATCH):
            r = rows[k]
            z = 0.0
            for i in range(n):
                z += X[r, i] * theta[i]
            s = scale * (1.0 / (1.0 + np.exp(-z)) - y[r])
            for i in range(n):
                g[i] += s * X[r, i]

    return grad


def numba_rows_gradient(X, y, fastmath):
    """The cfunc on rows sgmcmc draws (CFunction(examples=N, batch_size=32)): the same ∇U on the
    32 rows passed in, so no sampling inside numba and the chain is reproducible from the seed.
    With fastmath, LLVM may reassociate the dot products' sums (and vectorise them)."""
    from numba import carray, cfunc, types

    N, D = X.shape
    scale = N / BATCH
    sig = types.void(types.CPointer(types.double), types.CPointer(types.double), types.size_t,
                     types.CPointer(types.int64), types.size_t, types.voidptr)

    @cfunc(sig, nopython=True, fastmath=fastmath, error_model="numpy")
    def grad(theta_ptr, grad_ptr, n, rows_ptr, b, ctx):
        theta = carray(theta_ptr, (n,))
        g = carray(grad_ptr, (n,))
        rows = carray(rows_ptr, (b,))
        for i in range(n):
            g[i] = 0.0
        for k in range(b):
            r = rows[k]
            z = 0.0
            for i in range(n):
                z += X[r, i] * theta[i]
            s = 1.0 / (1.0 + np.exp(-z)) - y[r]
            for i in range(n):
                g[i] += s * X[r, i]
        for i in range(n):
            g[i] = scale * g[i] + theta[i] / PRIOR_VAR

    return grad


def numba_streams_check():
    """numba's np.random from 4 foreign OS threads calling a cfunc at once (ctypes releases the
    GIL), then from sgmcmc's 4 Rust threads: are the 4 streams distinct?"""
    from numba import carray, cfunc, types

    @cfunc(types.void(types.CPointer(types.double), types.size_t), nopython=True)
    def fill(out_ptr, n):
        out = carray(out_ptr, (n,))
        for i in range(n):
            out[i] = np.random.random()

    f = ctypes.cast(fill.address, ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_double),
                                                   ctypes.c_size_t))
    outs = [np.zeros(1000) for _ in range(4)]
    barrier = threading.Barrier(4)

    def work(o):
        barrier.wait()
        f(o.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), o.size)

    threads = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    distinct = len({o.tobytes() for o in outs}) == 4
    shared = any(np.intersect1d(outs[a], outs[b]).size for a in range(4) for b in range(a + 1, 4))

    # The same from sgmcmc's 4 Rust threads: SGLD at temperature 0 (no injected noise) with the
    # gradient -u, u ~ U(0, 1) from np.random, so each chain's path is the running sum of its
    # thread's stream: 4 distinct paths from the same start.
    import sgmcmc
    sig = types.void(types.CPointer(types.double), types.CPointer(types.double), types.size_t,
                     types.voidptr)

    @cfunc(sig, nopython=True)
    def uniform(theta_ptr, grad_ptr, n, ctx):
        g = carray(grad_ptr, (n,))
        for i in range(n):
            g[i] = -np.random.random()

    fit = sgmcmc.sample(sgmcmc.CFunction(uniform.address, 2), "sgld", step_size=1.0,
                        temperature=0.0, chains=4, draws=1000, progress=False)
    rust_distinct = len({np.asarray(fit.draws)[c].tobytes() for c in range(4)}) == 4
    return bool(distinct and not shared and rust_distinct)


def numpy_gradient(X, y):
    N = X.shape[0]
    scale = N / BATCH
    rng = np.random.default_rng(1)  # shared by the chains; each call holds the GIL

    def grad(theta):
        rows = rng.choice(N, BATCH, replace=False)
        xb = X[rows]
        s = 1.0 / (1.0 + np.exp(-(xb @ theta))) - y[rows]
        return theta / PRIOR_VAR + scale * (s @ xb)

    return grad


def summarise(draws, ref_mean, ref_sd, seconds):
    import arviz as az

    ess = az.ess(az.convert_to_dataset(draws))  # bulk ESS, (chain, draw, dim)
    ess = np.asarray(ess.to_array()).ravel()
    flat = draws.reshape(-1, draws.shape[-1])
    dmean = np.abs(flat.mean(0) - ref_mean) / ref_sd
    ratio = flat.std(0, ddof=1) / ref_sd
    worst = ratio[np.argmax(np.abs(ratio - 1))]
    return {"wall_s": seconds, "min_ess": float(ess.min()), "ess_per_s": float(ess.min() / seconds),
            "max_dmean_over_sd": float(dmean.max()), "worst_sd_ratio": float(worst),
            "sd_ratio_range": [float(ratio.min()), float(ratio.max())],
            "steps_per_chain": None}


def table(paths):
    """The markdown table of the JSON records in paths (ratios to blackjax on one core)."""
    recs = []
    for path in paths:
        with open(path) as f:
            recs += json.load(f)
    base = next(r for r in recs if r["method"] == "blackjax" and r["cores"] == "1")["ess_per_s"]
    builtin = {r["cores"]: r["ess_per_s"] for r in recs if r["method"] == "builtin"}
    label = {"builtin": "built-in `LogisticRegression`",
             "cfunc_rows_fastmath": "numba `cfunc(fastmath=True)`, rows drawn by sgmcmc",
             "cfunc_rows": "numba `cfunc`, rows drawn by sgmcmc",
             "cfunc": "numba `cfunc`, rows drawn in numba",
             "python": "Python callable (NumPy)"}
    r0 = recs[0]
    lines = [f"SGNHT, h = {r0['step_size']}, A = {r0['diffusion']} (Euler), minibatch {BATCH}, "
             f"{r0['chains']} chains × ({r0['warmup']} warm-up + {r0['draws']} kept) steps, no "
             "thinning; the wall time includes the warm-up steps (the least of 15 timed runs, 5 for the Python callable, 1 for blackjax without replacement; cpu/wall is the process's CPU time over it). "
             "ESS: ArviZ bulk ESS, min over the 8 weights. Accuracy against full-batch HMC "
             "(4 × 20 000 draws).", "",
             "| method | cores | wall s to 10⁵ draws | min ESS | ESS/s | × blackjax (1 core) "
             "| × built-in | max \\|Δmean\\|/sd | worst sd ratio | cpu/wall |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in recs:
        b = builtin.get(r["cores"])
        lines.append(
            f"| {label.get(r['method'], r['method'])} | {r['cores']} | {r['wall_s']:.2f} "
            f"| {r['min_ess']:.0f} | {r['ess_per_s']:.0f} | {r['ess_per_s'] / base:.2f} "
            f"| {r['ess_per_s'] / b:.2f} | {r['max_dmean_over_sd']:.3f} "
            f"| {r['worst_sd_ratio']:.3f} | {r['cpu_over_wall']:.2f} |" if b else
            f"| {label.get(r['method'], r['method'])} | {r['cores']} | {r['wall_s']:.2f} "
            f"| {r['min_ess']:.0f} | {r['ess_per_s']:.0f} | {r['ess_per_s'] / base:.2f} "
            f"| – | {r['max_dmean_over_sd']:.3f} | {r['worst_sd_ratio']:.3f} "
            f"| {r['cpu_over_wall']:.2f} |")
    lines.append("")
    for r in recs:
        if "compile_s" in r:
            lines.append(f"* {r['method']} ({r['cores']} core(s)): compile {r['compile_s']:.2f} s "
                         "(not timed).")
        if "gradient_alone_us" in r:
            lines.append(
                f"* Python callable ({r['cores']} core(s)): the NumPy gradient alone "
                f"{r['gradient_alone_us']:.1f} µs per call; through sgmcmc, 1 chain "
                f"{r['one_chain_us_per_step']:.1f} µs per step (overhead "
                f"{r['overhead_us_per_step']:.1f} µs), 4 chains "
                f"{r['us_per_step_all_chains']:.1f} µs per step of all 4.")
        if "numba_streams_independent" in r:
            lines.append(f"* numba np.random in a cfunc from 4 threads at once (Python threads "
                         f"through ctypes, and sgmcmc's Rust threads): streams "
                         f"{'distinct' if r['numba_streams_independent'] else 'NOT distinct'}.")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--cores", default="1", help="label for the CPU set this process runs on")
    p.add_argument("--methods", default="builtin,cfunc_rows_fastmath,cfunc_rows,cfunc,python")
    p.add_argument("--step-size", type=float, default=0.005)
    p.add_argument("--diffusion", type=float, default=10.0)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=25000)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reps", type=int, default=15,
                   help="timed runs per method (same seed; at most 5 for the Python callable); "
                        "the least wall time is reported")
    p.add_argument("--summarise", metavar="JSON",
                   help="instead of sampling: add ESS and accuracy to blackjax_pima.py's JSON "
                        "(its draws file) and write the record to --out")
    p.add_argument("--table", nargs="+", metavar="JSON",
                   help="print the markdown table of these JSON files and exit")
    args = p.parse_args()
    if args.table:
        print(table(args.table))
        return

    import sgmcmc

    X, y = load()
    ref_mean, ref_sd = reference(sgmcmc, X, y, os.path.join(HERE, "out",
                                                             "pima_hmc_reference.json"))
    if args.summarise:
        with open(args.summarise) as f:
            rec = json.load(f)
        draws = np.load(rec["draws_file"])["draws"]
        seconds = rec["wall_s"]
        rec.update(summarise(draws, ref_mean, ref_sd, seconds))
        rec["steps_per_chain"] = rec["warmup"] + rec["draws"]
        print(f"[python_pima] {rec['method']} cores={rec['cores']}: {seconds:.2f} s, "
              f"min ESS {rec['min_ess']:.0f}, ESS/s {rec['ess_per_s']:.0f}, "
              f"max|dmean|/sd {rec['max_dmean_over_sd']:.3f}, "
              f"sd ratio {rec['sd_ratio_range'][0]:.3f}..{rec['sd_ratio_range'][1]:.3f}",
              file=sys.stderr, flush=True)
        with open(args.out, "w") as f:
            json.dump([rec], f, indent=1)
        return
    settings = dict(step_size=args.step_size, diffusion=args.diffusion, integrator="euler")
    records = []
    for method in args.methods.split(","):
        rec = {"method": method, "cores": args.cores, "chains": args.chains, "draws": args.draws,
               "warmup": args.warmup, "warmup_timed": True, **settings}
        if method == "builtin":
            model = sgmcmc.LogisticRegression(X, y, batch_size=BATCH)
        elif method == "cfunc":
            t = time.perf_counter()
            g = numba_gradient(X, y)
            rec["compile_s"] = time.perf_counter() - t
            rec["numba_streams_independent"] = numba_streams_check()
            model = sgmcmc.CFunction(g.address, X.shape[1])
        elif method in ("cfunc_rows", "cfunc_rows_fastmath"):
            t = time.perf_counter()
            g = numba_rows_gradient(X, y, fastmath=method.endswith("fastmath"))
            rec["compile_s"] = time.perf_counter() - t
            model = sgmcmc.CFunction(g.address, X.shape[1], examples=X.shape[0],
                                     batch_size=BATCH)
        elif method == "python":
            fn = numpy_gradient(X, y)
            model = sgmcmc.PythonModel(fn, X.shape[1])
        else:
            raise SystemExit(f"unknown method {method}")
        # Untimed short run: first-call costs (page faults, thread start, numba's first call).
        sgmcmc.sample(model, "sgnht", chains=args.chains, draws=200, warmup=0, seed=99,
                      progress=False, **settings)
        walls, cpus = [], []
        # The Python callable takes seconds a run, and its spread is small beside that.
        for _ in range(min(args.reps, 5) if method == "python" else args.reps):
            t, c = time.perf_counter(), time.process_time()
            fit = sgmcmc.sample(model, "sgnht", chains=args.chains, draws=args.draws,
                                warmup=args.warmup, seed=args.seed, progress=False, **settings)
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        best = int(np.argmin(walls))
        seconds = walls[best]
        rec["wall_s_all"], rec["cpu_over_wall"] = walls, cpus[best] / walls[best]
        rec.update(summarise(np.asarray(fit.draws), ref_mean, ref_sd, seconds))
        rec["steps_per_chain"] = args.warmup + args.draws
        rec["us_per_step_all_chains"] = seconds / (args.warmup + args.draws) * 1e6
        if method == "python":
            # Interleaved, so that both see the same load: 10 rounds of the function alone
            # (3 x 5000 calls) and of one chain of 5000 steps; the least of each.
            theta = np.full(X.shape[1], 0.1)
            steps, alone, one = 5000, [], []
            for _ in range(10):
                alone.append(min(timeit.repeat(lambda: fn(theta), number=steps, repeat=3))
                             / steps * 1e6)
                t = time.perf_counter()
                sgmcmc.sample(model, "sgnht", chains=1, draws=steps, seed=args.seed,
                              progress=False, **settings)
                one.append((time.perf_counter() - t) / steps * 1e6)
            rec["gradient_alone_us"] = min(alone)
            rec["one_chain_us_per_step"] = min(one)
            rec["overhead_us_per_step"] = rec["one_chain_us_per_step"] - rec["gradient_alone_us"]
        print(f"[python_pima] {method} cores={args.cores}: {seconds:.2f} s, "
              f"min ESS {rec['min_ess']:.0f}, ESS/s {rec['ess_per_s']:.0f}, "
              f"max|dmean|/sd {rec['max_dmean_over_sd']:.3f}, "
              f"sd ratio {rec['sd_ratio_range'][0]:.3f}..{rec['sd_ratio_range'][1]:.3f}",
              file=sys.stderr, flush=True)
        records.append(rec)
    with open(args.out, "w") as f:
        json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
