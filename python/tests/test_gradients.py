"""The four ways of giving a gradient: built-in, a C function pointer (numba cfunc), a Python
callable, ask/tell. The same arithmetic gives the same chain bit for bit whichever way it comes."""

import ctypes

import numpy as np
import pytest

import sgmcmc
from conftest import batch_means_se

MEAN, VARIANCE = np.array([1.0, -0.5, 2.0]), np.array([1.0, 0.25, 4.0])
PRECISION = 1.0 / VARIANCE


def numpy_gradient(theta):
    # p·(θ − μ) elementwise: the same two correctly rounded operations per coordinate as the
    # built-in Gaussian, so the chains agree to the last bit.
    return PRECISION * (theta - MEAN)


def numpy_energy(theta):
    r = theta - MEAN
    u = 0.0
    for i in range(3):  # the built-in's loop order (a dense row with zeros off the diagonal)
        pr = 0.0
        for j in range(3):
            pr += (PRECISION[i] if i == j else 0.0) * r[j]
        u += r[i] * pr
    return 0.5 * u


def builtin_fit(sampler, **kw):
    return sgmcmc.sample(sgmcmc.Gaussian(MEAN, VARIANCE), sampler, progress=False, **kw)


@pytest.mark.parametrize("sampler", ["sgld", "sghmc", "sgnht", "msgnht", "sgmgt_d", "hmc"])
def test_python_callable_draws_the_builtin_chain(sampler):
    kw = dict(step_size=0.1, chains=2, draws=200, seed=11)
    model = sgmcmc.PythonModel(numpy_gradient, dim=3, energy=numpy_energy)
    fit = sgmcmc.sample(model, sampler, progress=False, **kw)
    np.testing.assert_array_equal(fit.draws, builtin_fit(sampler, **kw).draws)


numba = pytest.importorskip("numba")


def numba_functions():
    from numba import carray, cfunc, types

    mean, precision = MEAN.copy(), PRECISION.copy()
    grad_sig = types.void(types.CPointer(types.double), types.CPointer(types.double),
                          types.size_t, types.voidptr)

    @cfunc(grad_sig, nopython=True)
    def gradient(theta_ptr, grad_ptr, n, ctx):
        theta = carray(theta_ptr, (n,))
        grad = carray(grad_ptr, (n,))
        for i in range(n):
            grad[i] = precision[i] * (theta[i] - mean[i])

    energy_sig = types.double(types.CPointer(types.double), types.size_t, types.voidptr)

    @cfunc(energy_sig, nopython=True)
    def energy(theta_ptr, n, ctx):
        theta = carray(theta_ptr, (n,))
        u = 0.0
        for i in range(n):
            pr = 0.0
            for j in range(n):
                pij = precision[i] if i == j else 0.0
                pr += pij * (theta[j] - mean[j])
            u += (theta[i] - mean[i]) * pr
        return 0.5 * u

    return gradient, energy


@pytest.mark.parametrize("sampler", ["sgld", "sgnht", "sgmgt", "hmc", "sgnphmc"])
def test_numba_cfunc_draws_the_builtin_chain(sampler):
    gradient, energy = numba_functions()
    model = sgmcmc.CFunction(gradient.address, dim=3, energy=energy.address)
    kw = dict(step_size=0.1, chains=4, draws=500, seed=5)
    fit = sgmcmc.sample(model, sampler, progress=False, **kw)
    np.testing.assert_array_equal(fit.draws, builtin_fit(sampler, **kw).draws)


def test_ctypes_function_pointer():
    proto = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_double),
                             ctypes.POINTER(ctypes.c_double), ctypes.c_size_t, ctypes.c_void_p)

    def grad(theta, out, n, ctx):
        for i in range(n):
            out[i] = PRECISION[i] * (theta[i] - MEAN[i])

    callback = proto(grad)  # kept alive for the run
    address = ctypes.cast(callback, ctypes.c_void_p).value
    kw = dict(step_size=0.05, chains=2, draws=300, seed=2)
    fit = sgmcmc.sample(sgmcmc.CFunction(address, dim=3), "sgnht", progress=False, **kw)
    np.testing.assert_array_equal(fit.draws, builtin_fit("sgnht", **kw).draws)


