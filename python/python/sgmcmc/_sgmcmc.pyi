"""Type stubs of the extension module sgmcmc._sgmcmc (python/src/*.rs)."""

from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

class SettingError(ValueError):
    """A sampler setting out of its range."""
    param: str

class LayoutError(ValueError):
    """An array of the wrong shape, or holding an invalid value."""
    buffer: str

class StepError(RuntimeError):
    """A step was abandoned; the chain's state is as before it."""
    chain: int
    step: int
    partial: dict[str, Any]

class BuiltinModel:
    """A built-in model: its data live in Rust."""
    @property
    def dim(self) -> int: ...
    def gradient(self, theta: npt.ArrayLike) -> npt.NDArray[np.float64]: ...
    def energy(self, theta: npt.ArrayLike) -> float: ...

class Stepper:
    """A chain stepped by ask/tell."""
    def __init__(self, sampler: str, init: npt.ArrayLike, *, seed: int = 0, chain: int = 0,
                 **settings: Any) -> None: ...
    def ask(self) -> npt.NDArray[np.float64]: ...
    def tell(self, gradient: npt.ArrayLike) -> dict[str, Optional[float]]: ...
    @property
    def position(self) -> npt.NDArray[np.float64]: ...
    @property
    def steps(self) -> int: ...

def gaussian(mean: npt.NDArray[np.float64], cov: npt.NDArray[np.float64]) -> BuiltinModel: ...
def logistic_regression(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], *,
                        prior_variance: float = 10.0, batch_size: Optional[int] = None,
                        replace: bool = False, seed: int = 0) -> BuiltinModel: ...
def linear_regression(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], *,
                      noise_variance: float = 1.0, prior_variance: float = 10.0,
                      batch_size: Optional[int] = None, replace: bool = False,
                      seed: int = 0) -> BuiltinModel: ...
def gaussian_mean(x: npt.NDArray[np.float64], *, noise_variance: float = 1.0,
                  prior_variance: float = 10.0, batch_size: Optional[int] = None,
                  replace: bool = False, seed: int = 0) -> BuiltinModel: ...
def defaults(sampler: str) -> dict[str, Any]: ...
def run(sampler: str, settings: dict[str, Any], model: Any, init: npt.NDArray[np.float64],
        warmup: int, draws: int, thin: int, seed: int,
        progress: Optional[Callable[[int, int], Any]] = None,
        calibration: Optional[dict[str, Any]] = None) -> dict[str, Any]: ...
def sgmcmc_dispatch_level() -> str: ...
def set_max_isa(level: str) -> None: ...
