"""One way to run a dataset through evaluators (:mod:`.evaluate`): :func:`evaluate`, its executors
and the run's record in the store. Names are imported on first use."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .evaluation import Executor, LocalExecutor, RayExecutor, RunResult, aevaluate, astream, evaluate, record_run

_LAZY = {
    "Executor": ".evaluation",
    "LocalExecutor": ".evaluation",
    "RayExecutor": ".evaluation",
    "RunResult": ".evaluation",
    "aevaluate": ".evaluation",
    "astream": ".evaluation",
    "evaluate": ".evaluation",
    "record_run": ".evaluation",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
