"""Stationary moments of every sampler on a Gaussian, within 5 batch-means standard errors, as
the Rust crate's tests check them (tests/temperature.rs, tests/stationary.rs)."""

import numpy as np
import pytest

import sgmcmc
from conftest import batch_means_se

MEAN, VARIANCE = np.array([1.0, -0.5, 2.0]), np.array([1.0, 0.25, 4.0])

# (settings, draws, thin). The step sizes keep each integrator's O(h) or O(h²) bias on the
# variances below a fifth of the tolerance: SGLD's Euler chain has the stationary variance
# σ²/(1 − hσ⁻²/2), a relative bias of hσ⁻²/2 = 1 % for the precision 4 at h = 0.005.
CASES = {
    "sgld": (dict(step_size=0.005), 200_000, 4),
    # pSGLD with α = 0, where G is a function of θ alone and Γ is its exact correction (the
    # Rust test's case, tests/psgld.rs); the Gaussian's Hessian diagonal is the precision.
    "psgld": (dict(step_size=0.004, decay=0.0, offset=1.0, correction=True), 400_000, 4),
    "sghmc": (dict(step_size=0.05), 200_000, 2),
    "sghmc_euler": (dict(step_size=0.02, integrator="euler"), 200_000, 4),
    "sgnht": (dict(step_size=0.05), 200_000, 2),
    "sgnht_euler": (dict(step_size=0.02, integrator="euler"), 200_000, 4),
    "msgnht": (dict(step_size=0.05), 200_000, 2),
    "sgmgt": (dict(step_size=0.05), 200_000, 2),
    "sgmgt_d": (dict(step_size=0.05), 200_000, 2),
    "hmc": (dict(step_size=0.2, leapfrog_steps=10), 40_000, 1),
    "sgnphmc": (dict(step_size=0.05), 80_000, 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_stationary_moments(case):
    settings, draws, thin = CASES[case]
    sampler = case.removesuffix("_euler")
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    fit = sgmcmc.sample(model, sampler, chains=4, draws=draws, thin=thin, warmup=1000, seed=3,
                        init=MEAN, progress=False, **settings)
    x = fit.draws
    mean = x.mean(axis=(0, 1))
    se_mean = batch_means_se(x)
    sq = (x - MEAN) ** 2
    var = sq.mean(axis=(0, 1))
    se_var = batch_means_se(sq)
    z_mean = (mean - MEAN) / se_mean
    z_var = (var - VARIANCE) / se_var
    print(case, "z(mean)", np.round(z_mean, 2), "z(var)", np.round(z_var, 2))
    # 5 SE, the Rust tests' tolerance: a false alarm has probability < 1e-6 per coordinate.
    assert np.all(np.abs(z_mean) < 5), (mean, se_mean)
    assert np.all(np.abs(z_var) < 5), (var, se_var)
    # The runs must be long enough for 5 SE to resolve a 15 % error in every variance.
    assert np.all(se_var < 0.03 * VARIANCE), se_var
