"""Checkpoint and resume: a run continued from `fit.state` is bit for bit the run that never
stopped — positions, momenta, thermostats, generators, minibatch order, schedule clock."""

import numpy as np
import pytest

import sgmcmc

rng = np.random.default_rng(0)
X = np.hstack([np.ones((200, 1)), rng.normal(size=(200, 3))])
y = (rng.random(200) < 1 / (1 + np.exp(-X @ np.array([0.5, 1.0, -1.0, 0.0])))).astype(float)


@pytest.mark.parametrize("sampler, kw", [
    ("sgld", dict(schedule=sgmcmc.polynomial(0.01, 10.0, 0.55))),
    ("psgld", dict(step_size=0.001)),
    ("sghmc", dict(step_size=0.01, schedule=sgmcmc.cyclical(0.01, 30, 0.5))),
    ("sgnht", dict(step_size=0.01)),
    ("msgnht", dict(step_size=0.01, integrator="euler")),
    ("sgmgt", dict(step_size=0.01, resample_momentum_steps=7, resample_thermostat_steps=11)),
    ("sgmgt_d", dict(step_size=0.01)),
    ("sgnphmc", dict(step_size=0.005)),
])
@pytest.mark.parametrize("replace", [False, True])
def test_resumed_chains_continue_exactly(sampler, kw, replace):
    model = sgmcmc.LogisticRegression(X, y, batch_size=16, replace=replace)
    common = dict(chains=2, seed=3, progress=False, **kw)
    whole = sgmcmc.sample(model, sampler, draws=120, **common)
    first = sgmcmc.sample(model, sampler, draws=50, **common)
    rest = sgmcmc.sample(model, sampler, draws=70, resume=first.state, **common)
    np.testing.assert_array_equal(np.concatenate([first.draws, rest.draws], axis=1), whole.draws)
    assert first.state.steps == [50, 50] and rest.state.steps == [120, 120]


def test_hmc_and_python_gradients_resume():
    full = sgmcmc.LogisticRegression(X, y)
    for model in (full, sgmcmc.PythonModel(full.gradient, dim=4, energy=full.energy)):
        whole = sgmcmc.sample(model, "hmc", step_size=0.05, chains=1, draws=40, progress=False)
        first = sgmcmc.sample(model, "hmc", step_size=0.05, chains=1, draws=15, progress=False)
        rest = sgmcmc.sample(model, "hmc", step_size=0.05, draws=25, resume=first.state,
                             progress=False)
        np.testing.assert_array_equal(np.concatenate([first.draws, rest.draws], axis=1),
                                      whole.draws)


def test_resume_refusals():
    model = sgmcmc.LogisticRegression(X, y, batch_size=16)
    fit = sgmcmc.sample(model, "sgnht", step_size=0.01, chains=2, draws=10, progress=False)
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(model, "sghmc", step_size=0.01, draws=10, resume=fit.state)
    assert e.value.param == "resume"
    cal = sgmcmc.sample(model, "sgnht", step_size=0.01, chains=2, draws=10, calibration=True,
                        progress=False)
    # A calibrated state resumes only with calibration, and a bare one only without.
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(model, "sgnht", step_size=0.01, draws=10, resume=cal.state)
    assert e.value.param == "resume"
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(model, "sgnht", step_size=0.01, draws=10, resume=fit.state,
                      calibration=True)
    assert e.value.param == "resume"
    other = sgmcmc.LogisticRegression(X[:, :3], y, batch_size=16)
    with pytest.raises(sgmcmc.LayoutError):
        sgmcmc.sample(other, "sgnht", step_size=0.01, draws=10, resume=fit.state)


def test_first_chain_offsets_the_generators():
    model = sgmcmc.Gaussian(np.zeros(2), np.ones(2))
    four = sgmcmc.sample(model, "sgnht", step_size=0.1, chains=4, draws=30, progress=False)
    last_two = sgmcmc.sample(model, "sgnht", step_size=0.1, chains=2, draws=30, first_chain=2,
                             progress=False)
    np.testing.assert_array_equal(four.draws[2:], last_two.draws)


@pytest.mark.parametrize("sampler, kw", [
    ("sgld", dict(schedule=sgmcmc.polynomial(0.01, 10.0, 0.55))),
    ("sgnht", dict(step_size=0.01)),
    ("sgmgt_d", dict(step_size=0.01)),
    ("sgnphmc", dict(step_size=0.005)),
])
@pytest.mark.parametrize("replace", [False, True])
def test_pickled_state_resumes_in_another_process_exactly(tmp_path, sampler, kw, replace):
    """The state goes through pickle into a fresh interpreter (no memory shared with this
    one), which continues the run: bit for bit the run that never stopped."""
    import pickle
    import subprocess
    import sys

    model = sgmcmc.LogisticRegression(X, y, batch_size=16, replace=replace)
    common = dict(chains=2, seed=3, progress=False, **kw)
    whole = sgmcmc.sample(model, sampler, draws=120, **common)
    first = sgmcmc.sample(model, sampler, draws=50, **common)
    (tmp_path / "state.pkl").write_bytes(pickle.dumps(first.state))
    np.savez(tmp_path / "data.npz", X=X, y=y)
    script = f"""
import pickle, numpy as np, sgmcmc
d = np.load({str(tmp_path / "data.npz")!r})
model = sgmcmc.LogisticRegression(d["X"], d["y"], batch_size=16, replace={replace})
state = pickle.loads(open({str(tmp_path / "state.pkl")!r}, "rb").read())
rest = sgmcmc.sample(model, {sampler!r}, draws=70, resume=state, **pickle.loads({pickle.dumps(common)!r}))
np.save({str(tmp_path / "rest.npy")!r}, rest.draws)
"""
    subprocess.run([sys.executable, "-c", script], check=True)
    rest = np.load(tmp_path / "rest.npy")
    np.testing.assert_array_equal(np.concatenate([first.draws, rest], axis=1), whole.draws)


