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
>>> list(Thelma(judge, metrics=("gr",)).prompts())    # the prompt files groundedness renders
['decompose_claims', 'match_supported', 'batch_supported']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from ..models.embeddings import Embedder
from ..errors import ConfigError
from ..evaluator import Evaluator, check_judge
from ..prompting.templates import PromptTemplate
from ..results import Declaration, Score, ScoreScale, Section, Summary, Unscored
from ..runtime import Judge, UsageMeter, gather_bounded
from ..types import Sample
from .aggregate import METRICS, MetricOutcome, MetricScore
from .decompose import Decomposer, load_task_prompt, split_sentences
from .dataset import summarize
from .diagnosis import Thresholds, diagnose
from .match import Matcher
from .metrics import MetricInputs, _Once, diagnosis_rules, get_metric, metric_ids
from .sample import SampleUsage, ThelmaResult

__all__ = ["DEFAULT_SD_THRESHOLD", "Thelma", "select_metrics"]

# all-MiniLM-L6-v2 gives paraphrases of one fact 0.9 and more, and the repeated sentence pair of
# Appendix A.5 0.79, while distinct facts about the same entity stay near 0.4-0.6.
DEFAULT_SD_THRESHOLD = 0.75

def select_metrics(metric: str | None = None, metrics: Sequence[str] | None = None) -> tuple[str, ...]:
    """The metrics an evaluator scores when set up the adapters' way: ``metric`` alone (any
    registered metric), the set ``metrics`` scored together, or the paper's seven; both at once is
    an error.

    >>> select_metrics("gr"), len(select_metrics())
    (('gr',), 7)
    """
    if metric is not None and metrics is not None:
        raise ConfigError("give metric= (one metric) or metrics= (several scored together), not both")
    if metric is not None:
        return (get_metric(metric).id,)
    return tuple(metrics) if metrics is not None else METRICS


