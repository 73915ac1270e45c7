"""One way to run a dataset through evaluators (:mod:`.evaluation`): :func:`evaluate`, its
executors and the run's record in the store; the run session every command shares
(:mod:`.session`: open or resume, stream, item contents, record); the batch scheduler every evaluator's samples go
through (:mod:`.batch`: stages, the item index, failures as data). Names are imported on first use."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .batch import aevaluate_many, astream_many, evaluate_many
    from .evaluation import Executor, LocalExecutor, RayExecutor, RunResult, aevaluate, astream, evaluate, record_run
    from .session import RunSession

_LAZY = {
    "Executor": ".evaluation",
    "LocalExecutor": ".evaluation",
    "RayExecutor": ".evaluation",
    "RunResult": ".evaluation",
    "RunSession": ".session",
    "aevaluate": ".evaluation",
    "aevaluate_many": ".batch",
    "astream_many": ".batch",
    "evaluate_many": ".batch",
    "astream": ".evaluation",
    "evaluate": ".evaluation",
    "record_run": ".evaluation",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
