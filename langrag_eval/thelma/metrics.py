"""THELMA's metric registry: a metric is one record (its id, name, the prompt tasks it renders, how
it computes from the sample's decompositions and the match verdicts, and any diagnosis rule it adds)
plus the prompt files of its tasks. The seven metrics of the paper are registered here; a metric of
your own is one :func:`register_metric` call, and the evaluator, its typed scores, the dataset
summary, the command line, the report and ``compare`` pick it up by id.

>>> [m.id for m in registered_metrics()][:3]
['sp1', 'sp2', 'sqc']
>>> get_metric("gr").tasks
('decompose_claims', 'match_supported', 'batch_supported')
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from dataclasses import replace as replace_field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models.embeddings import cosine_matrix, default_embedder
from ..errors import ConfigError, LangragError
from ..prompting.templates import PromptTemplate, load_prompt
from ..results import Unscored
from .aggregate import METRIC_NAMES, MetricOutcome, MetricScore, macro_average, self_distinctness
from .decompose import shipped_template, split_sentences
from .diagnosis import RULES, Rule

if TYPE_CHECKING:
    from ..models.embeddings import Embedder
    from .match import Matcher

__all__ = ["Metric", "MetricInputs", "diagnosis_rules", "get_metric", "metric_ids", "metric_name",
           "register_metric", "registered_metrics", "task_template", "unregister_metric"]


class _Once:
    """A coroutine run at most once, its result shared by every metric that awaits it."""

    def __init__(self, factory: Callable[[], Awaitable[Any]]) -> None:
        self._factory = factory
        self._task: asyncio.Future[Any] | None = None

    async def get(self) -> Any:
        if self._task is None:
            self._task = asyncio.ensure_future(self._factory())
        return await self._task

    def done(self) -> Any:
        """The result when it was computed and is not Unscored, else None."""
        task = self._task
        if task is None or not task.done() or task.exception() is not None:
            return None
        value = task.result()
        return None if isinstance(value, Unscored) else value


@dataclass
class MetricInputs:
    """What a metric computes from, for one sample: the texts, the shared decompositions (each
    computed once per sample, whichever metrics ask), the matcher for judge verdicts (one call per
    component, or one per task when batched) and the evaluator's settings."""

    query: str
    response: str
    sources: list[str]          # retrieved texts, empty ones included (they count in SP1)
    retrieved: int
    source_error: str | None
    matcher: "Matcher"
    embedder: "Embedder | None" = None
    sd_threshold: float = 0.75
    _claims: _Once | None = field(default=None, repr=False)
    _questions: _Once | None = field(default=None, repr=False)
    _facts: _Once | None = field(default=None, repr=False)

    @property
    def knowledge(self) -> list[str]:
        """The retrieved sources that hold any text."""
        return [s for s in self.sources if s.strip()]

    async def aclaims(self) -> list[str] | Unscored:
        """The response's atomic claims (``decompose_claims``)."""
        return await self._claims.get()  # type: ignore[union-attr]

    async def aquestions(self) -> list[str] | Unscored:
        """The query's standalone sub-questions (``decompose_query``)."""
        return await self._questions.get()  # type: ignore[union-attr]

    async def afacts(self) -> list[list[str]] | Unscored:
        """Each source's atomic facts (``decompose_claims`` per source)."""
        return await self._facts.get()  # type: ignore[union-attr]

    def source_problem(self, *, needs_query: bool) -> Unscored | None:
        """Why a metric over the sources is undefined here (no sources, all empty ...), or None."""
        if self.source_error:
            return Unscored(reason=self.source_error, cause="invalid_input")
        if self.retrieved == 0:
            return _undefined("no sources retrieved")
        if not self.knowledge:
            return _undefined("every retrieved source is empty")
        if needs_query and not self.query:
            return _undefined("empty query")
        return None

    def response_problem(self, *, needs_query: bool) -> Unscored | None:
        """Why a metric over the response is undefined here (empty response or query), or None."""
        if not self.response:
            return _undefined("empty response")
        if needs_query and not self.query:
            return _undefined("empty query")
        return None


@dataclass(frozen=True)
class Metric:
    """One THELMA-style metric. ``compute(inputs)`` returns a :class:`MetricScore` (a score in 0..1
    with its components and 0/1 verdicts; :func:`macro_average` builds one) or an ``Unscored``.
    ``tasks``: the prompt tasks it renders (shipped ``prompts/thelma/<task>.txt``, or the files in
    ``prompts`` for tasks of its own). ``verdict``: what a verdict of 1 says of a component, for
    the result's comment (``matched``). ``rules``: Table 2-style diagnosis rules it adds."""

    id: str
    name: str
    compute: Callable[[MetricInputs], Awaitable[MetricOutcome]]
    tasks: tuple[str, ...] = ()
    prompts: Mapping[str, str | Path] = field(default_factory=dict)
    verdict: str = "matched"
    rules: tuple[Rule, ...] = ()


_REGISTRY: dict[str, Metric] = {}


def register_metric(metric: Metric, *, replace: bool = False) -> Metric:
    """Add ``metric`` to the registry (every THELMA evaluator created afterwards can score it). Its
    own prompt files are read and checked now. An id already registered is refused unless
    ``replace``. An id is lower-case letters, digits and ``_``, optionally under a namespace
    (``mypkg/cc``, the form an installed package's metric takes: see :func:`load_metric_plugins`)."""
    parts = metric.id.split("/") if metric.id else [""]
    if len(parts) > 2 or not all(p and p.replace("_", "").replace("-", "").isalnum() and p == p.lower()
                                 for p in parts):
        raise ConfigError(f"metric id {metric.id!r}: use lower-case letters, digits and _ "
                          "(optionally under a namespace: mypkg/cc)")
    if metric.id in _REGISTRY and not replace:
        raise ConfigError(f"THELMA metric {metric.id!r} is already registered")
    for task in metric.prompts:
        if task not in metric.tasks:
            raise ConfigError(f"metric {metric.id}: prompt for {task!r}, which is not one of its tasks")
        load_prompt(metric.prompts[task])
    _REGISTRY[metric.id] = metric
    return metric


def unregister_metric(metric_id: str) -> None:
    """Remove a registered metric (the built-in seven included)."""
    _REGISTRY.pop(metric_id, None)


_LOADED_PLUGINS: set[str] = set()
_SCANNED = False


