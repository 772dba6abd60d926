#!/usr/bin/env python3
"""Peer benchmark: per-step cost of blackjax's SG-MCMC samplers (sgld, sgnht).

Target: standard normal, i.e. grad log p(theta) = -theta (grad U = theta), with
a grad estimator that ignores the minibatch and costs essentially nothing, so
the timing is dominated by the sampler update itself (Gaussian noise + axpy).

For each (sampler, d) a jit-compiled `jax.lax.scan` over K steps is timed:
  * warm-up call (compiles), then a calibration call that picks K so that one
    timed call takes >= --min-time seconds (K is static, so this recompiles),
  * then --reps timed calls (each followed by block_until_ready), median taken.
The per-step PRNG keys are derived inside the jitted function with
`jax.random.split(key, K)` and scanned over (idiomatic blackjax usage), so key
derivation is part of the measured per-step cost.

Output: CSV rows `library,sampler,dtype,threads,d,ns_per_step,ns_per_step_dim`
appended to --out (header written if the file is empty/missing), or printed
to stdout if --out is not given. Diagnostics go to stderr.

`--dtype both` runs f32 and f64 each in a separate child process (so that
jax_enable_x64 is only ever set for the f64 run).
"""

import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import time

FULL_DIMS = [17, 1024, 65536, 1048576]
QUICK_DIMS = [17, 1024]
SAMPLERS = ["sgld", "sgnht"]
# a row timed while other processes used more than this many cores is retried
FOREIGN_LIMIT = 0.15
HEADER = ["library", "sampler", "dtype", "threads", "d", "ns_per_step",
          "ns_per_step_dim"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", choices=["f32", "f64", "both"], default="both")
    p.add_argument("--dims", default=None,
                   help="comma-separated dimensions (default: %s; quick: %s)"
                   % (",".join(map(str, FULL_DIMS)), ",".join(map(str, QUICK_DIMS))))
    p.add_argument("--samplers", default=",".join(SAMPLERS),
                   help="comma-separated subset of: sgld,sgnht")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: tiny sizes, short runs, few reps")
    p.add_argument("--threads-label", default="?",
                   help="value written to the CSV 'threads' column")
    p.add_argument("--reps", type=int, default=None,
                   help="timed repetitions (default 7; quick: 3)")
    p.add_argument("--min-time", type=float, default=None,
                   help="target seconds per timed call (default 0.3; quick: 0.02)")
    p.add_argument("--retry-budget", type=float, default=75.0,
                   help="max total seconds per process spent re-timing disturbed "
                   "rows (bounds the run time on a busy machine)")
    p.add_argument("--retries", type=int, default=5,
                   help="re-time a row up to this many times if other processes "
                   "were busy or the calls came out shorter than --min-time")
    p.add_argument("--retry-wait", type=float, default=5.0,
                   help="seconds to wait before re-timing a disturbed row")
    p.add_argument("--max-k", type=int, default=2000000,
                   help="upper bound on scan length K")
    p.add_argument("--step-size", type=float, default=1e-3)
    p.add_argument("--out", default=None, help="CSV file to append rows to")
    return p.parse_args(argv)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def write_rows(rows, out):
    if out is None:
        w = csv.writer(sys.stdout)
        w.writerow(HEADER)
        w.writerows(rows)
        sys.stdout.flush()
        return
    need_header = not os.path.exists(out) or os.path.getsize(out) == 0
    with open(out, "a", newline="") as f:
        w = csv.writer(f)
        if need_header:
            w.writerow(HEADER)
        w.writerows(rows)


def run_children(args):
    """--dtype both: one child process per dtype, same args otherwise."""
    base = [a for a in sys.argv[1:]]
    # strip any --dtype / --dtype=... from the argument list
    cleaned, skip = [], False
    for a in base:
        if skip:
            skip = False
            continue
        if a == "--dtype":
            skip = True
            continue
        if a.startswith("--dtype="):
            continue
        cleaned.append(a)
    for dt in ("f32", "f64"):
        cmd = [sys.executable, os.path.abspath(__file__), "--dtype", dt] + cleaned
        log("[blackjax_bench] spawning: " + " ".join(cmd))
        r = subprocess.run(cmd)
        if r.returncode != 0:
            sys.exit(r.returncode)


def bench(args):
    f64 = args.dtype == "f64"
    import jax
    if f64:
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import blackjax

    dtype = jnp.float64 if f64 else jnp.float32
    dims = ([int(x) for x in args.dims.split(",")] if args.dims
            else (QUICK_DIMS if args.quick else FULL_DIMS))
    samplers = [s.strip() for s in args.samplers.split(",") if s.strip()]
    reps = args.reps if args.reps is not None else (3 if args.quick else 7)
    min_time = args.min_time if args.min_time is not None else (0.02 if args.quick else 0.3)
    step_size = args.step_size

    log("[blackjax_bench] jax %s, jaxlib %s, blackjax %s, backend %s, devices %s"
        % (jax.__version__, jax.lib.__version__ if hasattr(jax.lib, "__version__")
           else __import__("jaxlib").__version__, blackjax.__version__,
           jax.default_backend(), jax.devices()))
    log("[blackjax_bench] dtype=%s threads_label=%s affinity=%s XLA_FLAGS=%r"
        % (args.dtype, args.threads_label, sorted(os.sched_getaffinity(0)),
           os.environ.get("XLA_FLAGS", "")))
    log("[blackjax_bench] loadavg at start: %s" % (os.getloadavg(),))

    # grad estimator: grad log p(theta) = -theta; the minibatch is ignored.
    def grad_estimator(position, minibatch):
        del minibatch
        return -position

    def make_run(sampler_name, k):
        alg = getattr(blackjax, sampler_name)(grad_estimator)

        def run(key, state):
            keys = jax.random.split(key, k)

            def body(st, sk):
                return alg.step(sk, st, None, step_size), None

            final, _ = jax.lax.scan(body, state, keys)
            return final

        return jax.jit(run)

    def make_state(sampler_name, d, key):
        pos = jax.random.normal(key, (d,), dtype=dtype)
        if sampler_name == "sgld":
            return blackjax.sgld(grad_estimator).init(pos)
        st = blackjax.sgnht(grad_estimator).init(pos, jax.random.fold_in(key, 1))
        # init() stores xi as a Python float; make it a typed scalar so the
        # scan carry has a stable dtype.
        return st._replace(xi=jnp.asarray(st.xi, dtype=dtype))

    def leaves_finite(state):
        return all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(state))

    def timed(fn, key, state):
        t0 = time.perf_counter()
        c0 = time.process_time()
        out = fn(key, state)
        jax.block_until_ready(out)
        return time.perf_counter() - t0, time.process_time() - c0, out

    clk = os.sysconf("SC_CLK_TCK")

    def busy_seconds():
        """Machine-wide busy CPU seconds (all processes), from /proc/stat."""
        try:
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:]]
            # user nice system idle iowait irq softirq steal ...
            return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / clk
        except (OSError, ValueError, IndexError):
            return float("nan")

    rows = []
    retry_spent = [0.0]  # seconds spent re-timing disturbed rows
    root = jax.random.key(0)
    for sampler_name in samplers:
        for d in dims:
            skey = jax.random.fold_in(root, d)
            state = make_state(sampler_name, d, skey)
            jax.block_until_ready(state)
            # provisional K for calibration
            k0 = 50 if args.quick else (200 if d <= 65536 else 8)
            k0 = min(k0, args.max_k)
            run0 = make_run(sampler_name, k0)
            tc = time.perf_counter()
            jax.block_until_ready(run0(jax.random.fold_in(skey, 100), state))  # compile
            compile_s = time.perf_counter() - tc
            t_cal, _, _ = timed(run0, jax.random.fold_in(skey, 101), state)
            k, run = k0, run0
            # grow K until one call takes >= min_time (K is static: recompile)
            for it in range(4):
                if t_cal >= 1.1 * min_time or k >= args.max_k:
                    break
                k = max(k + 1, min(args.max_k,
                                   int(math.ceil(1.3 * min_time * k / t_cal))))
                run = make_run(sampler_name, k)
                jax.block_until_ready(run(jax.random.fold_in(skey, 102 + it), state))
                t_cal, _, _ = timed(run, jax.random.fold_in(skey, 200 + it), state)
            # Timed reps. Retried (after a pause) if other processes were busy
            # during them, and re-run with a larger K if the median call came
            # out shorter than min_time (calibration noise).
            for attempt in range(args.retries + 1):
                times, cpu = [], []
                final = None
                b0 = busy_seconds()
                for r in range(reps):
                    t, c, final = timed(run, jax.random.fold_in(skey, 1000 + r), state)
                    times.append(t)
                    cpu.append(c)
                # CPU used by *other* processes during the timed reps, in cores
                foreign = (busy_seconds() - b0 - sum(cpu)) / sum(times)
                med = statistics.median(times)
                if attempt == args.retries:
                    break
                if foreign > FOREIGN_LIMIT:
                    if retry_spent[0] >= args.retry_budget:
                        log("[blackjax_bench] retry budget (%gs) used up"
                            % args.retry_budget)
                        break
                    retry_spent[0] += args.retry_wait + sum(times)
                    log("[blackjax_bench] %s %s d=%d: other processes used %.2f cores "
                        "during the timed reps; retrying in %gs"
                        % (sampler_name, args.dtype, d, foreign, args.retry_wait))
                    time.sleep(args.retry_wait)
                    continue
                if med < 0.9 * min_time and k < args.max_k:
                    k = max(k + 1, min(args.max_k,
                                       int(math.ceil(1.2 * min_time * k / med))))
                    run = make_run(sampler_name, k)
                    jax.block_until_ready(run(jax.random.fold_in(skey, 300 + attempt),
                                              state))
                    continue
                break
            if not leaves_finite(final):
                raise RuntimeError("non-finite final state: %s d=%d %s"
                                   % (sampler_name, d, args.dtype))
            ns_step = med / k * 1e9
            ns_step_dim = ns_step / d
            pos = final if sampler_name == "sgld" else final.position
            log("[blackjax_bench] %-5s %s d=%-8d K=%-6d reps=%d median=%.4fs "
                "min=%.4fs max=%.4fs  %.1f ns/step  %.4f ns/(step*dim)  "
                "cpu/wall=%.2f  other_procs=%.2f cores  compile=%.2fs  "
                "final: mean=%.3g var=%.3g"
                % (sampler_name, args.dtype, d, k, reps, med, min(times), max(times),
                   ns_step, ns_step_dim, sum(cpu) / sum(times), foreign, compile_s,
                   float(jnp.mean(pos)), float(jnp.var(pos))))
            if foreign > FOREIGN_LIMIT:
                log("[blackjax_bench] WARNING: other processes used %.2f cores during "
                    "the timed reps; this row is likely disturbed" % foreign)
            rows.append(["blackjax", sampler_name, args.dtype, args.threads_label, d,
                         "%.1f" % ns_step, "%.4f" % ns_step_dim])
    write_rows(rows, args.out)


def main():
    args = parse_args()
    if args.dtype == "both":
        run_children(args)
    else:
        bench(args)


if __name__ == "__main__":
    main()
