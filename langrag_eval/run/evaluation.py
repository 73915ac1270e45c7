"""One way to run a dataset: samples through one or more evaluators, as one run in the store.

:func:`aevaluate` (and :func:`evaluate` from synchronous code) takes the samples, the evaluators,
the judge, store and run, the concurrency and progress, and an *executor*: where the items are
judged. :class:`LocalExecutor` (the default) judges them on this process's event loop; another
executor plugs in with one method: :class:`RayExecutor` (extra ``ray``, imported on first use) has
Ray actors judge the items together through a PostgreSQL run store. A provider batch API is a
judge, not an executor: pass ``judge=batch_judge(...)``. :func:`astream` runs one evaluator over a
dataset of any size, yielding each result as it is done instead of keeping them. What the run
produced is written to the store in one place, :func:`record_run`.

>>> from langrag_eval import Judge, Sample
>>> from langrag_eval.grading import VragGrader
>>> from langrag_eval.testing import ScriptedModel
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[5]], Reason: [[Right.]]"])))
>>> run = evaluate([Sample(id="q1", question="Capital?", answer="Paris.", reference="Paris")], grader)
>>> [g.score for g in run["vrag"]], run.summary("vrag").n
([5], 1)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigError
from ..runtime.concurrency import synchronous
from .batch import aevaluate_many, astream_many, check_text, check_unique_ids

if TYPE_CHECKING:
    from ..evaluator import Evaluator
    from ..runtime import Judge, RunStore
    from ..results import Summary

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "RunResult", "aevaluate", "astream", "evaluate", "record_run"]


def __getattr__(name: str) -> Any:
    # Ray's executor is imported on first use: importing the run layer loads nothing of Ray
    if name == "RayExecutor":
        from ..runtime.ray_executor import RayExecutor
        return RayExecutor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Executor(Protocol):
    """Where a run's items are judged. ``arun`` returns one result per sample, in input order,
    each a result or an ``Unscored``; with a store and a run id, finished items are stored and a
    re-run reads them back. An executor with ``evaluators_at_once = True`` is handed a run's
    evaluators together (concurrent ``arun`` calls); without it, one after the other."""

    async def arun(self, evaluator: Evaluator[Any, Any], samples: Sequence[Any], *, run_id: str | None,
                   store: RunStore | None, concurrency: int | None, progress: bool | None) -> list[Any]: ...


@dataclass(frozen=True)
class LocalExecutor:
    """This process's event loop: at most ``concurrency`` items of each evaluator in flight (default:
    the judge's), every evaluator of a run at once; evaluators sharing a judge share its limit on
    model calls, so running them together fills the judge's slots without exceeding them."""

    #: :func:`aevaluate` runs a run's evaluators together on this executor (an executor without
    #: this attribute is handed them one after the other)
    evaluators_at_once = True

    async def arun(self, evaluator: Evaluator[Any, Any], samples: Sequence[Any], *, run_id: str | None,
                   store: RunStore | None, concurrency: int | None, progress: bool | None) -> list[Any]:
        return await aevaluate_many(evaluator, samples, run_id=run_id, store=store, concurrency=concurrency,
                                    progress=progress)


@dataclass(frozen=True)
class RunResult:
    """What one run produced: per evaluator name, one result per sample in input order.

    ``run["vrag"]`` is the vRAG-Eval grader's results; :meth:`summary` its dataset summary."""

    run_id: str | None
    samples: list[Any]
    results: dict[str, list[Any]]
    evaluators: dict[str, Any] = field(repr=False)

    def __getitem__(self, name: str) -> list[Any]:
        return self.results[name]

    def summary(self, name: str, **options: Any) -> "Summary":
        """``name``'s typed dataset summary (its evaluator's ``summarize``, with ``options``)."""
        return self.evaluators[name].summarize(self.results[name], **options)


def _named(evaluators: Any) -> dict[str, Evaluator[Any, Any]]:
    if isinstance(evaluators, Mapping):
        named = dict(evaluators)
    else:
        many = list(evaluators) if isinstance(evaluators, (list, tuple)) else [evaluators]
        named = {}
        for e in many:
            name = e.task_name().split(":")[0]
            if name in named:
                raise ConfigError(f"two evaluators are named {name!r}: pass them as a mapping of names")
            named[name] = e
    if not named:
        raise ConfigError("no evaluator given: pass one, a list or a mapping of names to evaluators")
    return named


