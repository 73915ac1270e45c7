"""The THELMA evaluator: the six reference-free metrics (seven scores: source precision comes in
two variants) on one (query, sources, response) sample, with the Table 2 diagnosis.

Each decomposition is computed once per sample and shared: the response's claims serve response
precision and groundedness, the query's sub-questions serve both coverage metrics, and the sources'
facts serve SP2. Identical prompts across samples are answered from the judge's cache.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> judge = Judge(ScriptedModel({"atomic claims": "<output>\\n- Ada was born in 1815.\\n</output>",
...                              "": "<output>1</output>"}))
>>> r = Thelma(judge, metrics=("rp", "gr")).evaluate(
...     Sample(question="When was Ada born?", contexts=["Ada was born in 1815."],
...                  answer="Ada was born in 1815."))
>>> r.score("rp"), r.score("gr"), r.usage.calls
(1.0, 1.0, 3)
>>> Thelma(judge, metrics=("gr",)).prompt_tasks()    # the prompt files groundedness renders
['decompose_claims', 'match_supported', 'batch_supported']
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..embeddings import Embedder, cosine_matrix, default_embedder
from ..errors import ConfigError, DataError, LangragError
from ..evaluator import Evaluator
from ..prompts import PromptTemplate
from ..results import Unscored
from ..runtime import Judge, UsageMeter, gather_bounded
from ..types import Sample
from .aggregate import METRICS, MetricOutcome, MetricScore, macro_average, self_distinctness
from .decompose import Decomposer, load_task_prompt, split_sentences
from .dataset import summarize
from .diagnosis import Thresholds, diagnose
from .match import Matcher
from .sample import SampleUsage, ThelmaResult

__all__ = ["DEFAULT_SD_THRESHOLD", "METRIC_TASKS", "Thelma", "select_metrics"]

# all-MiniLM-L6-v2 gives paraphrases of one fact 0.9 and more, and the repeated sentence pair of
# Appendix A.5 0.79, while distinct facts about the same entity stay near 0.4-0.6.
DEFAULT_SD_THRESHOLD = 0.75

# The prompt tasks (files under prompts/thelma/) each metric renders: the decompositions it reads,
# then its match task per component and batched. Self-distinctness makes no model call.
METRIC_TASKS: dict[str, tuple[str, ...]] = {
    "sp1": ("match_source", "batch_source"),
    "sp2": ("decompose_claims", "match_essential", "batch_essential"),
    "sqc": ("decompose_query", "match_answers", "batch_answers"),
    "rp": ("decompose_claims", "match_essential", "batch_essential"),
    "rqc": ("decompose_query", "match_addresses", "batch_addresses"),
    "sd": (),
    "gr": ("decompose_claims", "match_supported", "batch_supported"),
}


def select_metrics(metric: str | None = None, metrics: Sequence[str] | None = None) -> tuple[str, ...]:
    """The metrics an evaluator scores when set up the adapters' way: ``metric`` alone, the set
    ``metrics`` scored together, or all seven; both at once is an error.

    >>> select_metrics("gr"), len(select_metrics())
    (('gr',), 7)
    """
    if metric is not None and metrics is not None:
        raise ConfigError("give metric= (one metric) or metrics= (several scored together), not both")
    if metric is not None:
        if metric not in METRICS:
            raise ConfigError(f"unknown THELMA metric {metric!r}; choose from {', '.join(METRICS)}")
        return (metric,)
    return tuple(metrics) if metrics is not None else METRICS


class _Once:
    """A coroutine run at most once, its result shared by every metric that awaits it."""

    def __init__(self, factory: Callable[[], Awaitable[Any]]) -> None:
        self._factory = factory
        self._task: asyncio.Future[Any] | None = None

    async def get(self) -> Any:
        if self._task is None:
            self._task = asyncio.ensure_future(self._factory())
        return await self._task


@dataclass
class _Sample:
    query: str
    response: str
    sources: list[str]          # retrieved texts, empty ones included (they count in SP1)
    retrieved: int
    source_error: str | None
    claims: _Once
    questions: _Once
    facts: _Once

    @property
    def knowledge(self) -> list[str]:
        return [s for s in self.sources if s.strip()]


def _undefined(reason: str) -> Unscored:
    return Unscored(reason=reason, cause="undefined")


@dataclass
class Thelma(Evaluator[Sample, ThelmaResult]):
    """An :class:`~langrag_eval.evaluator.Evaluator` of :class:`~langrag_eval.types.Sample` (the
    paper's query, sources and response are its question, contexts and answer). Scores the requested ``metrics`` (ids from ``METRICS``: sp1, sp2, sqc, rp, rqc, sd, gr).

    ``batched``: one judge call per match task and sample instead of one per component.
    ``embedder``: sentence embeddings for self-distinctness (default: the packaged MiniLM, loaded
    on first use). ``sd_threshold``: cosine similarity from which two sentences repeat each other.
    ``prompts``: your own template file per task name (``match_essential``, ...)."""

    judge: Judge
    metrics: Sequence[str] = METRICS
    batched: bool = False
    embedder: Embedder | None = None
    sd_threshold: float = DEFAULT_SD_THRESHOLD
    thresholds: Thresholds = field(default_factory=Thresholds)
    prompts: Mapping[str, str | Path | PromptTemplate] = field(default_factory=dict)

    result_type: ClassVar[type[ThelmaResult]] = ThelmaResult
    description: ClassVar[str] = "THELMA"

    def __post_init__(self) -> None:
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown or not self.metrics:
            raise ConfigError(f"unknown THELMA metric(s) {unknown or '(none given)'}; choose from "
                              f"{', '.join(METRICS)}")
        if not -1.0 <= self.sd_threshold <= 1.0:
            raise ConfigError(f"sd_threshold {self.sd_threshold} is not a cosine similarity in [-1, 1]")
        self.metrics = tuple(dict.fromkeys(self.metrics))

    @property
    def mode(self) -> str:
        return "batched" if self.batched else "per_component"

    def prompt_tasks(self) -> list[str]:
        """The prompt tasks this evaluator's metrics render (in either mode), each once."""
        return list(dict.fromkeys(t for m in self.metrics for t in METRIC_TASKS[m]))

    def prompt(self, task: str) -> PromptTemplate:
        """The template in use for ``task``: the one given in ``prompts``, else the shipped one."""
        return load_task_prompt(task, self.prompts)

    def set_prompts(self, updates: Mapping[str, Any]) -> None:
        """Replace templates by task: a file, template text, a parsed template, or a LangChain or
        LlamaIndex prompt object. Each is checked now (it may use only the variables its task
        fills); a task none of this evaluator's metrics renders is refused, naming those that are."""
        tasks = self.prompt_tasks()
        for task in updates:
            if task not in tasks:
                raise ConfigError(f"unknown THELMA prompt {task!r}; this evaluator uses {', '.join(tasks)}")
        parsed = {task: load_task_prompt(task, {task: value}) for task, value in updates.items()}
        self.prompts = {**self.prompts, **parsed}

    def task_name(self) -> str:
        return f"thelma:{self.mode}"

    def key(self, sample: Sample) -> str:
        """The sample's id, else a digest of its content (:meth:`Sample.key`)."""
        return sample.key()

    def fingerprint(self, sample: Sample) -> Any:
        return sample

    def index_item(self, sample: Sample) -> tuple[str | None, str | None, str | None]:
        # THELMA has no reference answer: an item is what it asks (sources and response are the app's)
        return sample.question, None, None

    async def aevaluate_many(self, samples: Sequence[Sample], **options: Any  # type: ignore[override]
                             ) -> list[ThelmaResult]:
        """Every sample scored once per run (see :meth:`Evaluator.aevaluate_many`); each result
        carries its sample's key as ``id``. Never Unscored as a whole: failures are per metric."""
        keys = [s.key() for s in samples]
        repeated = sorted(k for k, n in Counter(keys).items() if n > 1)
        if repeated:
            raise DataError(f"sample keys must be unique for a resumable run; repeated: {repeated[:5]}",
                            field="id")
        results = await super().aevaluate_many(samples, **options)
        return [r if r.id else r.model_copy(update={"id": k})  # type: ignore[union-attr,misc]
                for r, k in zip(results, keys)]

    def summarize(self, results: Sequence[ThelmaResult | Unscored]) -> dict[str, Any]:  # type: ignore[override]
        """Per metric mean, spread, counts and causes; the dataset diagnosis; usage per sample
        (:func:`langrag_eval.thelma.summarize` with this evaluator's thresholds and mode)."""
        return summarize([r for r in results if isinstance(r, ThelmaResult)], self.thresholds, mode=self.mode)

    async def aevaluate(self, sample: Sample) -> ThelmaResult:
        """Score one sample. Never raises on bad data or judge failures: those are Unscored."""
        judge = self.judge.for_run(self.judge.run_id)  # type: ignore[arg-type]
        judge.usage = UsageMeter()  # this sample's calls alone; added to the shared meter below
        decomposer = Decomposer(judge, self.prompts)
        matcher = Matcher(judge, self.batched, self.prompts)
        texts, error = sample.context_texts(), sample.invalid_contexts
        response = (sample.answer or "").strip()

        async def facts() -> list[list[str]] | Unscored:
            per_source = await gather_bounded(texts, lambda t: _facts_of(decomposer, t),
                                              limit=max(1, len(texts)))
            failed = [f for f in per_source if isinstance(f, Unscored)]
            return failed[0] if failed else per_source

        s = _Sample(query=sample.question.strip(), response=response, sources=texts,
                    retrieved=len(texts), source_error=error,
                    claims=_Once(lambda: decomposer.aclaims(response)),
                    questions=_Once(lambda: decomposer.aquestions(sample.question.strip())),
                    facts=_Once(facts))
        outcomes: dict[str, MetricOutcome] = {}

        async def one(metric: str) -> None:
            outcomes[metric] = await getattr(self, f"_{metric}")(s, matcher)

        try:
            await gather_bounded(list(self.metrics), one, limit=len(self.metrics))
        finally:
            self.judge.usage.merge(judge.usage)
        metrics = {m: outcomes[m] for m in self.metrics}
        return ThelmaResult(
            id=sample.id, metrics=metrics, mode=self.mode,
            claims=_done(s.claims), questions=_done(s.questions), facts=_done(s.facts),
            sentences=split_sentences(response) if "sd" in self.metrics else None,
            diagnosis=diagnose({m: v.score for m, v in metrics.items() if isinstance(v, MetricScore)},
                               self.thresholds),
            usage=SampleUsage(calls=judge.usage.calls, cached=judge.usage.cached,
                              failed=judge.usage.failed, repairs=judge.usage.repairs,
                              prompt_tokens=judge.usage.prompt_tokens,
                              completion_tokens=judge.usage.completion_tokens))

    # ------------------------------------------------------------------ source metrics

    def _source_problem(self, s: _Sample, *, needs_query: bool) -> Unscored | None:
        if s.source_error:
            return Unscored(reason=s.source_error, cause="invalid_input")
        if s.retrieved == 0:
            return _undefined("no sources retrieved")
        if not s.knowledge:
            return _undefined("every retrieved source is empty")
        if needs_query and not s.query:
            return _undefined("empty query")
        return None

    async def _sp1(self, s: _Sample, matcher: Matcher) -> MetricOutcome:
        if (problem := self._source_problem(s, needs_query=True)) is not None:
            return problem
        asked = await matcher.asource(s.query, s.knowledge)
        answers = iter(asked)
        # An empty retrieved source holds nothing essential: it counts as 0 without a model call.
        verdicts = [next(answers) if src.strip() else 0 for src in s.sources]
        return macro_average(verdicts, metric="sp1", components=s.sources)

    async def _sp2(self, s: _Sample, matcher: Matcher) -> MetricOutcome:
        if (problem := self._source_problem(s, needs_query=True)) is not None:
            return problem
        facts = await s.facts.get()
        if isinstance(facts, Unscored):
            return facts
        flat = [f for per_source in facts for f in per_source]
        return macro_average(await matcher.aessential(s.query, flat), metric="sp2", components=flat,
                             empty="no facts extracted from the sources: precision undefined")

    async def _sqc(self, s: _Sample, matcher: Matcher) -> MetricOutcome:
        if (problem := self._source_problem(s, needs_query=True)) is not None:
            return problem
        questions = await s.questions.get()
        if isinstance(questions, Unscored):
            return questions
        return macro_average(await matcher.aanswers(questions, s.knowledge), metric="sqc",
                             components=questions, empty="the query asks no question: coverage undefined")

    # ------------------------------------------------------------------ response metrics

    def _response_problem(self, s: _Sample, *, needs_query: bool) -> Unscored | None:
        if not s.response:
            return _undefined("empty response")
        if needs_query and not s.query:
            return _undefined("empty query")
        return None

    async def _rp(self, s: _Sample, matcher: Matcher) -> MetricOutcome:
        if (problem := self._response_problem(s, needs_query=True)) is not None:
            return problem
        claims = await s.claims.get()
        if isinstance(claims, Unscored):
            return claims
        return macro_average(await matcher.aessential(s.query, claims), metric="rp", components=claims,
                             empty="no claims in the response: precision undefined")

    async def _rqc(self, s: _Sample, matcher: Matcher) -> MetricOutcome:
        if (problem := self._response_problem(s, needs_query=True)) is not None:
            return problem
        questions = await s.questions.get()
        if isinstance(questions, Unscored):
            return questions
        return macro_average(await matcher.aaddresses(questions, s.response), metric="rqc",
                             components=questions, empty="the query asks no question: coverage undefined")

    async def _gr(self, s: _Sample, matcher: Matcher) -> MetricOutcome:
        if (problem := self._response_problem(s, needs_query=False)) is not None:
            return problem
        if (problem := self._source_problem(s, needs_query=False)) is not None:
            return Unscored(reason=f"{problem.reason}: groundedness undefined", cause=problem.cause)
        claims = await s.claims.get()
        if isinstance(claims, Unscored):
            return claims
        return macro_average(await matcher.asupported(claims, s.knowledge), metric="gr", components=claims,
                             empty="no claims in the response: groundedness undefined")

    async def _sd(self, s: _Sample, matcher: Matcher) -> MetricOutcome:
        if not s.response:
            return _undefined("empty response")
        sentences = split_sentences(s.response)
        if not sentences:
            return _undefined("the response has no sentence")
        if len(sentences) == 1:
            return MetricScore(metric="sd", score=1.0, components=sentences, verdicts=[0])
        try:
            embedder = self.embedder or default_embedder()
            vectors = await asyncio.to_thread(embedder.embed, sentences)
            score, repeated = self_distinctness(cosine_matrix(vectors, vectors), self.sd_threshold)
        except ConfigError:
            raise  # a missing embedding model is a setup error, the same for every sample
        except (LangragError, ValueError, RuntimeError) as exc:
            return Unscored(reason=f"embedding failed: {exc}", cause="model_error")
        return MetricScore(metric="sd", score=score, components=sentences, verdicts=repeated)



async def _facts_of(decomposer: Decomposer, text: str) -> list[str] | Unscored:
    return await decomposer.aclaims(text) if text.strip() else []


def _done(once: _Once) -> Any:
    task = once._task
    if task is None or not task.done() or task.exception() is not None:
        return None
    value = task.result()
    return None if isinstance(value, Unscored) else value
