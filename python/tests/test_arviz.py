"""ArviZ output: InferenceData with the posterior and the sample statistics, and diagnostics
that agree with the chains."""

import numpy as np
import pytest

import sgmcmc

az = pytest.importorskip("arviz")


def test_inference_data():
    model = sgmcmc.Gaussian(np.array([1.0, -1.0]), np.array([1.0, 4.0]))
    idata = sgmcmc.sample(model, "sgnht", step_size=0.1, chains=4, draws=2000, thin=5, seed=1,
                          progress=False, return_inferencedata=True)
    assert idata.posterior["theta"].shape == (4, 2000, 2)
    assert set(idata.sample_stats.data_vars) == {"step_size", "kinetic_temperature",
                                                 "thermostat"}
    assert idata.posterior.attrs["sampler"] == "sgnht"
    summary = az.summary(idata)
    assert np.all(summary["r_hat"] < 1.05)
    assert np.all(summary["ess_bulk"] > 100)
    # Named parameters, and HMC's acceptance rate.
    fit = sgmcmc.sample(model, "hmc", step_size=0.3, chains=2, draws=200, progress=False)
    idata = fit.to_inference_data(names=["a", "b"])
    assert set(idata.posterior.data_vars) == {"a", "b"}
    assert 0.5 < float(idata.sample_stats["acceptance_rate"].mean()) <= 1.0
