"""The same seed gives the same draws as the Rust API: every sampler's chains, bit for bit,
against `examples/python_reference.rs` built with the same instruction-set dispatch."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import sgmcmc

ROOT = pathlib.Path(__file__).resolve().parents[2]
MEAN, VARIANCE, SEED = np.array([1.0, -0.5, 2.0]), np.array([1.0, 0.25, 4.0]), 7
STEP_SIZES = {"sgld": 0.05, "psgld": 0.05, "sghmc": 0.1, "sgnht": 0.1, "msgnht": 0.1,
              "sgmgt": 0.1, "sgmgt_d": 0.1, "hmc": 0.2, "sgnphmc": 0.1}


@pytest.fixture(scope="module")
def reference():
    """{(sampler, chain): (25, 3) array of the Rust chain}."""
    cmd = ["cargo", "run", "--release", "-q", "--features", "std", "--example",
           "python_reference"]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True,
                         env={**os.environ, "CARGO_TERM_COLOR": "never"}).stdout
    chains = {}
    for line in out.splitlines():
        name, chain, step, *bits = line.split()
        theta = [np.frombuffer(int(b, 16).to_bytes(8, "little"), dtype="<f8")[0] for b in bits]
        chains.setdefault((name, int(chain)), []).append(theta)
    return {k: np.array(v) for k, v in chains.items()}


@pytest.mark.parametrize("sampler", sorted(STEP_SIZES))
def test_same_draws_as_the_rust_api(reference, sampler):
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    fit = sgmcmc.sample(model, sampler, step_size=STEP_SIZES[sampler], chains=2, draws=25,
                        seed=SEED, init=[0.5, 0.5, 0.5], progress=False)
    for chain in range(2):
        want = reference[(sampler, chain)]
        assert want.shape == (25, 3)
        # Bit for bit: the same arithmetic on the same generator stream.
        np.testing.assert_array_equal(fit.draws[chain].view(np.uint64), want.view(np.uint64))


def test_a_different_seed_gives_different_draws():
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    a = sgmcmc.sample(model, "sgld", step_size=0.05, chains=1, draws=5, seed=1, progress=False)
    b = sgmcmc.sample(model, "sgld", step_size=0.05, chains=1, draws=5, seed=2, progress=False)
    c = sgmcmc.sample(model, "sgld", step_size=0.05, chains=1, draws=5, seed=1, progress=False)
    assert not np.array_equal(a.draws, b.draws)
    np.testing.assert_array_equal(a.draws, c.draws)


def test_schedules_draw_the_rust_chains(reference):
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    kw = dict(chains=2, draws=25, seed=SEED, init=[0.5, 0.5, 0.5], progress=False)
    poly = sgmcmc.sample(model, "sgld", schedule=sgmcmc.polynomial(0.1, 10.0, 0.55), **kw)
    cyc = sgmcmc.sample(model, "sghmc", step_size=0.1, schedule=sgmcmc.cyclical(0.1, 10, 0.5),
                        **kw)
    for chain in range(2):
        for fit, name in ((poly, "sgld_polynomial"), (cyc, "sghmc_cyclical")):
            np.testing.assert_array_equal(fit.draws[chain].view(np.uint64),
                                          reference[(name, chain)].view(np.uint64))
    # The cyclical run's exploration stages (the first half of each 10-step cycle).
    np.testing.assert_array_equal(cyc.sample_stats["sampling_stage"][0][:10],
                                  [0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    np.testing.assert_allclose(poly.sample_stats["step_size"][0],
                               0.1 * (10.0 + np.arange(25)) ** -0.55, rtol=1e-12)


def test_mcem_draws_the_rust_chain(reference):
    fit = sgmcmc.sample(sgmcmc.Gaussian(MEAN, VARIANCE), "sghmc", step_size=0.1, chains=2,
                        draws=25, seed=SEED, init=[0.5, 0.5, 0.5], mcem=dict(e_steps=5),
                        progress=False)
    for chain in range(2):
        np.testing.assert_array_equal(fit.draws[chain].view(np.uint64),
                                      reference[("sghmc_mcem", chain)].view(np.uint64))
