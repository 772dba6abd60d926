#!/usr/bin/env python3
"""SGNHT through the shared library (libsgmcmc_ffi.so) from Python's ctypes, standard library only.

    python3 ffi/tests/ctypes_sgnht.py path/to/libsgmcmc_ffi.so

Loads the cdylib, declares `sgmcmc_sgnht_f64` and the gradient callback type
`sgmcmc_gradient_f64` as in include/sgmcmc.h, and samples N(mu, diag(sd^2)) in d = 3 with a
Python gradient at a fixed seed. Checks, each coordinate: the stationary mean and variance
within 5 batch-means standard errors of the truth; one error path (a negative step size returns
SGMCMC_ERR_BAD_STEP_SIZE with theta, p, xi and the generator unchanged and the gradient never
called). Prints the figures and the time per step through the Python callback (informative; no
pass/fail on time). Exits 1 on any failure. ffi/tests/ctypes.sh builds the library and runs
this; .ci/run runs that script.
"""

import ctypes
import math
import sys
import time

SGMCMC_OK = 0
SGMCMC_ERR_BAD_STEP_SIZE = -10
SGMCMC_SPLITTING = 1

D = 3
MU = (1.0, -2.0, 0.5)
SD = (1.0, 0.5, 2.0)
PREC = tuple(1.0 / (s * s) for s in SD)

H = 0.05  # step size
TEMPERATURE = 1.0  # T = 1: the posterior itself
DIFFUSION = 1.0  # A; the thermostat starts at xi = A (Ding et al.)
SEED = 20240535
BURN_IN = 5_000  # steps
THIN = 5  # steps per call; theta is recorded after each call
RECORDS = 60_000  # recorded draws: 300 000 steps
BATCHES = 50
TIMING_STEPS = 50_000  # one call of this many steps, for the time per step


class Rng(ctypes.Structure):
    """sgmcmc_rng: xoroshiro128++, two uint64_t."""

    _fields_ = [("s0", ctypes.c_uint64), ("s1", ctypes.c_uint64)]


class Stats(ctypes.Structure):
    """sgmcmc_stats."""

    _fields_ = [
        ("kinetic_temperature", ctypes.c_double),
        ("thermostat", ctypes.c_double),
        ("steps", ctypes.c_uint64),
    ]


DoublePtr = ctypes.POINTER(ctypes.c_double)
# typedef void (*sgmcmc_gradient_f64)(const double* theta, double* grad, size_t n, void* ctx);
GradientF64 = ctypes.CFUNCTYPE(None, DoublePtr, DoublePtr, ctypes.c_size_t, ctypes.c_void_p)


def load(path):
    lib = ctypes.CDLL(path)
    lib.sgmcmc_rng_seed.argtypes = [ctypes.POINTER(Rng), ctypes.c_uint64]
    lib.sgmcmc_rng_seed.restype = None
    # int32_t sgmcmc_sgnht_f64(double h, double temperature, double diffusion,
    #     int32_t integrator, sgmcmc_gradient_f64 grad_fn, void* ctx, double* theta, double* p,
    #     double* xi, double* work, size_t n, uint64_t steps, sgmcmc_rng* rng,
    #     sgmcmc_stats* stats);
    lib.sgmcmc_sgnht_f64.argtypes = [
        ctypes.c_double,
        ctypes.c_double,
        ctypes.c_double,
        ctypes.c_int32,
        GradientF64,
        ctypes.c_void_p,
        DoublePtr,  # theta (n)
        DoublePtr,  # p (n)
        DoublePtr,  # xi (ONE value: SGNHT's scalar thermostat)
        DoublePtr,  # work (2n)
        ctypes.c_size_t,
        ctypes.c_uint64,
        ctypes.POINTER(Rng),
        ctypes.POINTER(Stats),
    ]
    lib.sgmcmc_sgnht_f64.restype = ctypes.c_int32
    return lib


calls = 0


