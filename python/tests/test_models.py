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


def sigmoid_sweep():
    """σ(z) as the built-in logistic model computes it: the second component of ∇U at θ = (z, 0)
    for the one example x = (1, 1), y = 0 is (σ(z) − 0)·1 + 0/σ₀², exactly σ(z)."""
    model = sgmcmc.LogisticRegression(np.array([[1.0, 1.0]]), np.array([0.0]))
    zs = np.concatenate([np.linspace(-700.0, 40.0, 20_001), [0.0, -0.0, 1e-300, -1e-300]])
    return zs, np.array([model.gradient(np.array([z, 0.0]))[1] for z in zs])


def test_logistic_sigmoid_is_accurate_to_a_few_ulp():
    zs, got = sigmoid_sweep()
    z = zs.astype(np.longdouble)  # x87 extended: 64-bit mantissa, 2⁻¹¹ of a double's ulp
    ref = np.where(z >= 0, 1 / (1 + np.exp(-z)), np.exp(z) / (1 + np.exp(z)))
    rel = np.abs((got.astype(np.longdouble) - ref) / ref).astype(float)
    # exp to within about one ulp (Taylor remainder < 5e-18 plus the Horner roundings), then
    # 1 + e and the division round once each: at most 4 ulp = 4 · 2⁻⁵² relative.
    assert rel.max() <= 4 * 2.0**-52, (zs[rel.argmax()], rel.max())
    # Below −708 the exponential is clamped at e⁻⁷⁰⁸ ≈ 3.3e-308 (still normal): finite, ≥ 0.
    model = sgmcmc.LogisticRegression(np.array([[1.0, 1.0]]), np.array([0.0]))
    for z in (-708.0, -745.0, -1e4, -np.inf):
        s = model.gradient(np.array([z, 0.0]))[1]
        assert 0.0 <= s <= 3.4e-308, (z, s)


def test_logistic_gradient_does_not_depend_on_the_instruction_set():
    """The AVX2 copy of the logistic kernel gives the baseline copy's bits (no fused
    multiply-adds, lane sums written out), on the sweep and on a minibatch of a 9-feature model
    whose 37 rows leave a remainder in every block."""
    big = np.random.default_rng(5).normal(size=(300, 9))
    labels = (np.random.default_rng(6).random(300) < 0.5).astype(float)
    theta = np.linspace(-2.0, 2.0, 9)

    def run():
        m = sgmcmc.LogisticRegression(big, labels, batch_size=37, seed=4)
        return sigmoid_sweep()[1], np.array([m.gradient(theta) for _ in range(50)])

    widest = sgmcmc._sgmcmc.sgmcmc_dispatch_level()
    try:
        sgmcmc._sgmcmc.set_max_isa("Baseline")
        assert sgmcmc._sgmcmc.sgmcmc_dispatch_level() == "Baseline"
        baseline = run()
    finally:
        sgmcmc._sgmcmc.set_max_isa("Avx512")
    assert sgmcmc._sgmcmc.sgmcmc_dispatch_level() == widest
    wide = run()
    np.testing.assert_array_equal(baseline[0], wide[0])
    np.testing.assert_array_equal(baseline[1], wide[1])


def test_logistic_full_gradient_matches_the_closed_form():
    """X^T(σ(Xθ) − y) + θ/σ₀² by NumPy, with |xᵢᵀθ| up to about 60, to 1e-12 of the sum of the
    terms' magnitudes (NumPy sums in another order; each term is within a few ulp)."""
    big = np.random.default_rng(7).normal(size=(500, 9)) * 3
    labels = (np.random.default_rng(8).random(500) < 0.3).astype(float)
    theta = np.linspace(-3.0, 3.0, 9)
    z = big @ theta
    assert np.abs(z).max() > 40
    s = 1 / (1 + np.exp(-z))
    ref = big.T @ (s - labels) + theta / 10.0
    scale = np.abs(big).T @ np.abs(s - labels) + np.abs(theta) / 10.0
    got = sgmcmc.LogisticRegression(big, labels).gradient(theta)
    assert np.all(np.abs(got - ref) <= 1e-12 * scale)