def ask_tell_step(stepper, model):
    """One step by ask/tell, answering whatever it needs from `model` (the Gaussian's Hessian
    diagonal is its precision); the number of requests it made."""
    requests = 0
    while True:
        point = stepper.ask()
        requests += 1
        need = stepper.needs
        answer = {"gradient": lambda: model.gradient(point),
                  "energy": lambda: model.energy(point),
                  "hessian_diagonal": lambda: PRECISION.copy()}[need]()
        if stepper.tell(answer) is not None:
            return requests


@pytest.mark.parametrize("sampler, kw", [
    ("sgld", {}), ("psgld", {}), ("psgld", dict(correction=True)), ("sghmc", {}),
    ("sgnht", {}), ("msgnht", {}), ("sgmgt", {}), ("sgmgt_d", {}),
    ("hmc", dict(leapfrog_steps=4)), ("sgnphmc", dict(leapfrog_steps=4)),
])
def test_ask_tell_draws_the_builtin_chain(sampler, kw):
    """Every sampler by ask/tell, including HMC and SG-NPHMC (several gradients and the
    potential per step) and pSGLD with its Γ correction (the Hessian diagonal): bit for bit
    the chain `sample` draws with the built-in model."""
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    kw = dict(step_size=0.1, **kw)
    fit = sgmcmc.sample(model, sampler, chains=1, draws=60, seed=9, init=[0.5, 0.5, 0.5],
                        progress=False, **kw)
    stepper = sgmcmc.Stepper(sampler, np.array([0.5, 0.5, 0.5]), seed=9, **kw)
    told, requests = [], []
    for _ in range(60):
        requests.append(ask_tell_step(stepper, model))
        told.append(stepper.position)
    np.testing.assert_array_equal(np.array(told), fit.draws[0], err_msg=sampler)
    assert stepper.steps == 60
    print(sampler, kw, "requests per step", sorted(set(requests)))
    if sampler in ("hmc", "sgnphmc"):
        assert max(requests) > 2  # several gradients and the potential per step


def test_ask_is_idempotent_and_a_bad_tell_changes_nothing():
    model = sgmcmc.Gaussian(MEAN, VARIANCE)
    stepper = sgmcmc.Stepper("sgnht", np.zeros(3), seed=1, step_size=0.1)
    a = stepper.ask()
    np.testing.assert_array_equal(a, stepper.ask())
    before = stepper.position
    with pytest.raises(sgmcmc.StepError):
        stepper.tell(np.array([np.nan, 0.0, 0.0]))
    np.testing.assert_array_equal(stepper.position, before)
    assert stepper.steps == 0
    with pytest.raises(sgmcmc.LayoutError) as e:
        stepper.tell(np.zeros(2))
    assert e.value.buffer == "gradient"
    # The refused tells changed nothing: the chain continues as if they never happened.
    stepper.tell(model.gradient(stepper.ask()))
    reference = sgmcmc.Stepper("sgnht", np.zeros(3), seed=1, step_size=0.1)
    reference.tell(model.gradient(reference.ask()))
    np.testing.assert_array_equal(stepper.position, reference.position)


def test_calibrated_minibatches_have_the_posterior_moments():
    # θ | x ~ N(m, s²I) for xᵢ ~ N(θ, I), prior N(0, 10 I): 1/s² = N + 1/10, m = Σx / (1/s²).
    rng = np.random.default_rng(0)
    x = rng.normal([0.5, -1.0], 1.0, size=(500, 2))
    precision = len(x) + 0.1
    mean, var = x.sum(axis=0) / precision, 1.0 / precision
    model = sgmcmc.GaussianMean(x, batch_size=20)
    fit = sgmcmc.sample(model, "sghmc", step_size=0.003, chains=4, draws=50_000, thin=2,
                        warmup=2000, seed=1, init=mean, calibration=True, progress=False)
    d = fit.draws
    z_mean = (d.mean(axis=(0, 1)) - mean) / batch_means_se(d)
    sq = (d - mean) ** 2
    z_var = (sq.mean(axis=(0, 1)) - var) / batch_means_se(sq)
    print("calibrated z(mean)", z_mean, "z(var)", z_var)
    assert np.all(np.abs(z_mean) < 5) and np.all(np.abs(z_var) < 5)


