"""Chains and posteriors of :func:`sgmcmc.sample` as Ray tasks, merged on the caller.

``import sgmcmc`` does not import Ray; ``import sgmcmc.ray`` does (``pip install "sgmcmc[ray]"``).

>>> import ray, numpy as np, sgmcmc.ray
>>> ray.init()                                   # or ray.init(address="auto"), see below
>>> spec = sgmcmc.ray.Model("gaussian", np.zeros(2), np.ones(2))
>>> fit = sgmcmc.ray.sample(spec, "sgnht", step_size=0.05, chains=16, tasks=4, draws=1000)
>>> fit.draws.shape
(16, 1000, 2)

* :func:`sample` splits ``chains`` chains into ``tasks`` blocks; each Ray task builds the model
  in its worker and runs its block with :func:`sgmcmc.sample` (the Rust kernel, chains on Rust
  threads). The blocks are concatenated along the chain axis into one :class:`sgmcmc.Fit`, or one
  ``arviz.InferenceData`` with ``return_inferencedata=True``.
* :func:`map_posteriors` runs one task per model spec (one model per data shard, or a
  hyperparameter grid) and returns a list, one result per spec, in the specs' order.
* :func:`consensus` combines per-shard draws by Scott et al.'s (2016) precision-weighted
  average (consensus Monte Carlo); ``docs/distributed.md`` says when that is exact.

**Models.** The built-in models are Rust objects and do not pickle, so a task gets a recipe and
builds the model in the worker: a :class:`Model` (the built-in's name and its constructor's
arguments, e.g. ``Model("logistic_regression", X, y, batch_size=32)``) or any picklable
zero-argument callable that returns a model (e.g. ``functools.partial(sgmcmc.LinearRegression,
X, y)``). A spec is put in Ray's object store once (``ray.put``) and every task of a
:func:`sample` call reads that one copy. A :class:`sgmcmc.PythonModel` is shipped as it is
(cloudpickle) when its callables pickle; a :class:`sgmcmc.CFunction` is refused, because its
addresses mean nothing in another process (wrap its construction, e.g. the numba ``cfunc``, in
a factory instead).

**Seeds.** Chain c of the whole run draws from ``Pcg64::new(seed, c)`` (and its minibatches from
``Pcg64::new(seed, 2⁶⁴ + c)``), exactly as chain c of one ``sgmcmc.sample(..., seed=seed)``
call, however the chains are split over tasks: each task runs its block with
:func:`sgmcmc.sample`'s ``first_chain``. ``fit.ray_tasks`` records the split.

**An existing cluster.** Connect before calling, and these functions use that connection::

    import ray
    ray.init(address="auto")                    # on a node of the cluster (after `ray start`)
    ray.init(address="ray://head-host:10001")   # from outside it, through Ray Client

If Ray is not initialised, :func:`sample` and :func:`map_posteriors` call ``ray.init()``, which
starts a local instance (or connects to ``RAY_ADDRESS`` when that is set). Every worker must be
able to ``import sgmcmc``: run the workers from the same image or environment, or ship the
package with a runtime environment, e.g.
``ray.init(address=..., runtime_env={"pip": ["/shared/sgmcmc-0.1.0-cp39-abi3-linux_x86_64.whl"]})``
(a wheel built once by ``pip wheel ./python``; the abi3 wheel serves every CPython ≥ 3.9 on
the same platform).

**Resources.** A task runs its chains on Rust threads; by default it reserves one CPU
(``num_cpus=1``) per task, so Ray runs as many tasks at once as the cluster has CPUs, and the
tasks are spread over the nodes (``scheduling_strategy="SPREAD"``). Give
``num_cpus=chains_per_task`` to reserve a core for each chain, and ``ray_options`` for anything
else ``.options()`` of a Ray remote function takes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
import ray

import sgmcmc

__all__ = ["Model", "consensus", "map_posteriors", "sample"]


_BUILTINS = {
    "gaussian": "Gaussian",
    "logistic_regression": "LogisticRegression",
    "linear_regression": "LinearRegression",
    "gaussian_mean": "GaussianMean",
}


@dataclasses.dataclass(frozen=True, eq=False)
class Model:
    """A picklable recipe for a built-in model: ``Model(kind, *args, **kwargs)`` builds
    ``sgmcmc.<Kind>(*args, **kwargs)`` in the worker.

    ``kind`` is ``"gaussian"`` (``mean, cov``), ``"logistic_regression"`` (``X, y``),
    ``"linear_regression"`` (``X, y``) or ``"gaussian_mean"`` (``X``), with the keyword
    arguments of those constructors (``prior_variance``, ``batch_size``, ``replace``, ...)."""

    kind: str
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)

    def __init__(self, kind, *args, **kwargs):
        if kind not in _BUILTINS:
            raise sgmcmc._setting(
                "kind", f"kind must be one of {sorted(_BUILTINS)}, not {kind!r}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "args", tuple(args))
        object.__setattr__(self, "kwargs", dict(kwargs))

    def build(self):
        """The model itself (a Rust object: build it in the process that samples)."""
        return getattr(sgmcmc, _BUILTINS[self.kind])(*self.args, **self.kwargs)

    @property
    def dim(self) -> int:
        """The number of parameters, without building the model."""
        if self.kind == "gaussian":
            return len(np.asarray(self.args[0] if self.args else self.kwargs["mean"]))
        x = self.args[0] if self.args else self.kwargs["X"]
        return np.asarray(x).shape[1]


def _check_spec(spec):
    if isinstance(spec, Model) or isinstance(spec, sgmcmc.PythonModel):
        return spec
    if isinstance(spec, sgmcmc.CFunction):
        raise TypeError(
            "a CFunction's addresses are only valid in the process that made them: pass a "
            "zero-argument factory that builds the cfunc and the CFunction in the worker")
    if callable(spec):
        return spec
    raise TypeError(
        f"a Ray task needs a picklable recipe for the model, not {type(spec).__name__}: the "
        "built-in models are Rust objects that do not pickle; pass sgmcmc.ray.Model(kind, "
        "*args, **kwargs) or a zero-argument callable that returns the model")


def _build(spec):
    if isinstance(spec, Model):
        return spec.build()
    if isinstance(spec, sgmcmc.PythonModel):
        return spec
    return spec()


@ray.remote
def _run_block(spec, sampler, seed, first_chain, chains, init, kwargs, resume=None):
    model = _build(spec)
    fit = sgmcmc.sample(model, sampler, chains=chains, seed=seed, first_chain=first_chain,
                        init=init, progress=False, resume=resume, **kwargs)
    # `fit.state` (the chains' checkpoints) pickles, so it comes back with the draws.
    return fit, ray.get_runtime_context().get_node_id()


def _split(chains, tasks):
    base, extra = divmod(chains, tasks)
    sizes = [base + (k < extra) for k in range(tasks)]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    return list(zip(starts.tolist(), sizes))


def _init_block(init, start, size):
    if init is None:
        return None
    init = np.asarray(init, dtype=np.float64)
    return init if init.ndim == 1 else init[start:start + size]


def _merge(fits, infos, names, return_inferencedata):
    first = fits[0]
    draws = np.concatenate([f.draws[:, : min(g.draws.shape[1] for g in fits)] for f in fits])
    kept = draws.shape[1]
    stats = {k: np.concatenate([f.sample_stats[k][:, :kept] for f in fits])
             for k in first.sample_stats}
    states = [f.state for f in fits]
    state = (sgmcmc.ChainStates.concat(states) if all(s is not None for s in states)
             else None)
    fit = sgmcmc.Fit(draws, stats, first.sampler, first.settings, infos[0]["seed"],
                     any(f.interrupted for f in fits), state)
    fit.ray_tasks = infos
    if not return_inferencedata:
        return fit
    idata = fit.to_inference_data(names)
    attrs = {"ray_tasks": len(infos),
             "ray_nodes": len({i["node_id"] for i in infos})}
    for group in idata.groups():
        idata[group].attrs.update(attrs)
    return idata


def _resources(num_cpus, ray_options):
    return _run_block.options(**{"num_cpus": num_cpus, "scheduling_strategy": "SPREAD",
                                 **(ray_options or {})})


def _connect():
    if not ray.is_initialized():
        ray.init()  # what Ray's own first task would do: a local instance, or RAY_ADDRESS


def _get(refs):
    """``ray.get``, raising a task's own exception (an :class:`sgmcmc.SettingError` keeps its
    ``.param``, a :class:`sgmcmc.StepError` its ``.chain``, ``.step`` and ``.partial``), chained
    to Ray's error, which holds the worker's traceback."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as err:
        cause = err.cause
        if not isinstance(cause, Exception):
            raise
        # The package's exception classes pickle by reference (`sgmcmc.X`), so a task's error
        # arrives as the package's own class. Should a worker run a build whose classes are
        # still named `_sgmcmc.X`, they arrive as copies of the class (cloudpickle by value):
        # raise the package's own class then, with the copy's arguments and attributes.
        own = getattr(sgmcmc, type(cause).__name__, None)
        if (own in (sgmcmc.SettingError, sgmcmc.LayoutError, sgmcmc.StepError)
                and type(cause) is not own):
            copy = own(*cause.args)
            copy.__dict__.update(getattr(cause, "__dict__", {}))
            copy.__cause__ = cause.__cause__
            cause = copy
        raise cause from err