def gradient(theta, grad, n, ctx):
    """dU/dtheta of U = sum (theta_i - mu_i)^2 / (2 sd_i^2)."""
    global calls
    calls += 1
    for i in range(n):
        grad[i] = (theta[i] - MU[i]) * PREC[i]


# One object for the whole run: ctypes must keep the trampoline alive while C may call it.
GRADIENT = GradientF64(gradient)


def batch_means(values, batches):
    """Mean and batch-means standard error of a (correlated) series."""
    length = len(values) // batches
    means = [sum(values[b * length : (b + 1) * length]) / length for b in range(batches)]
    mean = sum(means) / batches
    var = sum((m - mean) ** 2 for m in means) / (batches - 1)
    # Lag-1 autocorrelation of the batch means: near 0 when the batches are long enough to be
    # nearly independent (the premise of the standard error), printed as a sanity check.
    lag1 = sum((means[b] - mean) * (means[b + 1] - mean) for b in range(batches - 1))
    lag1 /= max(var * (batches - 1), 1e-300)
    return mean, math.sqrt(var / batches), lag1


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} path/to/libsgmcmc_ffi.so", file=sys.stderr)
        return 2
    lib = load(sys.argv[1])
    failures = []

    theta = (ctypes.c_double * D)(*MU)
    p = (ctypes.c_double * D)()
    xi = (ctypes.c_double * 1)(DIFFUSION)
    work = (ctypes.c_double * (2 * D))()
    rng = Rng()
    stats = Stats()
    lib.sgmcmc_rng_seed(ctypes.byref(rng), SEED)
    sgnht = lib.sgmcmc_sgnht_f64

    def run(steps, h=H):
        return sgnht(h, TEMPERATURE, DIFFUSION, SGMCMC_SPLITTING, GRADIENT, None, theta, p, xi,
                     work, D, steps, ctypes.byref(rng), ctypes.byref(stats))

    rc = run(BURN_IN)
    if rc != SGMCMC_OK:
        print(f"FAIL: burn-in returned {rc}")
        return 1

    # The chain: RECORDS calls of THIN steps, theta recorded after each call.
    draws = [[] for _ in range(D)]
    kinetic = thermostat = 0.0
    calls_before = calls
    t0 = time.perf_counter()
    for _ in range(RECORDS):
        rc = run(THIN)
        if rc != SGMCMC_OK:
            print(f"FAIL: sgmcmc_sgnht_f64 returned {rc} after {stats.steps} steps")
            return 1
        for i in range(D):
            draws[i].append(theta[i])
        kinetic += stats.kinetic_temperature
        thermostat += stats.thermostat
    loop_seconds = time.perf_counter() - t0
    steps = RECORDS * THIN
    if calls - calls_before != steps:
        failures.append(f"the gradient ran {calls - calls_before} times in {steps} steps")

    print(f"SGNHT f64 (splitting) via ctypes: d = {D}, h = {H}, T = {TEMPERATURE}, A = {DIFFUSION},"
          f" seed {SEED}, {BURN_IN} burn-in + {steps} steps, theta every {THIN} steps"
          f" ({RECORDS} draws, {BATCHES} batches)")
    print(f"mean kinetic temperature {kinetic / RECORDS:.4f}, mean thermostat xi"
          f" {thermostat / RECORDS:.4f} (both ~ 1 at equilibrium)")
    print("coord  mean: true  estimate  SE      z     | variance: true  estimate  SE      z     "
          "| lag-1 r of batch means (mean, var)")
    for i in range(D):
        x = draws[i]
        mean, se_mean, r_mean = batch_means(x, BATCHES)
        centred = [(v - mean) ** 2 for v in x]
        var, se_var, r_var = batch_means(centred, BATCHES)
        true_var = SD[i] ** 2
        z_mean = (mean - MU[i]) / se_mean
        z_var = (var - true_var) / se_var
        print(f"{i:>5}  {MU[i]:+10.4f}  {mean:+8.4f}  {se_mean:.4f}  {z_mean:+5.2f} |"
              f" {true_var:13.4f}  {var:8.4f}  {se_var:.4f}  {z_var:+5.2f} |"
              f" {r_mean:+.2f}, {r_var:+.2f}")
        # Tolerance: 5 batch-means standard errors. The draws are split into B = 50 batches of
        # 1200 draws (6000 steps, i.e. 300 time units; the slowest coordinate, sd = 2, has an
        # integrated autocorrelation time of order 2A sd^2 = 8 time units), so the batch means
        # are nearly independent and nearly normal with the variance sigma_B^2 of one batch's
        # mean; SE = s_B / sqrt(B) estimates the standard deviation of their average, the
        # estimate. If the chain's stationary mean (variance) is the target's, (estimate -
        # truth) / SE follows Student's t with B - 1 = 49 degrees of freedom: |t| > 5 has
        # probability ~1e-5 per check, ~6e-5 for all six, so a failure means a wrong stationary
        # law, not bad luck (and the seed is fixed: the run is deterministic). The variance's
        # series (theta - mean)^2 uses the overall mean; that shifts it by O(SE_mean^2), far
        # below its SE. The splitting integrator's discretisation bias is O(h^2): about
        # (h / sd)^2 / 4 relative in the variance, 0.25 % for sd = 0.5 at h = 0.05, well under
        # one SE at this run length. The checks that SE < 0.1 sd (mean) and < 0.1 sd^2
        # (variance) make sure a chain that is merely noisy cannot pass.
        if not abs(mean - MU[i]) < 5.0 * se_mean:
            failures.append(f"coordinate {i}: mean {mean:.4f} vs {MU[i]} (> 5 SE, SE {se_mean:.4f})")
        if not abs(var - true_var) < 5.0 * se_var:
            failures.append(f"coordinate {i}: variance {var:.4f} vs {true_var} (> 5 SE, SE {se_var:.4f})")
        if not (se_mean < 0.1 * SD[i] and se_var < 0.1 * true_var):
            failures.append(f"coordinate {i}: standard errors too large ({se_mean:.4f}, {se_var:.4f})")

    # Time per step through the Python callback: one call of many steps (the C loop calls the
    # Python gradient once per step), then the recording loop above (one ctypes call per THIN
    # steps on top). Informative only.
    t0 = time.perf_counter()
    rc = run(TIMING_STEPS)
    one_call = time.perf_counter() - t0
    if rc != SGMCMC_OK:
        failures.append(f"timing run returned {rc}")
    print(f"time per step through the Python callback: {one_call / TIMING_STEPS * 1e6:.2f} us"
          f" (one call of {TIMING_STEPS} steps); {loop_seconds / steps * 1e6:.2f} us in the"
          f" recording loop (a ctypes call per {THIN} steps, theta read after each)")

    # Error path: a negative step size returns SGMCMC_ERR_BAD_STEP_SIZE (-10) before the state,
    # the generator or the callback is touched.
    before = (list(theta), list(p), list(xi), (rng.s0, rng.s1))
    calls_before = calls
    rc = run(5, h=-H)
    after = (list(theta), list(p), list(xi), (rng.s0, rng.s1))
    print(f"h = {-H}: returned {rc} (SGMCMC_ERR_BAD_STEP_SIZE = {SGMCMC_ERR_BAD_STEP_SIZE}),"
          f" state and generator {'unchanged' if after == before else 'CHANGED'},"
          f" gradient calls {calls - calls_before}, stats.steps {stats.steps}")
    if rc != SGMCMC_ERR_BAD_STEP_SIZE:
        failures.append(f"negative step size returned {rc}, not {SGMCMC_ERR_BAD_STEP_SIZE}")
    if after != before:
        failures.append("negative step size changed theta, p, xi or the generator")
    if calls != calls_before or stats.steps != 0:
        failures.append("negative step size called the gradient or reported steps")

    if failures:
        for f in failures:
            print("FAIL:", f)
        return 1
    print("ctypes SGNHT: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