def rows_functions(data, noise_variance, prior_variance, batch):
    """The built-in GaussianMean's gradient and potential as numba cfuncs on the rows sgmcmc
    draws, in its order of operations: acc += (1/σ²)(θ − xᵢ) row by row, then
    (N/b)·acc + θ/σ₀² (and likewise for U)."""
    from numba import carray, cfunc, types

    x = data.copy()
    n_rows, dim = x.shape
    w, inv_prior = 1.0 / noise_variance, 1.0 / prior_variance
    grad_sig = types.void(types.CPointer(types.double), types.CPointer(types.double),
                          types.size_t, types.CPointer(types.int64), types.size_t, types.voidptr)
    energy_sig = types.double(types.CPointer(types.double), types.size_t,
                              types.CPointer(types.int64), types.size_t, types.voidptr)

    @cfunc(grad_sig, nopython=True)
    def gradient(theta_ptr, grad_ptr, n, rows_ptr, b, ctx):
        theta, grad, rows = carray(theta_ptr, (n,)), carray(grad_ptr, (n,)), carray(rows_ptr, (b,))
        for a in range(n):
            grad[a] = 0.0
        for k in range(b):
            for a in range(n):
                grad[a] += w * (theta[a] - x[rows[k], a])
        scale = n_rows / b
        for a in range(n):
            grad[a] = scale * grad[a] + inv_prior * theta[a]

    @cfunc(energy_sig, nopython=True)
    def energy(theta_ptr, n, rows_ptr, b, ctx):
        theta, rows = carray(theta_ptr, (n,)), carray(rows_ptr, (b,))
        total = 0.0
        for k in range(b):
            s = 0.0
            for a in range(n):
                s += (theta[a] - x[rows[k], a]) * (theta[a] - x[rows[k], a])
            total += 0.5 * s / noise_variance
        prior = 0.0
        for a in range(n):
            prior += theta[a] * theta[a]
        return (n_rows / b) * total + 0.5 * prior / prior_variance

    return gradient, energy


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("sampler", ["sgld", "sgnht", "sgnphmc"])
def test_cfunc_on_rows_drawn_by_sgmcmc_is_the_builtin_chain(sampler, replace):
    """A cfunc given `examples` and `batch_size` gets the built-in model's minibatches: the
    same seed gives the built-in GaussianMean's chain bit for bit, so the rows, and hence the
    chain, are reproducible from the seed (unlike rows a cfunc draws itself)."""
    data = np.random.default_rng(9).normal(size=(60, 2)) + np.array([1.0, -1.0])
    gradient, energy = rows_functions(data, 2.0, 10.0, 8)
    model = sgmcmc.CFunction(gradient.address, dim=2, energy=energy.address, examples=60,
                             batch_size=8, replace=replace)
    builtin = sgmcmc.GaussianMean(data, noise_variance=2.0, batch_size=8, replace=replace)
    kw = dict(step_size=0.01, chains=2, draws=150, seed=21, progress=False)
    fit = sgmcmc.sample(model, sampler, **kw)
    np.testing.assert_array_equal(fit.draws, sgmcmc.sample(builtin, sampler, **kw).draws)
    # And it resumes: 60 + 90 draws are the 150.
    first = sgmcmc.sample(model, sampler, **{**kw, "draws": 60})
    rest = sgmcmc.sample(model, sampler, resume=first.state, **{**kw, "draws": 90})
    np.testing.assert_array_equal(np.concatenate([first.draws, rest.draws], axis=1), fit.draws)


def test_cfunc_rows_settings_are_checked():
    data = np.zeros((10, 2))
    gradient, _ = rows_functions(data, 1.0, 10.0, 4)
    for kw, param in [(dict(batch_size=4), "batch_size"), (dict(examples=0), "examples"),
                      (dict(examples=10, batch_size=0), "batch_size")]:
        with pytest.raises(sgmcmc.SettingError) as e:
            sgmcmc.sample(sgmcmc.CFunction(gradient.address, dim=2, **kw), "sgld",
                          step_size=0.01, draws=5, progress=False)
        assert e.value.param == param


