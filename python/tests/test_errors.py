"""Every error path: an exception that names the setting or the array, and nothing half done."""

import numpy as np
import pytest

import sgmcmc

G = sgmcmc.Gaussian(np.zeros(2), np.ones(2))


def run(model=G, sampler="sgnht", **kw):
    kw.setdefault("step_size", 0.1)
    kw.setdefault("chains", 2)
    kw.setdefault("draws", 10)
    return sgmcmc.sample(model, sampler, progress=False, **kw)


@pytest.mark.parametrize("sampler, settings, param", [
    ("sgld", dict(step_size=-1.0), "step size h"),
    ("sgld", dict(step_size=float("nan")), "step size h"),
    ("sgld", dict(step_size=0.1, temperature=-1.0), "temperature T"),
    ("psgld", dict(step_size=0.1, decay=1.0), "preconditioner decay α"),
    ("psgld", dict(step_size=0.1, offset=0.0), "preconditioner offset λ"),
    ("sghmc", dict(step_size=0.1, friction=-1.0), "friction A"),
    ("sghmc", dict(step_size=0.1, friction=1.0, noise_estimate=2.0), "noise estimate B̂"),
    ("sgnht", dict(step_size=0.1, diffusion=-1.0), "diffusion A"),
    ("sgmgt", dict(step_size=0.1, kinetic_exponent=0.1), "monomial exponent a"),
    ("sgmgt", dict(step_size=0.1, softening=0.0), "softening c"),
    ("sgmgt", dict(step_size=0.1, gamma=-1.0), "friction rescaling γ"),
    ("sgmgt_d", dict(step_size=0.1, sigma_theta=-1.0), "θ diffusion σ_θ"),
    ("hmc", dict(step_size=0.1, leapfrog_steps=0), "leapfrog steps L"),
    ("sgnphmc", dict(step_size=0.1, thermostat_mass=0.0), "thermostat mass Q"),
    ("sgnht", dict(step_size=0.1, integrator="verlet"), "integrator"),
    ("sgnht", dict(step_size=0.1, thermostat_rule="other"), "thermostat_rule"),
])
def test_bad_settings_name_their_parameter(sampler, settings, param):
    with pytest.raises(sgmcmc.SettingError) as e:
        run(sampler=sampler, **settings)
    assert e.value.param == param
    assert isinstance(e.value, ValueError)


def test_unknown_sampler_and_setting():
    with pytest.raises(ValueError, match="unknown sampler"):
        run(sampler="nuts")
    with pytest.raises(TypeError, match="takes no setting `friction`"):
        run(sampler="sgld", friction=1.0)
    with pytest.raises(TypeError, match="setting `friction` has the wrong type"):
        run(sampler="sghmc", friction="high")


@pytest.mark.parametrize("kw, param", [
    (dict(thin=0), "thin"),
    (dict(draws=-1), "draws"),
    (dict(chains=0), "chains"),
    (dict(calibration=True), "calibration"),  # the Gaussian target has no examples
    # Named here rather than by PyO3's OverflowError or numpy's "negative dimensions".
    (dict(seed=-1), "seed"),
    (dict(seed=2**64), "seed"),
    (dict(chains=-1), "chains"),
    (dict(thin=-2), "thin"),
    (dict(draws=1.5), "draws"),
    (dict(warmup=True), "warmup"),
    (dict(step_size=None, schedule={"kind": "junk"}), "schedule"),
    (dict(step_size=None, schedule="polynomial"), "schedule"),  # a KeyError or TypeError before
    (dict(schedule=sgmcmc.cyclical(0.1, -5, 0.5)), "cycle"),  # "the wrong type (int)" before
    (dict(sampler="hmc", leapfrog_steps=-1), "leapfrog_steps"),
    (dict(resume=123), "resume"),
])
def test_bad_run_arguments(kw, param):
    with pytest.raises(sgmcmc.SettingError) as e:
        run(**kw)
    assert e.value.param == param