def sample(model, sampler="sgnht", *, chains, tasks=None, seed=0, init=None, names=None,
           return_inferencedata=False, num_cpus=1, ray_options=None, resume=None,
           **sample_kwargs):
    """Runs ``chains`` chains of ``sampler`` as ``tasks`` Ray tasks and merges them.

    ``model`` is a :class:`Model`, a zero-argument callable returning a model, or a
    :class:`sgmcmc.PythonModel` (see the module's docstring). ``tasks`` defaults to
    ``min(chains, number of CPUs in the cluster)``; the chains are split into ``tasks``
    consecutive blocks as evenly as possible. ``init`` is ``(dim,)`` or ``(chains, dim)``;
    ``**sample_kwargs`` (``step_size``, ``draws``, ``warmup``, ``thin``, ``calibration`` and the
    sampler's settings) go to :func:`sgmcmc.sample` in every task. ``num_cpus`` is what each
    task reserves; the tasks are spread over the nodes (``scheduling_strategy="SPREAD"``), and
    ``ray_options`` (a dict for ``.options()`` of the remote function: ``resources``,
    ``runtime_env``, ``scheduling_strategy``, ...) overrides that.

    ``resume`` is an earlier run's ``fit.state`` (its ``chains`` chains, from this function or
    :func:`sgmcmc.sample`): each task continues its block of them, bit for bit.

    Returns one :class:`sgmcmc.Fit` whose draws are (chains, draws, dim), chain c being chain c
    of the whole run (``fit.state`` holds every chain's state, for ``resume``), or its ``arviz.InferenceData`` (``names`` as for
    :meth:`sgmcmc.Fit.to_inference_data`) with ``return_inferencedata=True``. ``fit.ray_tasks``
    lists each task's first chain, chain count, seed and the Ray node it ran on."""
    spec = _check_spec(model)
    chains = sgmcmc._integer("chains", chains, 1)
    _connect()
    if tasks is None:
        tasks = max(1, min(chains, int(ray.cluster_resources().get("CPU", 1))))
    if not isinstance(tasks, (int, np.integer)) or not 1 <= tasks <= chains:
        raise sgmcmc._setting("tasks", f"tasks must be an integer in 1..={chains}, not {tasks!r}")
    if resume is not None and len(resume) != chains:
        raise sgmcmc._layout("init", f"resuming {len(resume)} chains with chains={chains}")
    if init is not None and np.ndim(init) == 2 and np.shape(init)[0] != chains:
        raise sgmcmc._layout("init", f"init must have shape ({chains}, dim) or (dim,), "
                             f"not {np.shape(init)}")
    spec_ref = ray.put(spec)  # one copy in the object store, read by every task
    refs, infos = [], []
    for k, (start, size) in enumerate(_split(chains, tasks)):
        refs.append(_resources(num_cpus, ray_options).remote(
            spec_ref, sampler, seed, start, size, _init_block(init, start, size),
            sample_kwargs, None if resume is None else resume[start:start + size]))
        infos.append({"first_chain": start, "chains": size, "seed": seed})
    results = _get(refs)
    for info, (_, node) in zip(infos, results):
        info["node_id"] = node
    return _merge([f for f, _ in results], infos, names, return_inferencedata)


