"""The one evaluator contract every capability implements.

An :class:`Evaluator` turns one sample into a result or an :class:`~langrag_eval.results.Unscored`
with the reason; it never raises over bad data or a judge's failure (and in a batch, an exception it
does raise on one sample becomes that sample's ``Unscored``, cause ``evaluator_error``). An evaluator writes a single
method, ``aevaluate(sample)``; the rest is derived here, once for every capability:

- ``evaluate(sample)``: the same from synchronous code (also inside a running event loop);
- ``aevaluate_many(samples)`` / ``evaluate_many(samples)``: a bounded batch with progress, resumable
  when the judge has a run store and a ``run_id`` is given (finished items are read back while their
  content is unchanged);
- ``summarize(results)``: the typed dataset summary (:class:`~langrag_eval.results.Summary`), with
  the capability's own figures in its ``details``;
- ``scores(result)``: any result, scored or not, as the typed :class:`~langrag_eval.results.Score`
  records named by ``score_names()``, the one shape ``compare``, the report and the adapters read.

Names follow one convention across the package, the one LangChain (``invoke`` / ``ainvoke``) and
LlamaIndex (``evaluate`` / ``aevaluate``) users already know: the ``a`` prefix marks the coroutine,
the plain name is synchronous. Retrievers, agents and tournaments follow it too.

>>> from pydantic import BaseModel
>>> class Length(BaseModel):
...     n: int
>>> class Counter(Evaluator[str, Length]):
...     task, result_type = "length", Length
...     async def aevaluate(self, sample):
...         return Length(n=len(sample)) if sample else Unscored(reason="empty", cause="invalid_input")
...     def score_names(self):
...         return ("length",)
...     def score_scale(self, name):
...         return ScoreScale(0, 100)
...     def result_scores(self, result):
...         return [self.score_scale("length").score("length", min(result.n, 100))]
>>> Counter().evaluate("four").n
4
>>> [r.n if isinstance(r, Length) else r.cause for r in Counter().evaluate_many(["ab", ""])]
[2, 'invalid_input']
>>> [(s.name, s.value, s.cause) for r in Counter().evaluate_many(["ab", ""]) for s in Counter().scores(r)]
[('length', 2.0, None), ('length', None, 'invalid_input')]
"""

from __future__ import annotations

import dataclasses
import hashlib
from abc import ABC, abstractmethod
from collections import Counter as _Tally
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from .errors import ConfigError
from .results import Score, ScoreScale, Unscored
from .results import Summary, summarize_scores
from .runtime import put_item_index, run_batch
from .runtime.items import index_row, item_index_writer
from .runtime.progress import BatchProgress
from .runtime.identity import content_hash
from .runtime.concurrency import synchronous

if TYPE_CHECKING:
    from typing_extensions import Self

    from .prompting.templates import PromptTemplate
    from .runtime import Judge, RunStore

__all__ = ["Evaluator", "FunctionEvaluator", "synchronous"]

S = TypeVar("S")
R = TypeVar("R", bound=BaseModel)
X = TypeVar("X")


