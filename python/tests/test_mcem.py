"""The MCEM wrappers (Roychowdhury & Parthasarathy 2017) from Python: the chains keep the
target's moments while the M-steps move the diagonal M⁻¹, and they are the Rust API's chains
(tests/test_rust_draws.py)."""

import numpy as np
import pytest

import sgmcmc
from conftest import batch_means_se

MEAN, VARIANCE = np.array([1.0, -0.5, 2.0]), np.array([1.0, 0.25, 4.0])


@pytest.mark.parametrize("sampler, kw", [
    ("hmc", dict(step_size=0.2, leapfrog_steps=5)),
    ("sghmc", dict(step_size=0.05)),
    ("sgnht", dict(step_size=0.05)),
    ("sgnphmc", dict(step_size=0.05)),
])
def test_mcem_learns_the_variances_and_keeps_the_moments(sampler, kw):
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    fit = sgmcmc.sample(model, sampler, chains=4, draws=20_000, warmup=200, seed=2, init=MEAN,
                        mcem=dict(e_steps=5), progress=False, **kw)
    # At stationarity p ~ N(0, M) for the current M, so every M is a fixed point of eq. 5 in
    # expectation (docs/mcem.md): M⁻¹ wanders about its start I rather than tending to Σ. The
    # M-steps must have happened and left a valid mass.
    print(sampler, "M⁻¹", np.round(fit.inverse_mass, 3), "M-steps", fit.m_steps)
    assert fit.inverse_mass.shape == (4, 3)
    assert np.all(np.isfinite(fit.inverse_mass)) and np.all(fit.inverse_mass > 0)
    assert min(fit.m_steps) > 0
    x = fit.draws
    z_mean = (x.mean(axis=(0, 1)) - MEAN) / batch_means_se(x)
    sq = (x - MEAN) ** 2
    z_var = (sq.mean(axis=(0, 1)) - VARIANCE) / batch_means_se(sq)
    print(sampler, "z(mean)", np.round(z_mean, 2), "z(var)", np.round(z_var, 2))
    assert np.all(np.abs(z_mean) < 5) and np.all(np.abs(z_var) < 5)


def test_mcem_refusals():
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(model, "sgld", step_size=0.1, draws=5, mcem=True, progress=False)
    assert e.value.param == "mcem"
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(model, "sghmc", step_size=0.1, draws=5, mcem=dict(shrinkage=2.0),
                      progress=False)
    assert e.value.param == "shrinkage λ"
    with pytest.raises(TypeError, match="mcem takes no setting"):
        sgmcmc.sample(model, "sghmc", step_size=0.1, draws=5, mcem=dict(window=3),
                      progress=False)


COV = np.array([[1.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])


@pytest.mark.parametrize("sampler, kw", [
    ("hmc", dict(step_size=0.2, leapfrog_steps=5)),
    ("sghmc", dict(step_size=0.05)),
    ("sgnht", dict(step_size=0.05)),
    ("sgnphmc", dict(step_size=0.05)),
])
def test_dense_mcem_keeps_the_moments_of_a_correlated_target(sampler, kw):
    """mcem=dict(shape="dense"): the wrappers learn a full M⁻¹ (the Rust API's
    MassBuffer::dense_with_eigen), and the chains keep N(μ, Σ)'s means, variances and
    covariances within 5 batch-means SE."""
    model = sgmcmc.Gaussian(MEAN, COV)
    fit = sgmcmc.sample(model, sampler, chains=4, draws=20_000, warmup=200, seed=2, init=MEAN,
                        mcem=dict(e_steps=5, shape="dense"), progress=False, **kw)
    m = fit.inverse_mass
    assert m.shape == (4, 3, 3)
    assert np.all(np.isfinite(m)) and np.allclose(m, np.swapaxes(m, 1, 2))
    assert np.all(np.linalg.eigvalsh(m) > 0)
    # The M-steps happened and moved the off-diagonal entries away from the identity's zeros.
    assert min(fit.m_steps) > 0 and np.abs(m[:, 0, 1]).max() > 0
    x = fit.draws - MEAN
    pairs = [(i, j) for i in range(3) for j in range(i, 3)]
    products = np.stack([x[..., i] * x[..., j] for i, j in pairs], axis=-1)
    z_mean = x.mean(axis=(0, 1)) / batch_means_se(x)
    z_cov = (products.mean(axis=(0, 1)) - np.array([COV[i, j] for i, j in pairs])) \
        / batch_means_se(products)
    print(sampler, "z(mean)", np.round(z_mean, 2), "z(cov)", np.round(z_cov, 2))
    assert np.all(np.abs(z_mean) < 5) and np.all(np.abs(z_cov) < 5)


def test_mcem_shape_is_checked():
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(sgmcmc.Gaussian(MEAN, VARIANCE), "sghmc", step_size=0.1, draws=5,
                      mcem=dict(shape="full"), progress=False)
    assert e.value.param == "shape"