@pytest.mark.parametrize("init", [np.zeros((2, 3)), np.zeros((3, 2)), np.array([[0.0, np.inf]] * 2),
                                  np.zeros((2, 2)) + 1j, [["a", "b"]] * 2])
def test_bad_init_names_init(init):
    with pytest.raises(sgmcmc.LayoutError) as e:
        run(init=init)
    assert e.value.buffer == "init"


def test_a_model_of_another_kind_is_a_type_error():
    # (It was a LayoutError asking for init.)
    with pytest.raises(TypeError, match="model must be a built-in model"):
        run(model=123)


def test_energy_and_full_batch_requirements():
    with pytest.raises(sgmcmc.SettingError) as e:
        run(sgmcmc.PythonModel(lambda t: t, dim=2), sampler="hmc")
    assert e.value.param == "energy"
    X, y = np.ones((10, 2)), np.zeros(10)
    with pytest.raises(sgmcmc.SettingError) as e:
        run(sgmcmc.LogisticRegression(X, y, batch_size=5), sampler="hmc")
    assert e.value.param == "batch_size"
    with pytest.raises(sgmcmc.SettingError) as e:
        run(sgmcmc.LogisticRegression(X, y, batch_size=5), sampler="sgld", calibration=True)
    assert e.value.param == "calibration"


def test_bad_data_names_the_array():
    cases = [
        (lambda: sgmcmc.LogisticRegression(np.ones((4, 2)), np.array([0, 1, 2, 1.0])), "y"),
        (lambda: sgmcmc.LogisticRegression(np.ones((4, 2)), np.zeros(3)), "y"),
        (lambda: sgmcmc.LinearRegression(np.full((4, 2), np.nan), np.zeros(4)), "X"),
        (lambda: sgmcmc.LinearRegression(np.ones(4), np.zeros(4)), "X"),
        (lambda: sgmcmc.Gaussian(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]])), "cov"),
        (lambda: sgmcmc.Gaussian(np.zeros(2), np.array([1.0, -1.0])), "cov"),
        (lambda: sgmcmc.Gaussian(np.zeros(2), np.ones(3)), "cov"),
    ]
    for make, buffer in cases:
        with pytest.raises(sgmcmc.LayoutError) as e:
            make()
        assert e.value.buffer == buffer
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.LogisticRegression(np.ones((4, 2)), np.zeros(4), batch_size=5)
    assert e.value.param == "batch_size"
    with pytest.raises(sgmcmc.SettingError) as e:
        sgmcmc.LinearRegression(np.ones((4, 2)), np.zeros(4), noise_variance=0.0)
    assert e.value.param == "noise_variance"


X4, Y4 = np.ones((4, 2)), np.zeros(4)


@pytest.mark.parametrize("make, param", [
    (lambda: sgmcmc.GaussianMean(X4, batch_size=-1), "batch_size"),
    (lambda: sgmcmc.GaussianMean(X4, batch_size=1.5), "batch_size"),
    (lambda: sgmcmc.LogisticRegression(X4, Y4, batch_size=0), "batch_size"),
    (lambda: sgmcmc.LinearRegression(X4, Y4, seed=-1), "seed"),
    (lambda: sgmcmc.CFunction(-1, 2), "gradient"),
    (lambda: sgmcmc.CFunction("0x10", 2), "gradient"),
    (lambda: sgmcmc.CFunction(16, 2, energy=2.5), "energy"),
    (lambda: sgmcmc.CFunction(16, 2, context=-1), "context"),
    (lambda: sgmcmc.CFunction(16, 0), "dim"),
    (lambda: sgmcmc.CFunction(16, 2, examples=-5), "examples"),
    (lambda: sgmcmc.CFunction(16, 2, examples=5, batch_size=2.0), "batch_size"),
    (lambda: sgmcmc.PythonModel(lambda t: t, -1), "dim"),
    (lambda: sgmcmc.PythonModel(None, 2), "gradient"),
    (lambda: sgmcmc.PythonModel(lambda t: t, 2, energy=3.0), "energy"),
])
def test_bad_model_arguments_name_their_parameter(make, param):
    """Each refused when the model is built, by name (PyO3 would have raised an unnamed
    OverflowError or TypeError at the run, or crashed on a garbage address's call)."""
    with pytest.raises(sgmcmc.SettingError) as e:
        make()
    assert e.value.param == param