class Evaluator(ABC, Generic[S, R]):
    """Sample in, result or ``Unscored`` out, async first.

    A subclass sets ``task`` (the name its judgments are stored under in a run store) and
    ``result_type`` (the pydantic model of a scored result), writes :meth:`aevaluate`, and may
    refine the batch hooks: :meth:`key` (an item's identity in a run), :meth:`fingerprint` (the
    content a stored judgment depends on), :meth:`task_name`, :meth:`index_item` (what each item
    asks, so runs of two app variants can be paired) and :meth:`for_judge`.
    """

    task: ClassVar[str]
    result_type: ClassVar[type[BaseModel]]
    description: ClassVar[str] = ""
    judge: "Judge"  # the judge its calls go through (evaluators without one may leave it unset)

    @abstractmethod
    async def aevaluate(self, sample: S) -> R | Unscored:
        """Judge one sample. Returns the result, or ``Unscored`` with the reason; never raises over
        the sample's content or the judge's reply."""

    def evaluate(self, sample: S) -> R | Unscored:
        """:meth:`aevaluate` from synchronous code."""
        return synchronous(self.aevaluate)(sample)

    # ------------------------------------------------------------------ batch hooks

    def key(self, sample: S) -> str:
        """The sample's identity within a run: its ``id`` when it has one, else a digest of its content."""
        ident = getattr(sample, "id", None)
        if ident is not None:
            return str(ident)
        key = getattr(sample, "key", None)
        if callable(key):
            return str(key())
        return content_hash(sample)

    def fingerprint(self, sample: S) -> Any:
        """What a stored judgment of ``sample`` depends on; a changed fingerprint means judge again."""
        return sample

    def task_name(self) -> str:
        """The store's task name for this evaluator's judgments (settings that change what a
        judgment means belong in it)."""
        return self.task

    def index_item(self, sample: S) -> tuple[str | None, str | None, str | None] | None:
        """``(question, reference, subject)`` for the run's item index, or None to keep none."""
        return None

    def for_judge(self, judge: "Judge") -> "Evaluator[S, R]":
        """A copy of this evaluator judging with ``judge`` (the same settings)."""
        clone = self.__class__.__new__(self.__class__)
        clone.__dict__.update(self.__dict__)
        clone.judge = judge
        return clone

    # ------------------------------------------------------------------ prompts

    #: prompt name -> the (dataclass) field holding that prompt, for the default :meth:`with_prompts`
    prompt_fields: ClassVar[Mapping[str, str]] = {}

    def prompts(self) -> dict[str, "PromptTemplate"]:
        """The templates this evaluator renders, by name (the names :meth:`with_prompts` takes);
        empty for an evaluator that renders none."""
        return {}

    def with_prompts(self, **overrides: Any) -> "Self":
        """A copy of this evaluator rendering ``overrides`` (by prompt name) instead of its own:
        each a shipped prompt's name, a file path, template text, a parsed template or a LangChain
        or LlamaIndex ``PromptTemplate``, checked now (it may use only the variables its prompt
        fills). A name this evaluator does not render is refused, naming those it does. This
        evaluator is left as it was."""
        known = self.prompts()
        unknown = [name for name in overrides if name not in known]
        if unknown:
            raise ConfigError(f"{type(self).__name__} has no prompt {unknown[0]!r}; its prompts: "
                              f"{', '.join(known) or '(none)'}")
        if not overrides:
            return self
        copy = self._replace_prompts(overrides)
        copy.prompts()  # parsed and checked now, not at the first sample
        return copy

    def _replace_prompts(self, overrides: Mapping[str, Any]) -> "Self":
        """The copy :meth:`with_prompts` returns: the prompt fields replaced, settings re-checked."""
        return dataclasses.replace(self, **{self.prompt_fields[n]: v for n, v in overrides.items()})  # type: ignore[type-var]

    # ------------------------------------------------------------------ derived

    async def aevaluate_many(self, samples: Sequence[S], *, run_id: str | None = None,
                             store: "RunStore | None" = None, concurrency: int | None = None,
                             progress: bool | None = None) -> list[R | Unscored]:
        """Evaluate every sample, at most ``concurrency`` at once (default: the judge's concurrency), in
        input order. With a run store (the judge's, unless ``store`` is given) and a ``run_id``, each
        result is stored as it finishes and a re-run reads finished items back instead of judging
        them again, as long as their content is unchanged. An exception raised on one sample is
        that sample's ``Unscored`` (cause ``evaluator_error``), tried again on a re-run; the others
        go on. ``progress=True`` draws a progress bar on a terminal (off by default)."""
        keys = [self.key(s) for s in samples]
        explicit = [str(getattr(s, "id")) for s in samples if getattr(s, "id", None) is not None]
        repeated = sorted(k for k, n in _Tally(explicit).items() if n > 1)
        if repeated:
            raise ConfigError(f"sample ids must be unique in a batch; repeated: {', '.join(repeated[:5])}")
        evaluator, judge, store = self._bound(run_id, store)
        task = self.task_name()
        if store is not None and run_id is not None:
            rows = [(k, *item) for k, s in zip(keys, samples) if (item := self.index_item(s)) is not None]
            if rows:
                put_item_index(store, run_id, task, rows)
            del rows  # stored: not held while the batch runs
        judging = self._judge(evaluator, samples, keys, store=store, run_id=run_id,
                              concurrency=concurrency or getattr(judge, "concurrency", 16), progress=progress)
        del keys  # held by the batch alone, which keeps them as its keys by sample
        return await judging

    def _bound(self, run_id: str | None, store: "RunStore | None"
               ) -> tuple["Evaluator[S, R]", Any, "RunStore | None"]:
        """This evaluator, its judge and store as a run uses them: with a ``run_id``, a copy judging
        for that run; the store given, else the judge's."""
        evaluator: Evaluator[S, R] = self
        judge = getattr(self, "judge", None)
        if judge is not None and run_id is not None:
            judge = judge.for_run(run_id)
            evaluator = self.for_judge(judge)
        return evaluator, judge, store if store is not None else getattr(judge, "store", None)

    async def _judge(self, evaluator: "Evaluator[S, R]", samples: Sequence[S], keys: list[str], *,
                     store: "RunStore | None", run_id: str | None, concurrency: int,
                     progress: bool | None) -> list[R | Unscored]:
        """One batch through :func:`~langrag_eval.runtime.run_batch`, each sample under its key."""
        by_sample = {id(s): k for k, s in zip(keys, samples)}
        del keys  # the keys live on in by_sample only
        task = self.task_name()
        # an evaluator that declares no scores stores none with its judgments
        scores = self.scores if self.score_names() else None
        return await run_batch(samples, evaluator.aevaluate, key=lambda s: by_sample[id(s)], task=task,
                               result_type=self.result_type, store=store, run_id=run_id,  # type: ignore[arg-type]
                               concurrency=concurrency, description=self.description or task,
                               fingerprint=self.fingerprint, progress=progress, scores=scores)

    def evaluate_many(self, samples: Sequence[S], *, run_id: str | None = None,
                      store: "RunStore | None" = None, concurrency: int | None = None,
                      progress: bool | None = None) -> list[R | Unscored]:
        """:meth:`aevaluate_many` from synchronous code."""
        return synchronous(self.aevaluate_many)(samples, run_id=run_id, store=store,
                                                concurrency=concurrency, progress=progress)

    async def astream_many(self, samples: Iterable[S], *, run_id: str | None = None,
                           store: "RunStore | None" = None, concurrency: int | None = None,
                           progress: bool | None = None, total: int | None = None,
                           chunk: int = 1000) -> AsyncIterator[tuple[S, R | Unscored]]:
        """:meth:`aevaluate_many` for a dataset of any size: ``samples`` is read lazily, ``chunk``
        at a time, and each ``(sample, result)`` is yielded in input order once its chunk is done,
        then let go: memory does not grow with the dataset. Stored, resumed and reused as
        :meth:`aevaluate_many` does; the item index is written a part at a time. Repeated ids are
        found by a digest of each id (a few bytes an item). ``total``: the count, for the progress bar."""
        evaluator, judge, store = self._bound(run_id, store)
        task = self.task_name()
        index = item_index_writer(store, run_id, task, size=chunk) if store is not None and run_id is not None else None
        seen: set[int] = set()
        size = concurrency or getattr(judge, "concurrency", 16)
        with BatchProgress(self.description or task, total or 0, show=progress) as bar:
            for batch in _chunks(samples, chunk):
                keys = [self.key(s) for s in batch]
                for s, k in zip(batch, keys):
                    if getattr(s, "id", None) is None:
                        continue
                    digest = int.from_bytes(hashlib.blake2b(k.encode(), digest_size=8).digest(), "big")
                    if digest in seen:
                        raise ConfigError(f"sample ids must be unique in a batch; repeated: {k}")
                    seen.add(digest)
                if index is not None:
                    for k, s in zip(keys, batch):
                        if (item := self.index_item(s)) is not None:
                            index.add(index_row(k, *item))
                    index.flush()
                results = await self._judge(evaluator, batch, keys, store=store, run_id=run_id,
                                            concurrency=size, progress=False)
                for pair in zip(batch, results):
                    bar.advance()
                    yield pair
        if index is not None and index.parts:
            index.close()

    # ------------------------------------------------------------------ scores

    def score_names(self) -> tuple[str, ...]:
        """The names of the scores this evaluator gives every sample, in order (none unless the
        evaluator declares them)."""
        return ()

    def score_scale(self, name: str) -> ScoreScale:
        """The scale the score ``name`` is read on (0..1, higher is better, unless refined)."""
        return ScoreScale()

    def result_scores(self, result: R) -> list[Score]:
        """A scored result's scores, one per name in :meth:`score_names` (the hook a capability
        writes; :meth:`scores` is what callers use)."""
        return []

    def scores(self, result: R | Unscored) -> list[Score]:
        """``result`` as typed scores: a scored result's own (:meth:`result_scores`); for an
        ``Unscored`` item, one unscored score per name carrying its cause and reason."""
        if isinstance(result, Unscored):
            return [self.score_scale(name).unscored(name, result) for name in self.score_names()]
        return self.result_scores(result)

    def summarize(self, results: Sequence[R | Unscored]) -> Summary:
        """The typed dataset summary of ``results``, read from their scores: items scored and
        unscored (by cause), and per score name its mean with a 95 % interval, spread and pass rate
        (:class:`~langrag_eval.results.Summary`). A capability adds its own figures in ``details``."""
        return summarize_scores((self.scores(r) for r in results),  # one item's scores at a time
                                [r.cause if isinstance(r, Unscored) else None for r in results])


