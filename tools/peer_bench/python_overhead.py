#!/usr/bin/env python3
"""What a gradient costs per step through sgmcmc's Python binding (python/README.md's table).

SGNHT (h = 0.1) on the 3-d Gaussian N(μ, diag(1, 1/4, 4)) with the gradient given three ways:
the built-in sgmcmc.Gaussian, a numba cfunc behind sgmcmc.CFunction, and a NumPy function
behind sgmcmc.PythonModel. For each, 1 and 4 chains of --steps steps: the wall time per step of
all chains (the least of --reps runs, after an untimed one). Then the NumPy function alone per
call (timeit, the least of 5 x --steps calls), so that a Python callable's crossing is its
per-step time with 1 chain less the function's own.

    python/.venv/bin/python tools/peer_bench/python_overhead.py [--steps 20000] [--reps 7]

Prints a markdown table.
"""

import argparse
import time
import timeit

import numpy as np

import sgmcmc

MEAN, VARIANCE = np.array([1.0, -0.5, 2.0]), np.array([1.0, 0.25, 4.0])
PRECISION = 1.0 / VARIANCE


def numpy_gradient(theta):
    return PRECISION * (theta - MEAN)


def numba_model():
    from numba import carray, cfunc, types

    mean, precision = MEAN.copy(), PRECISION.copy()
    sig = types.void(types.CPointer(types.double), types.CPointer(types.double), types.size_t,
                     types.voidptr)

    @cfunc(sig, nopython=True)
    def gradient(theta_ptr, grad_ptr, n, ctx):
        theta, grad = carray(theta_ptr, (n,)), carray(grad_ptr, (n,))
        for i in range(n):
            grad[i] = precision[i] * (theta[i] - mean[i])

    return gradient


def per_step(model, chains, steps, reps):
    kw = dict(step_size=0.1, chains=chains, draws=steps, progress=False)
    sgmcmc.sample(model, "sgnht", **{**kw, "draws": 200})
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        sgmcmc.sample(model, "sgnht", **kw)
        best = min(best, time.perf_counter() - t)
    return best / steps * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    cfunc = numba_model()
    models = {
        "built-in": sgmcmc.Gaussian(MEAN, VARIANCE),
        "numba `cfunc`": sgmcmc.CFunction(cfunc.address, 3),
        "Python callable": sgmcmc.PythonModel(numpy_gradient, 3),
    }
    print("| gradient | 1 chain | 4 chains (wall time per step, all chains) |")
    print("| --- | --- | --- |")
    one = {}
    for name, model in models.items():
        one[name] = per_step(model, 1, args.steps, args.reps)
        four = per_step(model, 4, args.steps, args.reps)
        print(f"| {name} | {one[name]:.2f} µs | {four:.2f} µs |", flush=True)
    theta = np.full(3, 0.1)
    alone = min(timeit.repeat(lambda: numpy_gradient(theta), number=args.steps, repeat=5))
    alone = alone / args.steps * 1e6
    print(f"\nThe NumPy function alone: {alone:.2f} µs per call; through sgmcmc with one chain "
          f"{one['Python callable']:.2f} µs per step, so {one['Python callable'] - alone:.2f} µs "
          "of crossing per step.")


if __name__ == "__main__":
    main()