def test_state_bytes_round_trip_and_refusals():
    model = sgmcmc.LogisticRegression(X, y, batch_size=16)
    fit = sgmcmc.sample(model, "sgnht", step_size=0.01, chains=2, draws=10, progress=False)
    data = fit.state.to_bytes()
    again = type(fit.state).from_bytes(data)
    assert again.to_bytes() == data and again.steps == [10, 10] and again.sampler == "sgnht"
    bad = {
        "truncated": data[:-1],
        "extended": data + b"\0",
        "magic": b"x" + data[1:],
        "version": data[:12] + (2).to_bytes(4, "little") + data[16:],
        "empty": b"",
    }
    for what, b in bad.items():
        with pytest.raises(sgmcmc.LayoutError) as e:
            type(fit.state).from_bytes(b)
        assert e.value.buffer == "state", what
    # A NaN in the first chain's thermostat scalar (word 4 of its scalars, after the header,
    # the name, the chain count, the chain's step count and its scalars' kind byte) is refused
    # by name.
    at = 12 + 4 + 8 + len("sgnht") + 8 + 8 + 1 + 4 * 8
    nan = bytearray(data)
    nan[at:at + 8] = np.float64(np.nan).tobytes()
    with pytest.raises(sgmcmc.LayoutError, match="scalars"):
        type(fit.state).from_bytes(bytes(nan))


def test_a_saved_minibatch_sequence_needs_a_model_of_as_many_examples():
    model = sgmcmc.LogisticRegression(X, y, batch_size=16)
    fit = sgmcmc.sample(model, "sgnht", step_size=0.01, chains=2, draws=10, progress=False)
    fewer = sgmcmc.LogisticRegression(X[:150], y[:150], batch_size=16)
    with pytest.raises(sgmcmc.LayoutError) as e:
        sgmcmc.sample(fewer, "sgnht", step_size=0.01, draws=10, resume=fit.state)
    assert e.value.buffer == "resume"


@pytest.mark.parametrize("sampler", ["sghmc", "sgnht", "msgnht", "sgmgt_d"])
@pytest.mark.parametrize("calibration", [
    dict(shape="diagonal", correction="friction", refresh=3),
    dict(shape="dense", correction="friction", refresh=3),
    dict(shape="dense", correction="subtract"),
])
def test_calibrated_chains_resume_exactly(sampler, calibration):
    """A calibrated run (the Rust API's Calibrated checkpoint: the running noise estimate, its
    count, the dense estimate's eigendecomposition between refreshes) continued from a pickled
    state is the run that never stopped, bit for bit."""
    import pickle

    model = sgmcmc.LogisticRegression(X, y, batch_size=16)
    common = dict(chains=2, seed=5, step_size=0.01, calibration=calibration, progress=False)
    whole = sgmcmc.sample(model, sampler, draws=100, **common)
    first = sgmcmc.sample(model, sampler, draws=37, **common)
    state = pickle.loads(pickle.dumps(first.state))
    rest = sgmcmc.sample(model, sampler, draws=63, resume=state, **common)
    np.testing.assert_array_equal(np.concatenate([first.draws, rest.draws], axis=1), whole.draws)


@pytest.mark.parametrize("sampler, kw", [
    ("hmc", dict(step_size=0.05, leapfrog_steps=3)),
    ("sghmc", dict(step_size=0.01)),
    ("sgnht", dict(step_size=0.01)),
    ("sgnphmc", dict(step_size=0.005, leapfrog_steps=3)),
])
@pytest.mark.parametrize("shape", ["diagonal", "dense"])
def test_mcem_chains_resume_exactly(sampler, kw, shape):
    """An MCEM run (the wrapper's statistics, sample-size rule, learned M⁻¹ and M-step count,
    through McemScalars::to_words) continued from a pickled state mid-batch is the run that
    never stopped, bit for bit, M⁻¹ included."""
    import pickle

    # HMC's Metropolis test needs the full data; the others take minibatches.
    model = sgmcmc.LogisticRegression(X, y, batch_size=None if sampler == "hmc" else 16)
    mcem = dict(e_steps=3, sample_count=4, shape=shape)
    common = dict(chains=2, seed=8, mcem=mcem, progress=False, **kw)
    whole = sgmcmc.sample(model, sampler, draws=40, **common)
    first = sgmcmc.sample(model, sampler, draws=17, **common)
    state = pickle.loads(pickle.dumps(first.state))
    rest = sgmcmc.sample(model, sampler, draws=23, resume=state, **common)
    np.testing.assert_array_equal(np.concatenate([first.draws, rest.draws], axis=1), whole.draws)
    np.testing.assert_array_equal(rest.inverse_mass, whole.inverse_mass)
    assert rest.m_steps == whole.m_steps and min(whole.m_steps) > 0


def test_mcem_resume_refusals():
    model = sgmcmc.LogisticRegression(X, y, batch_size=16)
    common = dict(step_size=0.01, chains=1, draws=10, progress=False)
    em = sgmcmc.sample(model, "sghmc", mcem=dict(e_steps=3), **common)
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(model, "sghmc", resume=em.state, **common)
    assert e.value.param == "resume"
    bare = sgmcmc.sample(model, "sghmc", **common)
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.sample(model, "sghmc", resume=bare.state, mcem=dict(e_steps=3), **common)
    assert e.value.param == "resume"
    # A diagonal MCEM state is not a dense one: the checkpoint's length differs.
    with pytest.raises(sgmcmc.LayoutError):
        sgmcmc.sample(model, "sghmc", resume=em.state, mcem=dict(e_steps=3, shape="dense"),
                      **common)