@dataclasses.dataclass(eq=False)
class FunctionEvaluator(Evaluator[Any, Any]):
    """One coroutine function as an evaluator: the per-item step of a capability whose dataset-level
    step sits on top of it (a tournament's games, GRAMMAR's answers, the agents' answers), so that
    the step runs through :func:`langrag_eval.run.aevaluate` like any evaluator: bounded, resumable,
    an exception on one item that item's ``Unscored``, the executor seam passed through.

    ``fn(sample)`` returns a ``result_type`` or ``Unscored``; ``task`` names its judgments in a run
    store; ``key`` / ``fingerprint`` (functions of a sample) refine the defaults; ``scorer``, an
    evaluator whose scores the results read as (none by default). The function holds its own judge,
    so :meth:`for_judge` leaves it as it is.

    >>> from pydantic import BaseModel
    >>> class Length(BaseModel):
    ...     n: int
    >>> async def measure(text): return Length(n=len(text))
    >>> [r.n for r in FunctionEvaluator(measure, "length", Length).evaluate_many(["ab", "abc"])]
    [2, 3]
    """

    fn: Callable[[Any], Awaitable[Any]]
    task: str  # type: ignore[misc]
    result_type: type[BaseModel]  # type: ignore[misc]
    key_of: Callable[[Any], str] | None = None
    fingerprint_of: Callable[[Any], Any] | None = None
    description: str = ""  # type: ignore[misc]
    scorer: Evaluator[Any, Any] | None = None

    async def aevaluate(self, sample: Any) -> Any:
        return await self.fn(sample)

    def key(self, sample: Any) -> str:
        return self.key_of(sample) if self.key_of is not None else super().key(sample)

    def fingerprint(self, sample: Any) -> Any:
        return self.fingerprint_of(sample) if self.fingerprint_of is not None else sample

    def for_judge(self, judge: "Judge") -> "FunctionEvaluator":
        return self

    def score_names(self) -> tuple[str, ...]:
        return self.scorer.score_names() if self.scorer is not None else ()

    def score_scale(self, name: str) -> ScoreScale:
        return self.scorer.score_scale(name) if self.scorer is not None else ScoreScale()

    def result_scores(self, result: Any) -> list[Score]:
        return self.scorer.result_scores(result) if self.scorer is not None else []


def _chunks(items: Iterable[X], size: int) -> Iterator[list[X]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch
