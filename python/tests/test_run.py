"""The run itself: Ctrl-C keeps the draws so far, the progress bar, thinning and warm-up, the
GIL released while chains run."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import sgmcmc

G = sgmcmc.Gaussian(np.zeros(3), np.ones(3))


def test_ctrl_c_stops_cleanly_and_keeps_the_draws():
    # A run of 2 × 2·10⁷ steps (about 20 s), interrupted by SIGINT after half a second. Python's
    # own SIGINT handler is installed for the test: a shell that starts pytest in the background
    # ignores SIGINT, and the run would then go to its end (and hold 1 GB of draws).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        timer.start()
        t0 = time.perf_counter()
        with pytest.warns(RuntimeWarning, match="interrupted"):
            fit = sgmcmc.sample(G, "sgnht", step_size=0.1, chains=2, draws=20_000_000,
                                progress=False)
        elapsed = time.perf_counter() - t0
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert elapsed < 10
    assert fit.interrupted
    kept = fit.draws.shape[1]
    assert fit.draws.shape == (2, kept, 3) and 0 < kept < 20_000_000
    assert np.all(np.isfinite(fit.draws))
    assert fit.sample_stats["step_size"].shape == (2, kept)


def test_progress_is_reported():
    seen = []
    sgmcmc._sgmcmc.run("sgld", {"step_size": 0.1}, G, np.zeros((2, 3)), 10, 1000, 1, 0,
                       lambda done, total: seen.append((done, total)))
    assert seen[-1] == (2 * 1010, 2 * 1010)


def test_thinning_and_warmup_keep_the_right_steps():
    full = sgmcmc.sample(G, "sghmc", step_size=0.1, chains=1, draws=60, seed=4, progress=False)
    thinned = sgmcmc.sample(G, "sghmc", step_size=0.1, chains=1, draws=10, warmup=20, thin=4,
                            seed=4, progress=False)
    # Steps 1..60; warm-up 20, then every 4th: steps 24, 28, ..., 60.
    np.testing.assert_array_equal(thinned.draws[0], full.draws[0][23::4])


def test_chains_run_without_the_gil():
    # While chains of a built-in model run, another Python thread keeps running.
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    sgmcmc.sample(G, "sgnht", step_size=0.1, chains=2, draws=3_000_000, progress=False)
    stop.set()
    t.join()
    assert len(ticks) > 20


def test_same_seed_same_draws_across_calls_and_chain_counts():
    a = sgmcmc.sample(G, "sgnht", step_size=0.1, chains=4, draws=100, seed=8, progress=False)
    b = sgmcmc.sample(G, "sgnht", step_size=0.1, chains=2, draws=100, seed=8, progress=False)
    np.testing.assert_array_equal(a.draws[:2], b.draws)
