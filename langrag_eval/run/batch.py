"""The batch scheduler: one evaluator over many samples, the way every run judges them.

An evaluator judges one sample (:meth:`~langrag_eval.evaluator.Evaluator.aevaluate`) and declares
its scores; everything about running many lives here, once for every evaluator:

- one rule for sample identity: a sample's ``id`` must be unique in a batch (:class:`RepeatedIdError`);
  a sample without one is keyed by a digest of its content, so identical samples are one item;
- staging: an evaluator whose samples move through ``stages`` (THELMA: decompositions, then the
  matches that need them) keeps ``stages`` samples in flight per judge slot, so a slot whose sample
  is between stages still has a call queued; the judge itself bounds the calls, and as many samples
  again are read ahead when its limit is the concurrency asked, so a freed slot never waits for a
  sample to be read, stored and the next one rendered (:func:`in_flight`);
- failures as data: an exception raised on one sample is that sample's ``Unscored`` (cause
  ``evaluator_error``) and the others go on (:func:`~langrag_eval.runtime.batch.guarded`);
- the item index (what each sample asks, so runs of two app variants pair up), the run store
  (each result stored as it finishes, finished items read back on a re-run) and progress.

>>> from langrag_eval import Judge, Sample
>>> from langrag_eval.grading import VragGrader
>>> from langrag_eval.testing import ScriptedModel
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[4]], Reason: [[Close.]]"])))
>>> [g.score for g in evaluate_many(grader, [Sample(question="Q?", answer="A.", reference="A")])]
[4]
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import DataError, RepeatedIdError
from ..files.jsontext import find_lone_surrogate
from ..results import Declaration, ScoreScale, Section
from ..runtime import put_item_index, run_batch
from ..runtime.concurrency import synchronous
from ..runtime.items import index_row, item_index_writer, put_item_contents_of
from ..runtime.progress import BatchProgress

if TYPE_CHECKING:
    from ..evaluator import Evaluator
    from ..runtime import RunStore

__all__ = ["DECLARED_PREFIX", "aevaluate_many", "astream_many", "check_text", "check_unique_ids", "declare_in_run", "declared_in_run",
           "evaluate_many", "in_flight", "read_declaration"]

X = TypeVar("X")


def check_unique_ids(evaluator: "Evaluator[Any, Any]", samples: Sequence[Any]) -> None:
    """The one identity rule: samples that carry an ``id`` must not repeat it within a batch (two
    different samples under one id would share one stored judgment). Samples without an id are
    keyed by their content: the same content twice is the same item, judged once."""
    explicit = [evaluator.key(s) for s in samples if getattr(s, "id", None) is not None]
    repeated = sorted(k for k, n in Counter(explicit).items() if n > 1)
    if repeated:
        raise RepeatedIdError(repeated)


def check_text(samples: Sequence[Any], *, start: int = 0) -> None:
    """Every string of every sample must be text: half of a surrogate pair (``"\\udc80"``, which
    Python's own JSON parser makes from an escape) cannot be hashed, stored or printed as UTF-8.
    Refused before any is judged, in one line naming the sample (counted from ``start`` + 1) and
    the field."""
    for n, sample in enumerate(samples, start=start + 1):
        if (found := find_lone_surrogate(sample)) is not None:
            field, char = found
            raise DataError(f"sample {n} holds the lone surrogate \\u{ord(char):04x} (half of a UTF-16 "
                            "pair, not a character); give text", field=field or None)


DECLARED_PREFIX = "declared/"


def declare_in_run(evaluator: "Evaluator[Any, Any]", store: "RunStore", run_id: str) -> None:
    """Store the evaluator's declaration with the run (artifact ``declared/<task>``), so readers of
    the run (compare, gate, the report) take its scores' scales, what is judged whole, where an
    item's reason comes from and the report sections it draws from it, for any evaluator, a
    user's included. The artifacts keep the order the evaluators started in (the report's order)."""
    d = evaluator.declare()
    store.put_artifact(run_id, DECLARED_PREFIX + evaluator.task_name(), {
        "version": 1, "evaluator": type(evaluator).__name__, "description": evaluator.description,
        "scores": {n: s._asdict() for n, s in d.scores.items()}, "indexes_items": d.indexes_items,
        "judged_whole": d.judged_whole, "raw_reason": d.raw_reason,
        "sections": [s._asdict() for s in d.sections]})


def read_declaration(data: Any) -> Declaration | None:
    """The declaration a ``declared/<task>`` artifact holds (None for anything else). A section
    entry without a title (another shape) is left out rather than refused: the run stays readable."""
    if not isinstance(data, dict):
        return None
    sections = tuple(Section(str(s["title"]), str(s.get("kind") or "scores"),
                             str(s["artifact"]) if s.get("artifact") else None)
                     for s in data.get("sections") or [] if isinstance(s, dict) and s.get("title"))
    return Declaration({n: ScoreScale(**s) for n, s in (data.get("scores") or {}).items()},
                       indexes_items=bool(data.get("indexes_items", True)), judged_whole=data.get("judged_whole"),
                       raw_reason=bool(data.get("raw_reason")), sections=sections)


def declared_in_run(store: "RunStore", run_id: str, tasks: Iterable[str]) -> dict[str, Declaration]:
    """The declarations stored with run ``run_id`` for ``tasks`` (a task of a run made before
    declarations were stored has none)."""
    out = {}
    for task in tasks:
        if (declared := read_declaration(store.get_artifact(run_id, DECLARED_PREFIX + task))) is not None:
            out[task] = declared
    return out


def in_flight(evaluator: "Evaluator[Any, Any]", concurrency: int | None) -> int:
    """How many samples the scheduler keeps in flight: the concurrency asked (default: the judge's)
    times the evaluator's declared ``stages``, and as many again read ahead when the judge's own
    limit holds its calls to the concurrency asked. Those wait at the judge with their prompts
    made, so a slot a reply frees goes at once to the next call, not after its sample is read,
    stored and the next sample is rendered (the slot idle all the while).

    >>> from langrag_eval.grading import VragGrader
    >>> from langrag_eval.runtime import Judge
    >>> from langrag_eval.testing import ScriptedModel
    >>> grader = VragGrader(Judge(ScriptedModel(["Score: [[4]], Reason: [[Close.]]"]), concurrency=4))
    >>> in_flight(grader, None), in_flight(grader, 8), in_flight(grader, 2)
    (8, 16, 2)
    """
    judge = getattr(evaluator, "judge", None)
    slots = concurrency or getattr(judge, "concurrency", None) or 16
    # the limit the judge's limiter enforces: a judge of another kind may hold no limit at all
    calls = getattr(getattr(judge, "limiter", None), "concurrency", None)
    ahead = slots if isinstance(calls, int) and calls <= slots else 0
    return slots * max(1, int(getattr(evaluator, "stages", 1))) + ahead


def _bound(evaluator: "Evaluator[Any, Any]", run_id: str | None, store: "RunStore | None"
           ) -> tuple["Evaluator[Any, Any]", "RunStore | None"]:
    """The evaluator and store as a run uses them: with a ``run_id``, a copy judging for that run;
    the store given, else the judge's."""
    judge = getattr(evaluator, "judge", None)
    if judge is not None and run_id is not None:
        judge = judge.for_run(run_id)
        evaluator = evaluator.for_judge(judge)
    return evaluator, store if store is not None else getattr(judge, "store", None)


def _index_rows(evaluator: "Evaluator[Any, Any]", keys: Sequence[str], samples: Sequence[Any]
                ) -> Iterator[tuple[str, str | None, str | None, str | None]]:
    if not evaluator.declare().indexes_items:
        return
    for k, s in zip(keys, samples):
        if (item := evaluator.index_item(s)) is not None:
            yield (k, *item)


async def _judge(evaluator: "Evaluator[Any, Any]", bound: "Evaluator[Any, Any]", samples: Sequence[Any],
                 keys: list[str], *, store: "RunStore | None", run_id: str | None, concurrency: int,
                 progress: bool | None) -> list[Any]:
    """One batch through :func:`~langrag_eval.runtime.run_batch`, each sample under its key."""
    by_sample = {id(s): k for k, s in zip(keys, samples)}
    del keys  # the keys live on in by_sample only
    task = evaluator.task_name()
    # an evaluator that declares no scores stores none with its judgments
    scores = evaluator.scores if evaluator.score_names() else None
    return await run_batch(samples, bound.aevaluate, key=lambda s: by_sample[id(s)], task=task,
                           result_type=evaluator.result_type, store=store, run_id=run_id,
                           concurrency=concurrency, description=evaluator.description or task,
                           fingerprint=evaluator.fingerprint, progress=progress, scores=scores)


async def aevaluate_many(evaluator: "Evaluator[Any, Any]", samples: Sequence[Any], *, run_id: str | None = None,
                         store: "RunStore | None" = None, concurrency: int | None = None,
                         progress: bool | None = None) -> list[Any]:
    """Evaluate every sample, at most ``concurrency`` at once per stage (default: the judge's
    concurrency), in input order. With a run store (the judge's, unless ``store`` is given) and a
    ``run_id``, each result is stored as it finishes and a re-run reads finished items back
    instead of judging them again, as long as their content is unchanged. An exception raised on
    one sample is that sample's ``Unscored`` (cause ``evaluator_error``), tried again on a re-run;
    the others go on. ``progress=True`` draws a progress bar on a terminal (off by default)."""
    check_unique_ids(evaluator, samples)
    check_text(samples)
    keys = [evaluator.key(s) for s in samples]
    bound, store = _bound(evaluator, run_id, store)
    if store is not None and run_id is not None:
        declare_in_run(evaluator, store, run_id)
        rows = list(_index_rows(evaluator, keys, samples))
        if rows:
            put_item_index(store, run_id, evaluator.task_name(), rows)
        del rows  # stored: not held while the batch runs
        content = getattr(evaluator, "item_content", None)  # an evaluator written before the hook has none
        if content is not None:
            put_item_contents_of(store, run_id, evaluator.task_name(),
                                 ((k, c) for k, s in zip(keys, samples) if (c := content(s)) is not None))
    judging = _judge(evaluator, bound, samples, keys, store=store, run_id=run_id,
                     concurrency=in_flight(evaluator, concurrency), progress=progress)
    del keys  # held by the batch alone, which keeps them as its keys by sample
    return await judging


evaluate_many = synchronous(aevaluate_many)


async def astream_many(evaluator: "Evaluator[Any, Any]", samples: Iterable[Any], *, run_id: str | None = None,
                       store: "RunStore | None" = None, concurrency: int | None = None,
                       progress: bool | None = None, total: int | None = None,
                       chunk: int = 1000) -> AsyncIterator[tuple[Any, Any]]:
    """:func:`aevaluate_many` for a dataset of any size: ``samples`` is read lazily, ``chunk`` at a
    time, and each ``(sample, result)`` is yielded in input order once its chunk is done, then let
    go: memory does not grow with the dataset. Stored, resumed and reused as :func:`aevaluate_many`
    does; the item index is written a part at a time. Repeated ids are found by a digest of each id
    (a few bytes an item). ``total``: the count, for the progress bar."""
    bound, store = _bound(evaluator, run_id, store)
    task = evaluator.task_name()
    index = item_index_writer(store, run_id, task, size=chunk) if store is not None and run_id is not None else None
    if store is not None and run_id is not None:
        declare_in_run(evaluator, store, run_id)
    seen: set[int] = set()
    size = in_flight(evaluator, concurrency)
    with BatchProgress(evaluator.description or task, total or 0, show=progress) as bar:
        for number, batch in enumerate(_chunks(samples, chunk)):
            check_unique_ids(evaluator, batch)
            check_text(batch, start=number * chunk)
            keys = [evaluator.key(s) for s in batch]
            for s, k in zip(batch, keys):
                if getattr(s, "id", None) is None:
                    continue
                digest = int.from_bytes(hashlib.blake2b(k.encode(), digest_size=8).digest(), "big")
                if digest in seen:
                    raise RepeatedIdError([k])
                seen.add(digest)
            if index is not None:
                for row in _index_rows(evaluator, keys, batch):
                    index.add(index_row(*row))
                index.flush()
            results = await _judge(evaluator, bound, batch, keys, store=store, run_id=run_id,
                                   concurrency=size, progress=False)
            for pair in zip(batch, results):
                bar.advance()
                yield pair
    if index is not None and index.parts:
        index.close()


def _chunks(items: Iterable[X], size: int) -> Iterator[list[X]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch
