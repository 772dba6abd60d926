"""The built-in models: each gradient is the derivative of its potential, minibatch gradients
(with and without replacement) are unbiased, and the per-example terms are the documented ones."""

import numpy as np
import pytest

import sgmcmc

rng = np.random.default_rng(1)
X = rng.normal(size=(40, 3))
Y01 = (rng.random(40) < 0.4).astype(float)
YR = X @ np.array([0.5, -1.0, 2.0]) + rng.normal(size=40)
THETA = np.array([0.3, -0.7, 0.2])

MODELS = {
    "logistic": lambda **kw: sgmcmc.LogisticRegression(X, Y01, **kw),
    "linear": lambda **kw: sgmcmc.LinearRegression(X, YR, noise_variance=0.5, **kw),
    "gaussian_mean": lambda **kw: sgmcmc.GaussianMean(X, noise_variance=2.0, **kw),
}


def reference_energy(name, theta):
    prior = 0.5 * theta @ theta / 10.0
    if name == "logistic":
        z = X @ theta
        return prior + np.sum(np.logaddexp(0, z) - Y01 * z)
    if name == "linear":
        return prior + np.sum((X @ theta - YR) ** 2) / (2 * 0.5)
    return prior + np.sum((theta - X) ** 2) / (2 * 2.0)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_full_gradient_is_the_derivative_of_the_potential(name):
    model = MODELS[name]()
    assert abs(model.energy(THETA) - reference_energy(name, THETA)) < 1e-9
    g = model.gradient(THETA)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1e-6
        fd = (model.energy(THETA + e) - model.energy(THETA - e)) / 2e-6
        # Central differences: O(ε²) truncation and ~1e-16·U/ε rounding, both below 1e-6 here.
        assert abs(fd - g[k]) < 1e-6


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("replace", [False, True])
def test_minibatch_gradients_are_unbiased(name, replace):
    full = MODELS[name]().gradient(THETA)
    model = MODELS[name](batch_size=5, replace=replace, seed=3)
    draws = np.array([model.gradient(THETA) for _ in range(20_000)])
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    # Unbiased: the mean of 20 000 independent minibatch estimates is within 5 SE of ∇U.
    assert np.all(np.abs(draws.mean(axis=0) - full) < 5 * se)
    # And noisy: a minibatch of 5 of 40 rows is not the full gradient.
    assert np.all(draws.std(axis=0) > 0)


def test_without_replacement_a_batch_of_all_rows_is_exact():
    full = MODELS["logistic"]().gradient(THETA)
    model = MODELS["logistic"](batch_size=40, replace=False)
    np.testing.assert_allclose(model.gradient(THETA), full, rtol=1e-12)
