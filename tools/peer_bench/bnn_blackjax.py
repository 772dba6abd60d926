#!/usr/bin/env python3
"""blackjax on the harness's BNN: cost per iteration of sgld, sghmc and sgnht.

The model of `harness bnn` (harness::models::bnn): the 8x8 digits (harness/data/
digits.csv), 1197 training images standardised per pixel, a 64-100-10 ReLU network with a
N(0, 1) prior on every weight and bias and a softmax likelihood, float64 (the harness runs
f64). The gradient estimator is blackjax's `grad_estimator(logprior, loglikelihood, N)` on
minibatches of 20 or 100 rows drawn uniformly *with* replacement inside the jitted scan
(`jax.random.randint`; ours draws without replacement by a partial Fisher-Yates shuffle of
O(batch) cost, while `jax.random.choice(replace=False)` permutes all 1197 rows per draw).
sghmc runs one integration step per call (`num_integration_steps=1`): one gradient per
iteration, as ours.

For each (sampler, batch), a `jax.lax.scan` of K iterations is jit-compiled and timed (median
of --reps calls after a warm-up); the gradient alone is timed the same way (a scan that
evaluates the estimator at a slowly moving position so XLA cannot hoist it). Output CSV:
sampler,batch,gradient_us,step_us.
"""

import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "harness", "data", "digits.csv")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--iterations", type=int, default=2000, help="K per timed call")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    if args.quick:
        args.iterations, args.reps = 50, 2

    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import blackjax

    raw = np.loadtxt(DATA, delimiter=",", skiprows=1)
    x, y = raw[:, :-1], raw[:, -1].astype(np.int32)
    perm = np.random.default_rng(2014).permutation(len(y))
    train = perm[600:]  # 1197 rows, the harness's training-split size
    x, y = x[train], y[train]
    sd = x.std(axis=0, ddof=1)
    x = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    x, y = jnp.asarray(x), jnp.asarray(y)
    n = x.shape[0]

    def logprior(params):
        return -0.5 * sum(jnp.sum(v * v) for v in jax.tree.leaves(params))

    # blackjax vmaps the log-likelihood over the minibatch's rows: one example here.
    def loglik(params, example):
        xi, yi = example
        hidden = jax.nn.relu(xi @ params["w1"] + params["b1"])
        logits = hidden @ params["w2"] + params["b2"]
        return jax.nn.log_softmax(logits)[yi]

    grad_est = blackjax.sgmcmc.gradients.grad_estimator(logprior, loglik, n)
    key = jax.random.key(0)
    k1, k2 = jax.random.split(key)
    params = {
        "w1": jax.random.normal(k1, (64, 100)) * np.sqrt(2 / 64),
        "b1": jnp.zeros(100),
        "w2": jax.random.normal(k2, (100, 10)) * np.sqrt(2 / 100),
        "b2": jnp.zeros(10),
    }

    def minibatch(k, batch):
        idx = jax.random.randint(k, (batch,), 0, n)
        return x[idx], y[idx]

    def timed(fn, *a):
        jax.block_until_ready(fn(*a))  # compile and warm up
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            jax.block_until_ready(fn(*a))
            times.append(time.perf_counter() - t)
        return statistics.median(times) / args.iterations * 1e6

    rows = []
    for batch in (20, 100):
        def grad_only(k, pos):
            def body(pos, sk):
                g = grad_est(pos, minibatch(sk, batch))
                return jax.tree.map(lambda a, b: a + 1e-12 * b, pos, g), None
            return jax.lax.scan(body, pos, jax.random.split(k, args.iterations))[0]

        g_us = timed(jax.jit(grad_only), key, params)
        for name in ("sgld", "sghmc", "sgnht"):
            if name == "sgld":
                alg = blackjax.sgld(grad_est)
                state = alg.init(params)
                h = 1e-5
            elif name == "sghmc":
                alg = blackjax.sghmc(grad_est, num_integration_steps=1)
                state = alg.init(params)
                h = 9e-6
            else:
                alg = blackjax.sgnht(grad_est)
                state = alg.init(params, key)
                state = state._replace(xi=jnp.asarray(state.xi, dtype=jnp.float64))
                h = 9e-6

            def run(k, st, alg=alg, h=h):
                def body(st, sk):
                    kb, ks = jax.random.split(sk)
                    return alg.step(ks, st, minibatch(kb, batch), h), None
                return jax.lax.scan(body, st, jax.random.split(k, args.iterations))[0]

            s_us = timed(jax.jit(run), key, state)
            print(f"[bnn_blackjax] {name} batch {batch}: gradient {g_us:.1f} us, "
                  f"step {s_us:.1f} us", file=sys.stderr, flush=True)
            rows.append([name, batch, f"{g_us:.2f}", f"{s_us:.2f}"])
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sampler", "batch", "gradient_us", "step_us"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