def map_posteriors(specs: Sequence[Any], sampler="sgnht", *, chains=1, seed=0, overrides=None,
                   names=None, return_inferencedata=False, num_cpus=1, ray_options=None, **sample_kwargs):
    """Samples each of ``specs`` (independent posteriors: one model per data shard, a
    hyperparameter grid) in its own Ray task, ``chains`` chains each.

    ``overrides`` is an optional list, one dict per spec, of :func:`sgmcmc.sample` arguments that
    replace ``**sample_kwargs`` for that spec (a step size per shard, a grid over a sampler
    setting). Posterior i's chains are chains ``i·chains … (i+1)·chains − 1`` of ``seed``, so
    no two posteriors share noise. ``num_cpus`` and ``ray_options`` as for :func:`sample`; ``ray_options`` may also be a
    list, one dict per spec (e.g. a node-affinity ``scheduling_strategy`` that runs each shard's
    task on the node holding its data, with a factory spec that loads the shard there).

    Returns a list of :class:`sgmcmc.Fit` (or ``arviz.InferenceData`` with
    ``return_inferencedata=True``), one per spec in the specs' order: a list and not one
    InferenceData with a ``posterior`` dimension, because the posteriors of a grid or of shards
    may differ in dimension, draws and settings. ``xarray.concat([...], dim="shard")`` stacks
    them when they agree."""
    specs = [_check_spec(s) for s in specs]
    # Checked here: inside the tasks a bad count surfaced as the derived first_chain's error.
    chains = sgmcmc._integer("chains", chains, 1)
    _connect()
    if overrides is not None and len(overrides) != len(specs):
        raise sgmcmc._layout("overrides", f"overrides has {len(overrides)} entries for "
                             f"{len(specs)} specs")
    per_spec = isinstance(ray_options, (list, tuple))
    if per_spec and len(ray_options) != len(specs):
        raise sgmcmc._layout("ray_options", f"ray_options has {len(ray_options)} entries for "
                             f"{len(specs)} specs")
    refs, infos = [], []
    for i, spec in enumerate(specs):
        kwargs = dict(sample_kwargs, **(overrides[i] if overrides is not None else {}))
        init = kwargs.pop("init", None)
        options = ray_options[i] if per_spec else ray_options
        refs.append(_resources(num_cpus, options).remote(
            ray.put(spec), sampler, seed, i * chains, chains, init, kwargs))
        infos.append({"first_chain": i * chains, "chains": chains, "seed": seed})
    results = _get(refs)
    out = []
    for info, (fit, node) in zip(infos, results):
        info["node_id"] = node
        out.append(_merge([fit], [info], names, return_inferencedata))
    return out