@pytest.mark.parametrize("make, buffer", [
    # Complex data was cut to its real part with only numpy's ComplexWarning.
    (lambda: sgmcmc.LogisticRegression(X4 + 1j, Y4), "X"),
    (lambda: sgmcmc.LinearRegression(X4, Y4 + 0j), "y"),
    (lambda: sgmcmc.LogisticRegression([[1.0, "x"]], [1.0]), "X"),
    (lambda: sgmcmc.Gaussian(np.zeros(2), "ab"), "cov"),
    (lambda: sgmcmc.Gaussian(["a", "b"], np.ones(2)), "mean"),
    (lambda: sgmcmc.Gaussian(np.zeros(2), np.ones((2, 2, 2))), "cov"),
])
def test_data_that_is_not_real_numbers_names_the_array(make, buffer):
    with pytest.raises(sgmcmc.LayoutError) as e:
        make()
    assert e.value.buffer == buffer


def test_model_dimension_mismatch():
    with pytest.raises(sgmcmc.LayoutError) as e:
        run(init=np.zeros((2, 3)))
    assert e.value.buffer == "init"
    with pytest.raises(sgmcmc.LayoutError) as e:
        G.gradient(np.zeros(3))
    assert e.value.buffer == "θ"


def test_a_raising_gradient_stops_with_the_draws_so_far():
    calls = []

    def grad(theta):
        calls.append(1)
        if len(calls) > 50:
            raise ArithmeticError("boom")
        return theta

    with pytest.raises(sgmcmc.StepError) as e:
        run(sgmcmc.PythonModel(grad, dim=2), sampler="sgld", chains=1, draws=100)
    assert isinstance(e.value.__cause__, ArithmeticError)
    assert (e.value.chain, e.value.step) == (0, 50)
    # The 50 steps before it were kept, and the state after them is what they left.
    assert e.value.partial["draws"].shape == (1, 50, 2)


@pytest.mark.parametrize("result, exc", [
    (lambda t: np.zeros(3), ValueError),     # wrong length
    (lambda t: "no", TypeError),             # not an array
    (lambda t: t * np.nan, None),            # non-finite: the step is refused
])
def test_bad_gradient_results(result, exc):
    with pytest.raises(sgmcmc.StepError) as e:
        run(sgmcmc.PythonModel(result, dim=2), chains=1)
    if exc is not None:
        assert isinstance(e.value.__cause__, exc)
    else:
        assert "gradient" in str(e.value)


def test_a_refused_step_keeps_the_partial_draws():
    # A gradient that turns NaN after 20 calls: the chain stops with 20 draws and says where.
    calls = []

    def grad(theta):
        calls.append(1)
        return theta * (np.nan if len(calls) > 20 else 1.0)

    with pytest.raises(sgmcmc.StepError) as e:
        run(sgmcmc.PythonModel(grad, dim=2), sampler="sgld", chains=1, draws=100)
    assert e.value.step == 20
    assert e.value.partial["draws"].shape == (1, 20, 2)
    assert np.all(np.isfinite(e.value.partial["draws"]))


