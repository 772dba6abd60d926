#!/usr/bin/env python3
"""blackjax's sgnht on python_pima.py's model: wall time to 10^5 draws (issue 35).

The model of python_pima.py (python/README.md's example): Bayesian logistic regression on all
532 rows of harness/data/pima_{train,test}.csv, intercept + standardised features, prior
N(0, 10 I), float64. The gradient is blackjax's `grad_estimator(logprior, loglik, 532)` on a
minibatch of 32 rows drawn inside the jitted scan: with replacement by `jax.random.randint`, as
bnn_blackjax.py does (`--without-replacement`: `jax.random.choice(replace=False)`, which permutes
all 532 rows per draw). 4 chains by `jax.vmap` over a `jax.lax.scan` of warmup + draws steps,
started at θ = 0 with momentum N(0, I) and ξ = alpha.

Mapping of the settings (blackjax 1.7.1, blackjax/sgmcmc/diffusions.py `sgnht`, T = 1):

    θ ← θ + ε p;  p ← (1 − ξ ε) p + ε ∇log π̃(θ_old) + √(ε (2α − ε β)) ζ;  ξ ← ξ + ε (|p|²/d − 1)

and ours (src/integrator/euler.rs, Ding et al. 2014 Alg. 1):

    p ← p − ξ p h − ∇Ũ(θ) h + √(2 A h) ζ;  θ ← θ + p h;  ξ ← ξ + (|p|²/d − 1) h

so blackjax's step_size ε = our h, alpha = our diffusion A, beta = our noise estimate (0), and
both start ξ at A (blackjax: `init_xi or alpha`). The one difference: blackjax moves θ with the
old momentum (explicit Euler), ours with the new one (symplectic Euler); both first order.

Timing: jit compile (lower + compile) timed apart and reported; then an untimed call and --reps
timed calls of the compiled function (same keys), each ended by block_until_ready, which include
the warm-up steps; the least is reported (the least disturbed by other processes), with its
process CPU time / wall time. The draws after
warm-up (chains, draws, 8) go to --draws-out (.npz) for python_pima.py to summarise with ArviZ
(this venv has no ArviZ). Timing JSON goes to --out.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
BATCH, PRIOR_VAR = 32, 10.0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--draws-out", required=True)
    p.add_argument("--cores", default="1")
    p.add_argument("--step-size", type=float, default=0.005)
    p.add_argument("--alpha", type=float, default=10.0)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=25000)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reps", type=int, default=5,
                   help="timed calls; the least is reported (the least disturbed)")
    p.add_argument("--without-replacement", action="store_true")
    args = p.parse_args()

    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import blackjax

    data = np.vstack([np.loadtxt(os.path.join(ROOT, "harness", "data", f"pima_{s}.csv"),
                                 delimiter=",", skiprows=1) for s in ("train", "test")])
    X, y = data[:, :-1], data[:, -1]
    X = np.hstack([np.ones((len(X), 1)), (X - X.mean(0)) / X.std(0, ddof=1)])
    n, d = X.shape
    X, y = jnp.asarray(X), jnp.asarray(y)

    def logprior(theta):
        return -0.5 * jnp.sum(theta * theta) / PRIOR_VAR

    def loglik(theta, example):  # one row; blackjax vmaps it over the minibatch
        xi, yi = example
        z = xi @ theta
        return yi * jax.nn.log_sigmoid(z) + (1.0 - yi) * jax.nn.log_sigmoid(-z)

    grad_est = blackjax.sgmcmc.gradients.grad_estimator(logprior, loglik, n)
    alg = blackjax.sgnht(grad_est, alpha=args.alpha, beta=0.0)
    h = args.step_size
    steps = args.warmup + args.draws

    def minibatch(k):
        if args.without_replacement:
            idx = jax.random.choice(k, n, (BATCH,), replace=False)
        else:
            idx = jax.random.randint(k, (BATCH,), 0, n)
        return X[idx], y[idx]

    def chain(key):
        kinit, krun = jax.random.split(key)
        state = alg.init(jnp.zeros(d), kinit)
        state = state._replace(xi=jnp.asarray(state.xi, dtype=jnp.float64))

        def body(st, sk):
            kb, ks = jax.random.split(sk)
            st = alg.step(ks, st, minibatch(kb), h)
            return st, st.position

        _, positions = jax.lax.scan(body, state, jax.random.split(krun, steps))
        return positions[args.warmup:]

    run = jax.jit(jax.vmap(chain))
    keys = jax.random.split(jax.random.key(args.seed), args.chains)
    t = time.perf_counter()
    compiled = run.lower(keys).compile()
    compile_s = time.perf_counter() - t
    jax.block_until_ready(compiled(jax.random.split(jax.random.key(args.seed + 99),
                                                    args.chains)))  # untimed first call
    walls, cpus = [], []
    for _ in range(args.reps):
        t, c = time.perf_counter(), time.process_time()
        draws = jax.block_until_ready(compiled(keys))
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    best = int(np.argmin(walls))
    seconds = walls[best]
    draws = np.asarray(draws)
    if not np.isfinite(draws).all():
        raise SystemExit("blackjax_pima: non-finite draws")
    np.savez_compressed(args.draws_out, draws=draws)
    rec = {"method": "blackjax" + (" (without replacement)" if args.without_replacement else ""),
           "cores": args.cores, "chains": args.chains, "draws": args.draws,
           "warmup": args.warmup, "warmup_timed": True, "step_size": h, "alpha": args.alpha,
           "beta": 0.0, "wall_s": seconds, "wall_s_all": walls, "cpu_over_wall": cpus[best] / seconds, "compile_s": compile_s, "steps_per_chain": steps,
           "us_per_step_all_chains": seconds / steps * 1e6, "draws_file": args.draws_out,
           "jax": jax.__version__, "blackjax": blackjax.__version__}
    print(f"[blackjax_pima] {rec['method']} cores={args.cores}: {seconds:.2f} s "
          f"(compile {compile_s:.2f} s)", file=sys.stderr, flush=True)
    with open(args.out, "w") as f:
        json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main()
