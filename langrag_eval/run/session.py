"""One stored run from open to finish, the one way every command (and a library caller) runs one:
open or resume it, judge its samples, store what each item held, and record the summaries.

A :class:`RunSession` owns the life of a run in a store:

- :meth:`RunSession.open` creates the run or finds it again (that is how a run resumes: keyed by
  its kind, settings and input digests, under the run's lease), and records the command line that
  made it when there is one;
- :meth:`~RunSession.evaluate` runs evaluators over the samples, all at once, on the session's
  executor (this process, or Ray's actors); :meth:`~RunSession.astream` runs one over a dataset of
  any size, yielding each ``(sample, result)`` as it is done, and stores each item's content as it
  passes (the evaluator's ``item_content`` hook is stored by the scheduler itself);
- :meth:`~RunSession.record` and :meth:`~RunSession.record_summaries` store what the run produced
  (each evaluator's typed :class:`~langrag_eval.results.Summary` as ``summary/<name>``) and finish it.

A run that fails or is interrupted before it is recorded is left unfinished: its finished items stay
stored, and the same session opened again (same kind, settings and inputs) resumes it, judging only
what is missing.

>>> from langrag_eval import Judge, Sample
>>> from langrag_eval.grading import VragGrader
>>> from langrag_eval.runtime import RunStore
>>> from langrag_eval.testing import ScriptedModel
>>> store = RunStore(":memory:")
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[5]], Reason: [[Right.]]"]), store=store))
>>> session = RunSession.open(store, "run", {"evaluators": ["vrag"]})
>>> run, summaries = session.run_and_record([Sample(id="q1", question="Capital?", answer="Paris.",
...                                                 reference="Paris")], {"vrag": grader})
>>> summaries["vrag"].n, store.run(session.run_id)["summary"]
(1, {'samples': 1, 'evaluators': ['vrag']})
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..runtime.items import CONTENTS, ITEMS_PREFIX, content_row, item_contents_writer
from .batch import DECLARED_PREFIX
from .evaluation import aevaluate, astream, evaluate, record_run

if TYPE_CHECKING:
    from ..evaluator import Evaluator
    from ..results import Summary
    from ..runtime import RunStore
    from ..runtime.parts import PartWriter
    from .evaluation import Executor, RunResult

__all__ = ["COMMAND_ARTIFACT", "SUMMARY_PREFIX", "RunSession", "section_data"]

# each evaluator's typed summary, stored as ``summary/<name>``: what report, compare and gate read
SUMMARY_PREFIX = "summary/"
# the command line a run was made by, with its input files, so a listing of the store says what
# each run is (``store status``, ``report --list``)
COMMAND_ARTIFACT = "command"


@dataclass
class RunSession:
    """One run of ``store``, opened (:meth:`open`); ``executor``: where its items are judged
    (None: this process's event loop)."""

    store: RunStore
    run_id: str
    executor: Executor | None = None
    _writers: list[PartWriter] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def open(cls, store: RunStore, kind: str, config: dict[str, Any], *, run_id: str | None = None,
             judge: str | None = None, inputs: dict[str, str] | None = None, allow_changed: bool = False,
             wait: bool = True, on_wait: Callable[[str], None] | None = None,
             executor: Executor | None = None, command: Mapping[str, Any] | None = None) -> RunSession:
        """Open (or resume) the run of ``kind`` under its lease, keyed by ``config`` and the
        ``inputs``' digests unless ``run_id`` names it (see
        :meth:`~langrag_eval.runtime.RunStore.open_run`); ``command``: the command line that made
        it, recorded with it."""
        opened = store.open_run(kind, config, run_id, judge=judge, inputs=inputs, allow_changed=allow_changed,
                                wait=wait, on_wait=on_wait)
        if command is not None:
            store.put_artifact(opened, COMMAND_ARTIFACT, dict(command))
        return cls(store, opened, executor)

    def evaluate(self, samples: Iterable[Any], evaluators: Any, *, concurrency: int | None = None,
                 progress: bool | None = None) -> RunResult:
        """Every evaluator over ``samples``, at once, on the session's executor: stored as each
        item finishes, finished items of an earlier pass read back instead of judged again."""
        return evaluate(samples, evaluators, store=self.store, run_id=self.run_id, concurrency=concurrency,
                        progress=progress, executor=self.executor)

    async def astream(self, samples: Iterable[Any], evaluator: Evaluator[Any, Any], *, name: str,
                      total: int | None = None, concurrency: int | None = None,
                      contents: Callable[[Any, Any], Mapping[str, Any] | None] | None = None,
                      ) -> AsyncIterator[tuple[Any, Any]]:
        """``evaluator`` (named ``name``) over ``samples``, each ``(sample, result)`` yielded in
        input order as it is done. On this process the dataset is read a chunk at a time and never
        held whole; another executor judges it all first, then the pairs are read back in order.
        ``contents(sample, result)``: what the item asked and answered, stored as the run's
        ``item_contents`` as the items pass (None: nothing for that item), its last part when the
        run is recorded (:meth:`record`): a run stopped before keeps the parts already stored."""
        writer = item_contents_writer(self.store, self.run_id) if contents is not None else None
        if self.executor is None:
            pairs: AsyncIterator[tuple[Any, Any]] = astream(samples, evaluator, store=self.store, run_id=self.run_id,
                                                            concurrency=concurrency, total=total)
        else:
            held = list(samples)
            judged = (await aevaluate(held, {name: evaluator}, run_id=self.run_id, concurrency=concurrency,
                                      executor=self.executor))[name]
            pairs = _pairs(held, judged)
        if writer is not None:
            self._writers.append(writer)
        async for sample, result in pairs:
            if writer is not None and (row := contents(sample, result)) is not None:  # type: ignore[misc]
                writer.add(content_row(row))
            yield sample, result

    def record(self, artifacts: Mapping[str, Any], *, finished: Mapping[str, Any] | None = None) -> None:
        """Store each named artifact and, with ``finished``, the run's closing figures: the run is
        then finished (see :func:`~langrag_eval.run.record_run`). The items' contents streamed are
        completed first."""
        while self._writers:
            self._writers.pop(0).close()
        record_run(self.store, self.run_id, artifacts, finished=finished)

    def record_summaries(self, summaries: Mapping[str, Summary], *, finished: Mapping[str, Any],
                         evaluators: Mapping[str, Evaluator[Any, Any]] | None = None) -> None:
        """Store each evaluator's typed summary as ``summary/<name>`` and finish the run. With the
        ``evaluators``, also the data their declared report sections read
        (:func:`section_data`)."""
        artifacts = section_data(evaluators, summaries) if evaluators is not None else {}
        artifacts.update({f"{SUMMARY_PREFIX}{n}": s.model_dump(mode="json") for n, s in summaries.items()})
        self.record(artifacts, finished=finished)

    def run_and_record(self, samples: Iterable[Any], evaluators: Mapping[str, Evaluator[Any, Any]], *,
                       concurrency: int | None = None, finished: Mapping[str, Any] | None = None,
                       ) -> tuple[RunResult, dict[str, Summary]]:
        """:meth:`evaluate`, then each evaluator's summary recorded and the run finished with
        ``finished`` (default: the sample count and the evaluators' names)."""
        run = self.evaluate(samples, evaluators, concurrency=concurrency)
        summaries = {n: run.summary(n) for n in evaluators}
        self.record_summaries(summaries, finished=finished if finished is not None else
                              {"samples": len(run.samples), "evaluators": list(evaluators)},
                              evaluators=evaluators)
        return run, summaries

    def usage(self) -> dict[str, Any]:
        """The store's call and token totals for the run (``{"total": ..., "top_failure": ...}``)."""
        return self.store.usage(self.run_id)

    def reuse(self) -> Any:
        """What this process's batches of the run reused and judged (None when it ran none)."""
        return self.store.batch_counts(self.run_id)


def section_data(evaluators: Mapping[str, Evaluator[Any, Any]], summaries: Mapping[str, Summary]
                 ) -> dict[str, Any]:
    """What the evaluators' declared report sections read, by artifact name: the summary
    ``details`` of the evaluator whose :class:`~langrag_eval.results.Section` names an
    ``artifact``, so a run of several evaluators draws each one's own section (vRAG-Eval's grades,
    THELMA's metrics and diagnosis) as that evaluator's command does. An artifact two evaluators of
    the run would fill is left out, as its section could show only one of them; so is a summary
    without details, and a name the run's own records use."""
    claimed: dict[str, list[str]] = {}
    for name, evaluator in evaluators.items():
        for section in evaluator.declare().sections:
            if section.artifact:
                claimed.setdefault(section.artifact, []).append(name)
    out: dict[str, Any] = {}
    for artifact, names in claimed.items():
        details = summaries[names[0]].details if names[0] in summaries else None
        if len(names) == 1 and isinstance(details, dict) and details and not _reserved(artifact):
            out[artifact] = details
    return out


def _reserved(name: str) -> bool:
    return name == COMMAND_ARTIFACT or name.startswith((SUMMARY_PREFIX, DECLARED_PREFIX, ITEMS_PREFIX, CONTENTS))


async def _pairs(samples: list[Any], results: list[Any]) -> AsyncIterator[tuple[Any, Any]]:
    """Samples beside the results an executor judged, as :func:`astream` yields them."""
    for pair in zip(samples, results):
        yield pair
