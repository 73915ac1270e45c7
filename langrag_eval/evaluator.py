"""The one evaluator contract every capability implements.

An :class:`Evaluator` declares the scores it gives (one :class:`~langrag_eval.results.Declaration`:
each score's name and scale, binary or not, higher better or not, and whether it indexes its items)
and judges one sample: ``aevaluate(sample)`` returns a result or an
:class:`~langrag_eval.results.Unscored` with the reason, and never raises over bad data or a judge's
failure. How many samples are judged, in what order and stages, stored, resumed, shown in progress,
and an exception on one sample turned into that sample's ``Unscored`` (cause ``evaluator_error``),
is the run layer's business (:mod:`langrag_eval.run`), the same for every evaluator. Derived here:

- ``evaluate(sample)``: the same from synchronous code (also inside a running event loop);
- ``scores(result)``: any result, scored or not, as the typed :class:`~langrag_eval.results.Score`
  records of the declared names, the one shape ``compare``, the report and the adapters read
  (by default each declared score is the result's field of that name);
- ``summarize(results)``: the typed dataset summary (:class:`~langrag_eval.results.Summary`), with
  the capability's own figures in its ``details``;
- ``aevaluate_many`` / ``evaluate_many`` / ``astream_many``: the run layer's batch, for convenience.

Names follow one convention across the package, the one LangChain (``invoke`` / ``ainvoke``) and
LlamaIndex (``evaluate`` / ``aevaluate``) users already know: the ``a`` prefix marks the coroutine,
the plain name is synchronous. Retrievers, agents and tournaments follow it too.

>>> from pydantic import BaseModel
>>> class Length(BaseModel):
...     length: int
>>> class Counter(Evaluator[str, Length]):
...     task, result_type = "length", Length
...     declaration = Declaration({"length": ScoreScale(0, 100)})
...     async def aevaluate(self, sample):
...         return Length(length=len(sample)) if sample else Unscored(reason="empty", cause="invalid_input")
>>> Counter().evaluate("four").length
4
>>> [r.length if isinstance(r, Length) else r.cause for r in Counter().evaluate_many(["ab", ""])]
[2, 'invalid_input']
>>> [(s.name, s.value, s.cause) for r in Counter().evaluate_many(["ab", ""]) for s in Counter().scores(r)]
[('length', 2.0, None), ('length', None, 'invalid_input')]
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from .errors import ConfigError
from .results import Declaration, Score, ScoreScale, Summary, Unscored, summarize_scores
from .concurrency import synchronous
from .files.identity import content_hash

if TYPE_CHECKING:
    from typing_extensions import Self

    from .prompting.templates import PromptTemplate
    from .runtime import Judge, RunStore

__all__ = ["Declaration", "Evaluator", "FunctionEvaluator", "check_judge", "synchronous"]

S = TypeVar("S")
R = TypeVar("R", bound=BaseModel)


class Evaluator(ABC, Generic[S, R]):
    """Sample in, result or ``Unscored`` out, async first.

    A subclass sets ``task`` (the name its judgments are stored under in a run store),
    ``result_type`` (the pydantic model of a scored result) and ``declaration`` (its scores; or
    refines :meth:`declare` when they depend on its settings), writes :meth:`aevaluate`, and may
    refine the identity hooks: :meth:`key` (an item's identity in a run), :meth:`fingerprint` (the
    content a stored judgment depends on), :meth:`task_name`, :meth:`index_item` (what each item
    asks, so runs of two app variants can be paired) and :meth:`for_judge`.
    """

    task: ClassVar[str]
    result_type: ClassVar[type[BaseModel]]
    description: ClassVar[str] = ""
    #: the scores every sample gets, and whether items are indexed (see :meth:`declare`)
    declaration: ClassVar[Declaration] = Declaration()
    #: how many stages a sample moves through, one after the other, each waiting on the judge: the
    #: run layer keeps this many samples in flight per judge slot, so no slot idles between stages
    stages: ClassVar[int] = 1
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

    def item_content(self, sample: S) -> dict[str, Any] | None:
        """What the report's item browser shows of ``sample`` beyond its question (an agent's
        trajectory, a conversation's turns), stored with the run as ``item_contents/<task>``; None
        (the default) to store nothing."""
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

    # ------------------------------------------------------------------ many samples (the run layer's)

    async def aevaluate_many(self, samples: Sequence[S], *, run_id: str | None = None,
                             store: "RunStore | None" = None, concurrency: int | None = None,
                             progress: bool | None = None) -> list[R | Unscored]:
        """Every sample through the run layer's batch scheduler
        (:func:`langrag_eval.run.batch.aevaluate_many`): bounded, in input order, resumable with a
        run store and ``run_id``, an exception on one sample that sample's ``Unscored``."""
        from .run.batch import aevaluate_many
        return await aevaluate_many(self, samples, run_id=run_id, store=store, concurrency=concurrency,
                                    progress=progress)

    def evaluate_many(self, samples: Sequence[S], *, run_id: str | None = None,
                      store: "RunStore | None" = None, concurrency: int | None = None,
                      progress: bool | None = None) -> list[R | Unscored]:
        """:meth:`aevaluate_many` from synchronous code."""
        return synchronous(self.aevaluate_many)(samples, run_id=run_id, store=store,
                                                concurrency=concurrency, progress=progress)

    def astream_many(self, samples: Iterable[S], *, run_id: str | None = None,
                     store: "RunStore | None" = None, concurrency: int | None = None,
                     progress: bool | None = None, total: int | None = None,
                     chunk: int = 1000) -> AsyncIterator[tuple[S, R | Unscored]]:
        """A dataset of any size through the run layer, each ``(sample, result)`` yielded in input
        order as its chunk is done (:func:`langrag_eval.run.batch.astream_many`)."""
        from .run.batch import astream_many
        return astream_many(self, samples, run_id=run_id, store=store, concurrency=concurrency,
                            progress=progress, total=total, chunk=chunk)

    # ------------------------------------------------------------------ scores

    def declare(self) -> Declaration:
        """This evaluator's :class:`~langrag_eval.results.Declaration`: its ``declaration``, or,
        for an evaluator written against the per-name hooks (:meth:`score_names`,
        :meth:`score_scale`), the declaration read from them. Refine it when the scores depend on
        the settings (THELMA's metrics)."""
        cls = type(self)
        if cls.score_names is Evaluator.score_names:
            return self.declaration
        own_scale = cls.score_scale is not Evaluator.score_scale
        return self.declaration._replace(scores={n: self.score_scale(n) if own_scale else ScoreScale()
                                                 for n in self.score_names()})

    def score_names(self) -> tuple[str, ...]:
        """The names of the scores this evaluator gives every sample, in order (its declaration's)."""
        return self.declare().names()

    def score_scale(self, name: str) -> ScoreScale:
        """The scale the score ``name`` is read on (its declaration's; 0..1, higher is better, for
        a name not declared)."""
        return self.declare().scale(name)

    def result_scores(self, result: R) -> list[Score]:
        """A scored result's scores, one per declared name (:meth:`scores` is what callers use).
        By default each declared score is the result's field of that name, on its declared
        scale; an evaluator whose scores are not fields of its result writes this hook."""
        out = []
        for name, scale in self.declare().scores.items():
            value = getattr(result, name, None)
            if isinstance(value, (int, float)):
                out.append(scale.score(name, float(value)))
        return out

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


def check_judge(evaluator: Any) -> None:
    """Refuse, in one line naming what to pass, an evaluator built with something that is not a
    judge (a LangChain chat model, a LlamaIndex LLM or a bare langrag model) in its ``judge``
    field: it would otherwise fail at the first sample with an ``AttributeError``.

    >>> from langrag_eval.grading import VragGrader
    >>> VragGrader(object())
    Traceback (most recent call last):
    ...
    langrag_eval.errors.ConfigError: VragGrader takes a langrag_eval Judge, got object: pass Judge(model) for a langrag model, langchain_langrag.as_judge(chat_model) for a LangChain chat model, llama_index.evaluation.langrag.as_judge(llm) for a LlamaIndex LLM
    """
    judge = getattr(evaluator, "judge", None)
    if not callable(getattr(judge, "ask", None)):
        raise ConfigError(f"{type(evaluator).__name__} takes a langrag_eval Judge, got {type(judge).__name__}: "
                          "pass Judge(model) for a langrag model, langchain_langrag.as_judge(chat_model) for a "
                          "LangChain chat model, llama_index.evaluation.langrag.as_judge(llm) for a LlamaIndex LLM")


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

    def declare(self) -> Declaration:
        if self.scorer is None:
            return Declaration()
        if hasattr(self.scorer, "declare"):
            return self.scorer.declare()
        # a scorer written against the per-name hooks
        return Declaration({n: self.scorer.score_scale(n) for n in self.scorer.score_names()})

    def result_scores(self, result: Any) -> list[Score]:
        return self.scorer.result_scores(result) if self.scorer is not None else []