def _draws_of(x):
    if isinstance(x, sgmcmc.Fit):
        return x.draws
    if hasattr(x, "posterior"):  # InferenceData: stack the variables along the last axis
        post = x.posterior
        parts = [post[v].values.reshape(post[v].shape[0], post[v].shape[1], -1)
                 for v in post.data_vars]
        return np.concatenate(parts, axis=2)
    return np.asarray(x, dtype=np.float64)


def consensus(draws_per_shard, weights=None):
    """Consensus Monte Carlo (Scott et al. 2016): the precision-weighted average of the shards'
    draws, draw by draw.

    ``draws_per_shard`` is a list of S arrays (chains, draws, dim) (or :class:`sgmcmc.Fit` or
    InferenceData), shard s sampled from its subposterior p(θ)^(1/S) p(x_s | θ), all of one
    shape. Draw g of the result is ``(Σ_s W_s)⁻¹ Σ_s W_s θ_s,g`` with ``W_s`` the inverse of
    shard s's sample covariance (or the given ``weights``, S matrices (dim, dim)). It is exact
    when every subposterior is Gaussian (linear regression with known noise, a Gaussian mean)
    and otherwise an approximation (docs/distributed.md). Returns an array (chains, draws, dim)."""
    xs = [_draws_of(d) for d in draws_per_shard]
    if len(xs) < 1:
        raise sgmcmc._layout("draws_per_shard", "draws_per_shard is empty")
    shape = xs[0].shape
    for s, x in enumerate(xs):
        if x.ndim != 3 or x.shape != shape:
            raise sgmcmc._layout("draws_per_shard",
                                 f"shard {s} has shape {x.shape}, shard 0 {shape}: every shard "
                                 "needs (chains, draws, dim) of one shape")
    dim = shape[2]
    if weights is None:
        weights = [np.linalg.inv(np.atleast_2d(np.cov(x.reshape(-1, dim), rowvar=False)))
                   for x in xs]
    weights = [np.atleast_2d(np.asarray(w, dtype=np.float64)) for w in weights]
    total = np.sum(weights, axis=0)
    weighted = sum(x @ w.T for x, w in zip(xs, weights))
    return np.linalg.solve(total, weighted.reshape(-1, dim).T).T.reshape(shape)