def test_stepper_refuses_tell_before_ask_and_the_wrong_kind_of_answer():
    s = sgmcmc.Stepper("hmc", np.zeros(2), step_size=0.1)
    with pytest.raises(RuntimeError, match="tell before ask"):
        s.tell(0.0)
    s.ask()
    assert s.needs == "gradient"  # HMC's first step needs ∇U(θ₀) and U(θ₀)
    with pytest.raises(sgmcmc.LayoutError, match="array of numbers") as e:
        s.tell("a string")
    assert e.value.buffer == "gradient"
    # A tell that leaves the step unfinished has already found its next request.
    assert s.tell(np.zeros(2)) is None and s.needs == "energy"
    s.ask()
    with pytest.raises(TypeError, match="float"):
        s.tell(np.zeros(2))
    assert s.tell(0.5) is None
    s = sgmcmc.Stepper("sgld", np.zeros(2), step_size=0.1)
    with pytest.raises(RuntimeError, match="tell before ask"):
        s.tell(np.zeros(2))
    with pytest.raises(sgmcmc.LayoutError):
        sgmcmc.Stepper("sgld", np.array([np.nan, 0.0]), step_size=0.1)
    # Named, where PyO3 raised an unnamed OverflowError or "cannot be cast as 'ndarray'".
    for kw, param in [(dict(seed=-1), "seed"), (dict(chain=2**64), "chain"),
                      (dict(seed=0.5), "seed")]:
        with pytest.raises(sgmcmc.SettingError) as e:
            sgmcmc.Stepper("sgld", np.zeros(2), step_size=0.1, **kw)
        assert e.value.param == param
    for init in [np.zeros((2, 2)), np.zeros(2) + 1j, ["a", "b"]]:
        with pytest.raises(sgmcmc.LayoutError) as e:
            sgmcmc.Stepper("sgld", init, step_size=0.1)
        assert e.value.buffer == "init"
    s.ask()
    with pytest.raises(sgmcmc.LayoutError) as e:
        s.tell(np.zeros(2) + 1j)  # not cut to its real part
    assert e.value.buffer == "gradient"


def test_stepper_takes_any_real_array_like():
    """init and the answers may be lists or float32 (JAX's default dtype): converted as `sample`
    converts its arrays, float32 widening exactly, so the chain is the float64 one bit for bit."""
    rng = np.random.default_rng(5)
    answers = rng.normal(size=(20, 3)).astype(np.float32)
    chains = []
    for convert in (lambda a: a.astype(np.float64), lambda a: a, lambda a: a.tolist()):
        s = sgmcmc.Stepper("sghmc", convert(np.float32([0.5, -1.0, 2.0])), seed=3, step_size=0.05)
        for g in answers:
            s.ask()
            s.tell(convert(g))
        chains.append(s.position)
    assert chains[0].tobytes() == chains[1].tobytes() == chains[2].tobytes()


def test_defaults_are_the_rust_api_defaults():
    # The table in `sample`'s docstring, read from the Rust constructors.
    assert sgmcmc.defaults("sghmc") == dict(temperature=1.0, friction=1.0, noise_estimate=0.0,
                                            integrator="splitting")
    assert sgmcmc.defaults("sgnht") == dict(temperature=1.0, diffusion=1.0,
                                            integrator="splitting", thermostat_rule="derived")
    assert sgmcmc.defaults("psgld") == dict(temperature=1.0, decay=0.99, offset=1e-5,
                                            correction=False)
    d = sgmcmc.defaults("sgmgt_d")
    assert (d["sigma_theta"], d["sigma_xi"], d["kinetic_exponent"], d["softening"]) == \
        (0.01, 0.01, 1.0, 5.0)
    assert sgmcmc.defaults("hmc") == dict(temperature=1.0, leapfrog_steps=10)
    assert set(sgmcmc.SAMPLERS) == {s for s in sgmcmc.SAMPLERS if sgmcmc.defaults(s) is not None}


def test_exceptions_pickle_with_their_attributes():
    import pickle

    with pytest.raises(sgmcmc.SettingError) as e:
        run(step_size=-1.0)
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is sgmcmc.SettingError and again.param == "step size h"
