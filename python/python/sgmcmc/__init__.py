"""Stochastic-gradient MCMC on sgmcmc's allocation-free Rust kernel: numpy in, ArviZ out.

>>> import numpy as np, sgmcmc
>>> model = sgmcmc.Gaussian(np.zeros(2), np.ones(2))
>>> fit = sgmcmc.sample(model, "sgnht", step_size=0.05, chains=2, draws=500, progress=False)
>>> fit.draws.shape
(2, 500, 2)

Gradients come from a built-in model (run entirely in Rust), a C function pointer
(:class:`CFunction`, e.g. a numba ``cfunc``; called without the GIL), a Python callable
(:class:`PythonModel`; takes the GIL per call), or ask/tell (:class:`Stepper`). Chains run on
Rust threads with the GIL released; Ctrl-C stops them and keeps the draws so far.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Callable, Optional

import numpy as np

from . import _sgmcmc
from ._sgmcmc import ChainStates, LayoutError, SettingError, StepError, Stepper, defaults

# The extension creates these classes as `_sgmcmc.X`, a module name that does not import, so
# pickle (multiprocessing, Ray) could not find them; they are `sgmcmc.X` to users.
for _cls in (LayoutError, SettingError, StepError):
    _cls.__module__ = "sgmcmc"
del _cls

__all__ = [
    "CFunction",
    "ChainStates",
    "Fit",
    "Gaussian",
    "GaussianMean",
    "LayoutError",
    "LinearRegression",
    "LogisticRegression",
    "PythonModel",
    "SAMPLERS",
    "SettingError",
    "StepError",
    "Stepper",
    "cyclical",
    "defaults",
    "polynomial",
    "sample",
]

#: The samplers :func:`sample` runs, by name.
SAMPLERS = ("sgld", "psgld", "sghmc", "sgnht", "msgnht", "sgmgt", "sgmgt_d", "hmc", "sgnphmc")


def _setting(param, message):
    err = SettingError(message)
    err.param = param
    return err


def _layout(buffer, message):
    err = LayoutError(message)
    err.buffer = buffer
    return err


def _floats(a, name, ndim=None):
    """``a`` as a C-contiguous float64 array (of ``ndim`` dimensions if given), or a
    :class:`LayoutError` naming it: complex values are refused rather than cut to their real
    parts, and what does not convert to numbers is named rather than left to numpy's error."""
    arr = np.asarray(a)
    if np.iscomplexobj(arr):
        raise _layout(name, f"{name} must be real, not of dtype {arr.dtype}")
    try:
        arr = np.ascontiguousarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise _layout(name, f"{name} must be an array of numbers: {e}") from e
    if ndim is not None and arr.ndim != ndim:
        raise _layout(name, f"{name} must be a {ndim}-d array, not shape {arr.shape}")
    return arr


_U64_MAX = 2**64 - 1