@dataclass
class Thelma(Evaluator[Sample, ThelmaResult]):
    """An :class:`~langrag_eval.evaluator.Evaluator` of :class:`~langrag_eval.types.Sample` (question,
    contexts and answer). Scores the requested ``metrics``: registered metric ids
    (:mod:`langrag_eval.thelma.metrics`), by default the paper's seven (sp1, sp2, sqc, rp, rqc, sd, gr).

    ``batched``: one judge call per match task and sample instead of one per component.
    ``embedder``: sentence embeddings for self-distinctness (default: the packaged MiniLM, loaded
    on first use). ``sd_threshold``: cosine similarity from which two sentences repeat each other.
    ``templates``: your own template per task name (``match_essential``, ...); see :meth:`prompts`
    and :meth:`with_prompts`."""

    judge: Judge
    metrics: Sequence[str] = METRICS
    batched: bool = False
    embedder: Embedder | None = None
    sd_threshold: float = DEFAULT_SD_THRESHOLD
    thresholds: Thresholds = field(default_factory=Thresholds)
    templates: Mapping[str, str | Path | PromptTemplate] = field(default_factory=dict)

    result_type: ClassVar[type[ThelmaResult]] = ThelmaResult
    description: ClassVar[str] = "THELMA"
    # A sample judges in stages (decompositions, then the matches that need them): with only as
    # many samples in flight as the judge has slots, every slot whose sample is between stages
    # sits idle. The run layer keeps two per slot in flight, a call queued for each slot.
    stages: ClassVar[int] = 2

    def __post_init__(self) -> None:
        check_judge(self)
        unknown = [m for m in self.metrics if m not in metric_ids()]
        if unknown or not self.metrics:
            raise ConfigError(f"unknown THELMA metric(s) {unknown or '(none given)'}; choose from "
                              f"{', '.join(metric_ids())}")
        if not -1.0 <= self.sd_threshold <= 1.0:
            raise ConfigError(f"sd_threshold {self.sd_threshold} is not a cosine similarity in [-1, 1]")
        self.metrics = tuple(dict.fromkeys(self.metrics))

    @property
    def mode(self) -> str:
        return "batched" if self.batched else "per_component"

    def prompts(self) -> dict[str, PromptTemplate]:
        """The templates this evaluator's metrics render (in either mode), by task name
        (``match_essential`` ...): the one given in ``templates``, else the shipped one."""
        tasks = dict.fromkeys(t for m in self.metrics for t in get_metric(m).tasks)
        return {task: load_task_prompt(task, self.templates) for task in tasks}

    def _replace_prompts(self, overrides: Mapping[str, Any]) -> "Thelma":
        parsed = {task: load_task_prompt(task, {task: value}) for task, value in overrides.items()}
        return replace(self, templates={**self.templates, **parsed})

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

    def declare(self) -> Declaration:
        """One score per requested metric, each on 0..1, higher better; the report's sections are
        the metrics and, for traces scored in time windows, the windows (both drawn from the
        summary a run stores as ``thelma``)."""
        return Declaration({m: ScoreScale() for m in self.metrics},
                           sections=(Section("THELMA", "thelma", "thelma"), Section("monitoring", "windows")))

    def result_scores(self, result: ThelmaResult) -> list[Score]:
        """Each metric of ``result`` on 0..1, passed when not low at this evaluator's thresholds;
        the reason says how many components matched, or why the metric is unscored."""
        out = []
        for metric, value in result.metrics.items():
            if isinstance(value, Unscored):
                out.append(ScoreScale().unscored(metric, value))
            else:
                out.append(ScoreScale().score(metric, value.score, reason=result.comment(metric),
                                              passed=not self.thresholds.is_low(metric, value.score)))
        return out

    def as_result(self, failure: Unscored, sample: Sample | None = None) -> ThelmaResult:
        """A sample unscored as a whole (the evaluator raised on it) as a result whose every metric
        is unscored for that reason, so per-metric counts, files and the report show it."""
        return ThelmaResult(id=sample.key() if sample is not None else None, mode=self.mode,
                            metrics={m: failure for m in self.metrics})

    def summarize(self, results: Sequence[ThelmaResult | Unscored]) -> Summary:
        """The typed summary (each metric's mean with its interval and pass rate), with the per
        metric spread, counts and causes, the dataset diagnosis and usage per sample in ``details``
        (:func:`langrag_eval.thelma.summarize` with this evaluator's thresholds and mode)."""
        details = summarize([r if isinstance(r, ThelmaResult) else self.as_result(r) for r in results],
                            self.thresholds, mode=self.mode)
        return super().summarize(results).model_copy(update={"details": details})

    async def aevaluate(self, sample: Sample) -> ThelmaResult:
        """Score one sample. Never raises on bad data or judge failures: those are Unscored."""
        judge = self.judge.for_run(self.judge.run_id)  # type: ignore[arg-type]
        judge.usage = UsageMeter()  # this sample's calls alone; added to the shared meter below
        decomposer = Decomposer(judge, self.templates)
        matcher = Matcher(judge, self.batched, self.templates)
        texts, error = sample.context_texts(), sample.invalid_contexts
        response = (sample.answer or "").strip()

        async def facts() -> list[list[str]] | Unscored:
            per_source = await gather_bounded(texts, lambda t: _facts_of(decomposer, t),
                                              concurrency=max(1, len(texts)))
            failed = [f for f in per_source if isinstance(f, Unscored)]
            return failed[0] if failed else per_source

        claims, questions = _Once(lambda: decomposer.aclaims(response)), \
            _Once(lambda: decomposer.aquestions(sample.question.strip()))
        s = MetricInputs(query=sample.question.strip(), response=response, sources=texts,
                         retrieved=len(texts), source_error=error, matcher=matcher,
                         embedder=self.embedder, sd_threshold=self.sd_threshold,
                         _claims=claims, _questions=questions, _facts=_Once(facts))
        outcomes: dict[str, MetricOutcome] = {}

        async def one(metric: str) -> None:
            outcomes[metric] = await get_metric(metric).compute(s)

        try:
            await gather_bounded(list(self.metrics), one, concurrency=len(self.metrics))
        finally:
            self.judge.usage.merge(judge.usage)
        metrics = {m: outcomes[m] for m in self.metrics}
        return ThelmaResult(
            id=sample.key(), metrics=metrics, mode=self.mode,
            claims=claims.done(), questions=questions.done(), facts=s._facts.done(),  # type: ignore[union-attr]
            sentences=split_sentences(response) if "sd" in self.metrics else None,
            diagnosis=diagnose({m: v.score for m, v in metrics.items() if isinstance(v, MetricScore)},
                               self.thresholds, diagnosis_rules()),
            usage=SampleUsage(calls=judge.usage.calls, cached=judge.usage.cached,
                              failed=judge.usage.failed, repairs=judge.usage.repairs,
                              prompt_tokens=judge.usage.prompt_tokens,
                              completion_tokens=judge.usage.completion_tokens))



async def _facts_of(decomposer: Decomposer, text: str) -> list[str] | Unscored:
    return await decomposer.aclaims(text) if text.strip() else []