async def aevaluate(dataset: Iterable[Any], evaluators: Any, *, judge: Judge | None = None,
                    store: RunStore | None = None, run_id: str | None = None,
                    concurrency: int | None = None, progress: bool | None = None,
                    executor: Executor | None = None) -> RunResult:
    """Run every evaluator over ``dataset``, all of them at once (on the default executor).

    ``evaluators``: one evaluator, a list of them (named by their task: ``vrag``, ``thelma``, ...)
    or a mapping of names to evaluators. ``judge``: judge with this one instead of each evaluator's
    own. ``store`` / ``run_id``: the run store (default: the judge's) and the run the results go
    to, which makes the run resumable. ``concurrency``: each evaluator's items in flight at once
    (default: the judge's; evaluators that share a judge share its limit on calls). ``progress``:
    a progress bar on a terminal (off by default). ``executor``: where the items are judged
    (default :class:`LocalExecutor`). An exception inside an evaluator is that item's
    ``Unscored``; configuration errors raise, before any item is judged where the data is at fault."""
    samples = list(dataset)
    named = _named(evaluators)
    if judge is not None:
        named = {n: e.for_judge(judge) for n, e in named.items()}
    if concurrency is not None and concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    # the data is refused before any evaluator judges: a repeated id found by the last evaluator
    # must not cost the calls the first ones would have made by then
    check_text(samples)
    for evaluator in named.values():
        check_unique_ids(evaluator, samples)
    runner = executor if executor is not None else LocalExecutor()

    def judged(evaluator: Evaluator[Any, Any]) -> Any:
        return runner.arun(evaluator, samples, run_id=run_id, store=store, concurrency=concurrency,
                           progress=progress)

    if getattr(runner, "evaluators_at_once", False):
        results = dict(zip(named, await _all_at_once([judged(e) for e in named.values()])))
    else:  # an executor that places the work elsewhere (Ray's workers) takes one evaluator at a time
        results = {name: await judged(evaluator) for name, evaluator in named.items()}
    return RunResult(run_id=run_id, samples=samples, results=results, evaluators=named)


async def _all_at_once(runs: list[Any]) -> list[Any]:
    """Every run at once, results in the order given. The first that raises (a configuration
    error, an unavailable judge: an exception in one sample is already that sample's ``Unscored``)
    cancels the others, and its exception is raised as it is, not wrapped in a group."""
    tasks = [asyncio.ensure_future(r) for r in runs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


evaluate = synchronous(aevaluate)


async def astream(dataset: Iterable[Any], evaluator: Evaluator[Any, Any], *, judge: Judge | None = None,
                  store: RunStore | None = None, run_id: str | None = None,
                  concurrency: int | None = None, progress: bool | None = None,
                  total: int | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """One evaluator over a dataset of any size, on this process's event loop: ``dataset`` is read
    lazily, a chunk at a time, and each ``(sample, result)`` is yielded in input order as its chunk
    finishes, for the caller to write out and drop (see
    :func:`langrag_eval.run.batch.astream_many`); nothing is kept for a
    :class:`RunResult`. Stored and resumable like :func:`aevaluate`; ``total``: the item count,
    for the progress bar."""
    if concurrency is not None and concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    if judge is not None:
        evaluator = evaluator.for_judge(judge)
    async for pair in astream_many(evaluator, dataset, run_id=run_id, store=store, concurrency=concurrency,
                                   progress=progress, total=total):
        yield pair


def record_run(store: RunStore, run_id: str, artifacts: Mapping[str, Any], *,
               finished: Mapping[str, Any] | None = None) -> None:
    """Write what a run produced, in one place: each named artifact (a summary) and, with
    ``finished``, the run's closing figures. A typed :class:`~langrag_eval.results.Summary` is
    stored as its capability's artifact (its ``details``): the typed scores travel with each judgment."""
    from ..results import Summary

    for name, value in artifacts.items():
        store.put_artifact(run_id, name, value.details if isinstance(value, Summary) else value)
    if finished is not None:
        store.finish_run(run_id, dict(finished))