def _integer(name, value, least):
    """``value`` as an int in [least, 2⁶⁴ − 1] (the Rust side's u64), or a :class:`SettingError`
    naming it (instead of PyO3's unnamed OverflowError or TypeError)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not least <= value <= _U64_MAX:
        raise _setting(name, f"{name} must be an integer in [{least}, 2**64 - 1], not {value!r}")
    return int(value)


def _batch_size(batch_size):
    return None if batch_size is None else _integer("batch_size", batch_size, 1)


def Gaussian(mean, cov):
    """The target N(mean, cov): ``cov`` a (d, d) covariance or a length-d vector of variances.

    Its gradient Σ⁻¹(θ − μ) is exact (no minibatch noise)."""
    mean = _floats(mean, "mean", 1)
    cov = _floats(cov, "cov")
    if cov.ndim not in (1, 2):
        raise _layout("cov", f"cov must be a (d,) or (d, d) array, not shape {cov.shape}")
    return _sgmcmc.gaussian(mean, cov)


def LogisticRegression(X, y, *, prior_variance=10.0, batch_size=None, replace=False, seed=0):
    """Bayesian logistic regression: labels ``y`` ∈ {0, 1}, prior N(0, prior_variance·I).

    ``batch_size=None`` uses every row per gradient; otherwise minibatches of ``batch_size``
    rows are drawn in Rust, without replacement unless ``replace=True``, scaled by N/b
    (``seed`` only seeds the model's own :meth:`gradient` calls; chains draw their minibatches
    from their own generators)."""
    return _sgmcmc.logistic_regression(
        _floats(X, "X", 2), _floats(y, "y", 1), prior_variance=prior_variance,
        batch_size=_batch_size(batch_size), replace=replace, seed=_integer("seed", seed, 0),
    )


def LinearRegression(X, y, *, noise_variance=1.0, prior_variance=10.0, batch_size=None,
                     replace=False, seed=0):
    """Bayesian linear regression y ~ N(Xθ, noise_variance), prior N(0, prior_variance·I).

    Minibatches as for :func:`LogisticRegression`."""
    return _sgmcmc.linear_regression(
        _floats(X, "X", 2), _floats(y, "y", 1), noise_variance=noise_variance,
        prior_variance=prior_variance, batch_size=_batch_size(batch_size), replace=replace,
        seed=_integer("seed", seed, 0),
    )


def GaussianMean(X, *, noise_variance=1.0, prior_variance=10.0, batch_size=None, replace=False,
                 seed=0):
    """The mean θ of the rows xᵢ ~ N(θ, noise_variance·I), prior N(0, prior_variance·I).

    Minibatches as for :func:`LogisticRegression`."""
    return _sgmcmc.gaussian_mean(
        _floats(X, "X", 2), noise_variance=noise_variance, prior_variance=prior_variance,
        batch_size=_batch_size(batch_size), replace=replace, seed=_integer("seed", seed, 0),
    )


def polynomial(a, b, gamma):
    """The decaying step size h_t = a(b + t)^−γ of Welling & Teh 2011 (t counts steps from 0)."""
    return {"kind": "polynomial", "a": float(a), "b": float(b), "gamma": float(gamma)}


def cyclical(h0, cycle, exploration, noise_off=True):
    """The cyclical step size of Zhang et al. 2020: h_t = h0/2 · (cos(π (t mod cycle)/cycle) + 1).

    The first ``exploration`` fraction of each cycle explores, and the rest samples. With
    ``noise_off`` (the default, cSG-MCMC's Alg. 1) the exploration steps run at temperature 0,
    i.e. with the injected noise off. ``sample_stats["sampling_stage"]`` marks the draws of
    sampling stages, which are the draws to keep."""
    return {"kind": "cyclical", "h0": float(h0), "cycle": int(cycle),
            "exploration": float(exploration), "noise_off": bool(noise_off)}


def _initial_step(schedule):
    """The schedule's first step size, or a :class:`SettingError` naming ``schedule`` for
    anything but a dict of :func:`polynomial` or :func:`cyclical` (the Rust side checks the
    values)."""
    kind = schedule.get("kind") if isinstance(schedule, dict) else None
    keys = {"polynomial": ("a", "b", "gamma"), "cyclical": ("h0",)}.get(kind)
    if keys is None:
        raise _setting("schedule", "schedule must be a dict made by sgmcmc.polynomial or "
                                   f"sgmcmc.cyclical, not {schedule!r}")
    values = [schedule.get(k) for k in keys]
    if not all(isinstance(v, (int, float, np.integer, np.floating)) for v in values):
        raise _setting("schedule", f"a {kind} schedule needs numbers {', '.join(keys)}, "
                                   f"not {schedule!r}")
    if kind == "polynomial":
        a, b, gamma = values
        return a * b ** -gamma if b > 0 else a
    return values[0]


@dataclasses.dataclass(frozen=True)
class CFunction:
    """A gradient given as a C function pointer, called from Rust threads without the GIL.

    ``gradient`` is the address (an ``int``: numba's ``cfunc(...).address``, or
    ``ctypes.cast(f, ctypes.c_void_p).value``) of a function with the C ABI's gradient signature
    ``void grad(const double* theta, double* grad, size_t n, void* ctx)``; ``energy``
    optionally that of ``double energy(const double* theta, size_t n, void* ctx)`` (HMC and
    SG-NPHMC need it); ``hessian_diagonal`` optionally that of a function with the gradient's
    signature that writes the diagonal of ∇²U(θ) instead (pSGLD's Γ correction,
    ``correction=True``, needs it); ``context`` is passed as ``ctx``.

    **Minibatches drawn by sgmcmc.** Given ``examples`` (N) and ``batch_size`` (b), sgmcmc draws
    each gradient's b rows itself, with or without ``replace``-ment, from chain c's minibatch
    generator ``Pcg64(seed, 2**64 + c)`` exactly as the built-in models do, and passes them in:
    the signatures are then ``void grad(const double* theta, double* grad, size_t n,
    const int64_t* rows, size_t batch, void* ctx)`` and ``double energy(const double* theta,
    size_t n, const int64_t* rows, size_t batch, void* ctx)`` (the energy on the last
    gradient's rows; ``hessian_diagonal`` likewise takes the gradient's rows signature and
    gets the last gradient's rows). The function returns the minibatch estimate itself (N/b times the rows'
    sum, plus the prior's term). Such a chain is reproducible from ``seed`` and resumes with
    ``fit.state``; a function that draws its own rows (numba's ``np.random`` is seeded from OS
    entropy per thread) is neither. ``examples`` alone passes all N rows at every call.

    The functions must be safe to call from several threads at once (one per chain) and stay
    alive, with ``context``, for the whole run: a wrong address or signature crashes the
    process, as it would in C.
    """

    gradient: int
    dim: int
    energy: Optional[int] = None
    context: int = 0
    examples: Optional[int] = None
    batch_size: Optional[int] = None
    replace: bool = False
    hessian_diagonal: Optional[int] = None
    _kind = "cfunction"

    def __post_init__(self):
        # Named errors at construction instead of PyO3's unnamed OverflowError or TypeError at
        # the run (an address of 0 and the rows settings' combinations are checked there).
        for name in ("gradient", "energy", "hessian_diagonal", "context"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, (int, np.integer))
                                      or not 0 <= value <= _U64_MAX):
                what = ("an address (an int)" if name == "context" else
                        "a function's address (an int such as numba's cfunc(...).address)")
                raise _setting(name, f"{name} must be {what}, not {value!r}")
        _integer("dim", self.dim, 1)
        for name in ("examples", "batch_size"):
            if getattr(self, name) is not None:
                _integer(name, getattr(self, name), 1)

    @property
    def gradient_address(self) -> int:
        return int(self.gradient)

    @property
    def energy_address(self) -> Optional[int]:
        return None if self.energy is None else int(self.energy)

    @property
    def hessian_diagonal_address(self) -> Optional[int]:
        return None if self.hessian_diagonal is None else int(self.hessian_diagonal)


@dataclasses.dataclass(frozen=True)
class PythonModel:
    """A gradient given as a Python callable ``gradient(theta) -> array`` (NumPy, JAX,
    PyTorch, ...), optionally ``energy(theta) -> float`` for HMC and SG-NPHMC, and optionally
    ``hessian_diagonal(theta) -> array``, the diagonal of ∇²U(θ), for pSGLD's Γ correction.

    Each call takes the GIL, so chains of a Python model run one gradient at a time; the
    README measures what that costs per step. An exception in the callable stops the chain
    with :class:`StepError` (its ``__cause__`` is the exception), the state as before that step.
    """

    gradient: Callable[[np.ndarray], Any]
    dim: int
    energy: Optional[Callable[[np.ndarray], float]] = None
    hessian_diagonal: Optional[Callable[[np.ndarray], Any]] = None
    _kind = "python"

    def __post_init__(self):
        _integer("dim", self.dim, 1)
        for name in ("gradient", "energy", "hessian_diagonal"):
            value = getattr(self, name)
            if (value is not None or name == "gradient") and not callable(value):
                raise _setting(name, f"{name} must be callable, not {value!r}")


@dataclasses.dataclass
class Fit:
    """The result of :func:`sample`.

    ``draws`` has shape (chains, draws, dim); ``sample_stats`` maps ``step_size``,
    ``kinetic_temperature``, ``thermostat`` and ``acceptance_rate`` to (chains, draws) arrays,
    NaN where the sampler has no such quantity (SGLD's kinetic temperature, HMC's thermostat).
    ``interrupted`` is True when Ctrl-C stopped the run (every chain is then cut to the
    shortest). ``state`` holds where each chain stopped; ``sample(..., resume=fit.state)``
    continues the chains exactly, and it pickles."""

    draws: np.ndarray
    sample_stats: dict
    sampler: str
    settings: dict
    seed: int
    interrupted: bool = False
    state: Any = None
    inverse_mass: Optional[np.ndarray] = None
    m_steps: Optional[list] = None

    def to_inference_data(self, names=None):
        """The draws as ``arviz.InferenceData`` (``posterior`` and ``sample_stats`` groups).

        ``names`` optionally names the parameters (default one variable ``theta`` of shape
        (dim,))."""
        import arviz as az

        if names is None:
            posterior = {"theta": self.draws}
        else:
            if len(names) != self.draws.shape[2]:
                raise _layout(
                    "names", f"names has {len(names)} entries for {self.draws.shape[2]} parameters")
            posterior = {n: self.draws[:, :, i] for i, n in enumerate(names)}
        stats = {k: v for k, v in self.sample_stats.items()
                 if not np.all(np.isnan(v)) and k != "sampling_stage"}
        if not np.all(self.sample_stats["sampling_stage"] == 1.0):
            stats["sampling_stage"] = self.sample_stats["sampling_stage"].astype(bool)
        idata = az.from_dict(posterior=posterior, sample_stats=stats)
        attrs = {"sampler": self.sampler, "seed": self.seed, "inference_library": "sgmcmc",
                 "interrupted": int(self.interrupted),
                 **{f"setting_{k}": v for k, v in self.settings.items()}}
        for group in idata.groups():
            idata[group].attrs.update(attrs)
        return idata


def _progress_bar(total_label):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # no tqdm: no progress bar
        return None
    bar = tqdm(total=1, desc=total_label, unit="step", unit_scale=True)

    def update(done, total):
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return update


def sample(model, sampler="sgnht", *, step_size=None, chains=4, draws=1000, warmup=0, thin=1,
           seed=0, init=None, calibration=None, schedule=None, resume=None, first_chain=0,
           mcem=None, progress=True, return_inferencedata=False, **settings):
    """Runs ``chains`` chains of ``sampler`` on ``model`` and returns their draws.

    ``model`` is a built-in model (:func:`LogisticRegression`, :func:`LinearRegression`,
    :func:`GaussianMean`, :func:`Gaussian`), a :class:`CFunction` or a :class:`PythonModel`.
    ``sampler`` is one of :data:`SAMPLERS`; ``step_size`` and ``**settings`` are the Rust
    API's settings of that sampler, with its defaults (:func:`defaults` lists them):

    ========== ======================================================================
    sgld       temperature=1
    psgld      temperature=1, decay=0.99, offset=1e-5, correction=False
    sghmc      temperature=1, friction=1, noise_estimate=0, integrator="splitting"
    sgnht      temperature=1, diffusion=1, integrator="splitting", thermostat_rule="derived"
    msgnht     as sgnht, one thermostat per coordinate
    sgmgt      temperature=1, kinetic_exponent=1, softening=5, sigma_p=1, gamma=1,
               sigma_theta=0, sigma_xi=0, noise_estimate=0, resample_momentum_steps=100,
               resample_thermostat_steps=100, integrator="splitting"
    sgmgt_d    as sgmgt with sigma_theta=sigma_xi=0.01
    hmc        temperature=1, leapfrog_steps=10 (needs the potential)
    sgnphmc    temperature=1, leapfrog_steps=10, thermostat_mass=1, energy_noise=0,
               gradient_noise=0 (needs the potential)
    ========== ======================================================================

    Each chain takes ``warmup`` steps, then ``draws × thin`` steps keeping every ``thin``-th
    position. Chain c starts at ``init[c]`` (default: zeros) and draws its noise from
    ``Pcg64::new(seed, c)`` and its minibatches from ``Pcg64::new(seed, 2⁶⁴ + c)``, so the
    same call gives the same draws, and the Rust API with the same generators the same chain.

    ``calibration`` (``True`` or a dict of ``shape`` = "dense" | "diagonal", ``correction`` =
    "friction" | "subtract", ``weight`` = 0.02, ``raise_friction`` = True, ``refresh`` = 100)
    wraps sghmc, sgnht, msgnht, sgmgt or sgmgt_d in the Rust API's ``Calibrated``: the
    minibatch noise is estimated online from a built-in data model's per-example gradients and
    discounted (Ding et al. 2014, App. D.2).

    ``mcem`` (``True`` or a dict of ``e_steps`` = 10, ``m_step_offset`` = 0,
    ``m_step_exponent`` = 0.75, ``shrinkage`` = 0.05, ``precision_bounds`` = (1e-4, 1e4),
    ``sample_count`` (a fixed S_count; default adaptive from 100), ``bias_correction`` = True,
    ``shape`` = "diagonal" or "dense") wraps hmc, sghmc, sgnht or sgnphmc in the Rust API's
    ``Mcem``, which learns the mass by Monte Carlo EM (Roychowdhury & Parthasarathy 2017). One
    recorded step is then one E-step of ``e_steps`` inner steps; ``Fit.inverse_mass`` holds each
    chain's learned M⁻¹, (chains, dim) for a diagonal mass and (chains, dim, dim) for a dense
    one.

    ``schedule`` (:func:`polynomial` or :func:`cyclical`) sets the step size h_t of every step,
    as the Rust API's ``run_scheduled`` and ``run_cyclical`` do; ``step_size`` may then be
    omitted. ``resume=fit.state`` continues the chains of an earlier run exactly where they
    stopped (their positions, momenta, thermostats, generators, minibatch order and schedule
    clock; ``init``, ``seed`` and ``chains`` are then not used: the run has the saved chains).
    ``first_chain`` numbers the chains from that index, so that chains split over processes
    (``sgmcmc.ray``) draw what one call would.

    Returns a :class:`Fit`, or ``arviz.InferenceData`` with ``return_inferencedata=True``.
    """
    if not isinstance(model, (CFunction, PythonModel, _sgmcmc.BuiltinModel)):
        raise TypeError("model must be a built-in model (sgmcmc.LogisticRegression, ...), an "
                        f"sgmcmc.CFunction or an sgmcmc.PythonModel, not {type(model).__name__}")
    dim = getattr(model, "dim", None)
    draws, warmup, thin, seed, first_chain = (
        _integer(name, value, least) for name, value, least in (
            ("draws", draws, 0), ("warmup", warmup, 0), ("thin", thin, 1), ("seed", seed, 0),
            ("first_chain", first_chain, 0)))
    if resume is None:
        chains = _integer("chains", chains, 1)
    else:
        if not isinstance(resume, ChainStates):
            raise _setting("resume", f"resume must be a run's fit.state, not {resume!r}")
        chains = len(resume)
        if resume.sampler != sampler:
            raise _setting("resume", f"the saved chains ran {resume.sampler}, not {sampler}")
    if step_size is None:
        if schedule is None:
            raise _setting("step size h", f"{sampler} needs a step_size (or a schedule)")
        step_size = _initial_step(schedule)
    if init is None:
        if dim is None:
            raise _layout("init", "init is needed when the model does not know its dimension")
        init = np.zeros((chains, dim))
    else:
        init = _floats(init, "init")
        if init.ndim == 1:
            init = np.tile(init, (chains, 1))
    if init.ndim != 2 or init.shape[0] != chains:
        raise _layout("init", f"init must have shape ({chains}, dim) or (dim,), not {init.shape}")
    if calibration is True:
        calibration = {}
    elif calibration is False:
        calibration = None
    if mcem is True:
        mcem = {}
    elif mcem is False:
        mcem = None
    settings = dict(settings, step_size=step_size)
    callback = _progress_bar(f"{sampler} × {chains}") if progress else None
    out = _sgmcmc.run(sampler, settings, model, init, warmup, draws, thin, seed, callback,
                      calibration, schedule, first_chain, resume, mcem)
    if out["interrupted"]:
        warnings.warn(
            f"interrupted: kept the first {out['draws'].shape[1]} draws of each chain",
            RuntimeWarning, stacklevel=2)
    fit = Fit(out["draws"], out["sample_stats"], sampler, settings, seed, out["interrupted"],
              out.get("state"), out.get("inverse_mass"), out.get("m_steps"))
    return fit.to_inference_data() if return_inferencedata else fit