def load_metric_plugins(*, rescan: bool = False) -> tuple[str, ...]:
    """Register every metric installed packages declare under the entry point group
    ``langrag_eval.metrics`` (:mod:`langrag_eval.run.plugins`), each under its namespaced id
    (``mypkg/cc``). The installed packages are read once per process (``rescan`` reads them
    again) and each metric loaded once. Returns the ids registered now."""
    global _SCANNED
    from ..run.plugins import METRICS, plugin_entries

    if _SCANNED and not rescan:
        return ()
    _SCANNED = True
    added = []
    for ident, ep in plugin_entries(METRICS).items():
        if ident in _LOADED_PLUGINS:
            continue
        _LOADED_PLUGINS.add(ident)
        try:
            metric = ep.load()
        except Exception as exc:  # noqa: BLE001 - a user's package that fails to import: say which, in one line
            raise ConfigError(f"THELMA metric {ident!r} ({ep.value}) failed to load: "
                              f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(metric, Metric):
            raise ConfigError(f"entry point {ident!r} ({ep.value}) is a {type(metric).__name__}, not a "
                              "langrag_eval.thelma.Metric")
        register_metric(replace_field(metric, id=ident), replace=True)
        added.append(ident)
    return tuple(added)


def get_metric(metric_id: str) -> Metric:
    if metric_id not in _REGISTRY and "/" in metric_id:
        load_metric_plugins(rescan=True)
    try:
        return _REGISTRY[metric_id]
    except KeyError:
        raise ConfigError(f"unknown THELMA metric {metric_id!r}; choose from {', '.join(_REGISTRY)}") from None


def registered_metrics() -> tuple[Metric, ...]:
    return tuple(_REGISTRY.values())


def metric_ids() -> tuple[str, ...]:
    """The registered metric ids, the paper's seven first, then the installed packages' metrics."""
    load_metric_plugins()
    return tuple(_REGISTRY)


def metric_name(metric_id: str) -> str:
    """The metric's name in words (its id when it is not registered)."""
    metric = _REGISTRY.get(metric_id)
    return metric.name if metric is not None else metric_id


def diagnosis_rules() -> tuple[Rule, ...]:
    """Table 2's rules, then those the registered metrics add."""
    return RULES + tuple(r for m in _REGISTRY.values() for r in m.rules)


def task_template(task: str) -> PromptTemplate:
    """The template of ``task``: a registered metric's own file for it, else the shipped one."""
    for metric in _REGISTRY.values():
        if task in metric.prompts:
            return load_prompt(metric.prompts[task])
    return shipped_template(task)


def _undefined(reason: str) -> Unscored:
    return Unscored(reason=reason, cause="undefined")


# ---------------------------------------------------------------------- the paper's seven

async def _sp1(s: MetricInputs) -> MetricOutcome:
    if (problem := s.source_problem(needs_query=True)) is not None:
        return problem
    answers = iter(await s.matcher.asource(s.query, s.knowledge))
    # An empty retrieved source holds nothing essential: it counts as 0 without a model call.
    verdicts = [next(answers) if src.strip() else 0 for src in s.sources]
    return macro_average(verdicts, metric="sp1", components=s.sources)


async def _sp2(s: MetricInputs) -> MetricOutcome:
    if (problem := s.source_problem(needs_query=True)) is not None:
        return problem
    facts = await s.afacts()
    if isinstance(facts, Unscored):
        return facts
    flat = [f for per_source in facts for f in per_source]
    return macro_average(await s.matcher.aessential(s.query, flat), metric="sp2", components=flat,
                         empty="no facts extracted from the sources: precision undefined")


async def _sqc(s: MetricInputs) -> MetricOutcome:
    if (problem := s.source_problem(needs_query=True)) is not None:
        return problem
    questions = await s.aquestions()
    if isinstance(questions, Unscored):
        return questions
    return macro_average(await s.matcher.aanswers(questions, s.knowledge), metric="sqc",
                         components=questions, empty="the query asks no question: coverage undefined")


async def _rp(s: MetricInputs) -> MetricOutcome:
    if (problem := s.response_problem(needs_query=True)) is not None:
        return problem
    claims = await s.aclaims()
    if isinstance(claims, Unscored):
        return claims
    return macro_average(await s.matcher.aessential(s.query, claims), metric="rp", components=claims,
                         empty="no claims in the response: precision undefined")


async def _rqc(s: MetricInputs) -> MetricOutcome:
    if (problem := s.response_problem(needs_query=True)) is not None:
        return problem
    questions = await s.aquestions()
    if isinstance(questions, Unscored):
        return questions
    return macro_average(await s.matcher.aaddresses(questions, s.response), metric="rqc",
                         components=questions, empty="the query asks no question: coverage undefined")


async def _gr(s: MetricInputs) -> MetricOutcome:
    if (problem := s.response_problem(needs_query=False)) is not None:
        return problem
    if (problem := s.source_problem(needs_query=False)) is not None:
        return Unscored(reason=f"{problem.reason}: groundedness undefined", cause=problem.cause)
    claims = await s.aclaims()
    if isinstance(claims, Unscored):
        return claims
    return macro_average(await s.matcher.asupported(claims, s.knowledge), metric="gr", components=claims,
                         empty="no claims in the response: groundedness undefined")


async def _sd(s: MetricInputs) -> MetricOutcome:
    if not s.response:
        return _undefined("empty response")
    sentences = split_sentences(s.response)
    if not sentences:
        return _undefined("the response has no sentence")
    if len(sentences) == 1:
        return MetricScore(metric="sd", score=1.0, components=sentences, verdicts=[0])
    try:
        embedder = s.embedder or default_embedder()
        vectors = await asyncio.to_thread(embedder.embed, sentences)
        score, repeated = self_distinctness(cosine_matrix(vectors, vectors), s.sd_threshold)
    except ConfigError:
        raise  # a missing embedding model is a setup error, the same for every sample
    except (LangragError, ValueError, RuntimeError) as exc:
        return Unscored(reason=f"embedding failed: {exc}", cause="model_error")
    return MetricScore(metric="sd", score=score, components=sentences, verdicts=repeated)


for _metric in (
    Metric("sp1", METRIC_NAMES["sp1"], _sp1, ("match_source", "batch_source")),
    Metric("sp2", METRIC_NAMES["sp2"], _sp2, ("decompose_claims", "match_essential", "batch_essential")),
    Metric("sqc", METRIC_NAMES["sqc"], _sqc, ("decompose_query", "match_answers", "batch_answers")),
    Metric("rp", METRIC_NAMES["rp"], _rp, ("decompose_claims", "match_essential", "batch_essential")),
    Metric("rqc", METRIC_NAMES["rqc"], _rqc, ("decompose_query", "match_addresses", "batch_addresses")),
    Metric("sd", METRIC_NAMES["sd"], _sd, (), verdict="repeated"),
    Metric("gr", METRIC_NAMES["gr"], _gr, ("decompose_claims", "match_supported", "batch_supported")),
):
    register_metric(_metric)