def hessian_functions():
    """The Gaussian's and GaussianMean's Hessian diagonals as numba cfuncs with the gradient's
    signatures (plain, and on the rows sgmcmc draws, in the built-in's order of operations)."""
    from numba import carray, cfunc, types

    precision = PRECISION.copy()
    plain_sig = types.void(types.CPointer(types.double), types.CPointer(types.double),
                           types.size_t, types.voidptr)
    rows_sig = types.void(types.CPointer(types.double), types.CPointer(types.double),
                          types.size_t, types.CPointer(types.int64), types.size_t, types.voidptr)

    @cfunc(plain_sig, nopython=True)
    def gaussian(theta_ptr, out_ptr, n, ctx):
        out = carray(out_ptr, (n,))
        for i in range(n):
            out[i] = precision[i]

    @cfunc(rows_sig, nopython=True)
    def gaussian_mean(theta_ptr, out_ptr, n, rows_ptr, b, ctx):
        # GaussianMean(noise_variance=2, prior variance 10) on 60 examples: (N/b)·Σ 1/σ² + 1/σ₀².
        out = carray(out_ptr, (n,))
        for a in range(n):
            out[a] = 0.0
        for k in range(b):
            for a in range(n):
                out[a] += 1.0 / 2.0
        for a in range(n):
            out[a] = (60 / b) * out[a] + 1.0 / 10.0

    return gaussian, gaussian_mean


def test_psgld_correction_with_a_given_hessian_diagonal_is_the_builtin_chain():
    """pSGLD's Γ correction asks for the diagonal of ∇²U: a Python callable, a numba cfunc, and
    a cfunc on sgmcmc's rows give it as the built-in models do, and draw their chains bit for
    bit."""
    gaussian, gaussian_mean = hessian_functions()
    gradient, _ = numba_functions()
    kw = dict(step_size=0.05, correction=True, chains=2, draws=200, seed=13)
    want = builtin_fit("psgld", **kw).draws
    kw["progress"] = False
    python = sgmcmc.PythonModel(numpy_gradient, dim=3,
                                hessian_diagonal=lambda theta: PRECISION.copy())
    np.testing.assert_array_equal(sgmcmc.sample(python, "psgld", **kw).draws, want)
    c = sgmcmc.CFunction(gradient.address, dim=3, hessian_diagonal=gaussian.address)
    np.testing.assert_array_equal(sgmcmc.sample(c, "psgld", **kw).draws, want)

    data = np.random.default_rng(9).normal(size=(60, 2)) + np.array([1.0, -1.0])
    rows_gradient, _ = rows_functions(data, 2.0, 10.0, 8)
    for replace in (False, True):
        rows = sgmcmc.CFunction(rows_gradient.address, dim=2, examples=60, batch_size=8,
                                replace=replace, hessian_diagonal=gaussian_mean.address)
        builtin = sgmcmc.GaussianMean(data, noise_variance=2.0, batch_size=8, replace=replace)
        kw2 = {**kw, "step_size": 0.01}
        np.testing.assert_array_equal(sgmcmc.sample(rows, "psgld", **kw2).draws,
                                      sgmcmc.sample(builtin, "psgld", **kw2).draws)


def test_psgld_correction_without_a_hessian_diagonal_is_refused_up_front():
    gradient, _ = numba_functions()
    for model in (sgmcmc.PythonModel(numpy_gradient, dim=3),
                  sgmcmc.CFunction(gradient.address, dim=3)):
        with pytest.raises(sgmcmc.SettingError) as e:
            sgmcmc.sample(model, "psgld", step_size=0.05, correction=True, draws=5,
                          progress=False)
        assert e.value.param == "hessian_diagonal"
        # Without the correction the model needs none.
        sgmcmc.sample(model, "psgld", step_size=0.05, draws=5, progress=False)


def test_a_bad_python_hessian_diagonal_stops_the_chain_with_its_error():
    model = sgmcmc.PythonModel(numpy_gradient, dim=3, hessian_diagonal=lambda theta: np.ones(2))
    with pytest.raises(sgmcmc.StepError) as e:
        sgmcmc.sample(model, "psgld", step_size=0.05, correction=True, draws=5, progress=False)
    assert isinstance(e.value.__cause__, ValueError)
    assert "hessian_diagonal function returned 2 values" in str(e.value.__cause__)
