"""THELMA as LlamaIndex ``BaseEvaluator``\\ s: one per metric and one combined, with LlamaIndex
embedding models as the self-distinctness embedder.

``evaluate_response(query=q, response=resp)`` takes the contexts from ``resp.source_nodes`` (that is
LlamaIndex's own ``BaseEvaluator`` behaviour); ``aevaluate(query, response, contexts)`` takes them
directly. A metric that could not be scored is ``invalid_result=True`` with ``invalid_reason``
("cause: reason"), never a silent 0. ``passing`` is False when the score is low (below the
diagnosis threshold of the metric, 0.5 by default). Nothing here reads ``Settings.llm``.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ThelmaScript
>>> ev = GroundednessEvaluator(Judge(ThelmaScript(default=1).model()))
>>> r = ev.evaluate(query="When was Ada born?", response="Ada was born in 1815.",
...                 contexts=["Ada was born in 1815."])
>>> r.score, r.passing
(1.0, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts import BasePromptTemplate

from langrag_eval.embeddings import Embedder
from langrag_eval.errors import ConfigError
from langrag_eval.prompts import PromptTemplate, load_prompt
from langrag_eval.thelma import METRIC_NAMES, METRICS, Thelma, ThelmaResult, ThelmaSample, Thresholds

from ._common import traced_evaluation, context_texts, as_judge, template_prompt, user_template

__all__ = [
    "GroundednessEvaluator",
    "LlamaIndexEmbedder",
    "ResponsePrecisionEvaluator",
    "ResponseQueryCoverageEvaluator",
    "SelfDistinctnessEvaluator",
    "SourcePrecisionEvaluator",
    "SourceQueryCoverageEvaluator",
    "ThelmaEvaluator",
    "ThelmaMetricEvaluator",
]

# the prompt files each metric renders (self-distinctness makes no model call)
_TASKS = {"sp1": ("match_source", "batch_source"),
          "sp2": ("decompose_claims", "match_essential", "batch_essential"),
          "sqc": ("decompose_query", "match_answers", "batch_answers"),
          "rp": ("decompose_claims", "match_essential", "batch_essential"),
          "rqc": ("decompose_query", "match_addresses", "batch_addresses"),
          "sd": (),
          "gr": ("decompose_claims", "match_supported", "batch_supported")}


class LlamaIndexEmbedder:
    """A LlamaIndex embedding model (``BaseEmbedding``) as a langrag ``Embedder``."""

    def __init__(self, embed_model: BaseEmbedding, *, model_id: str | None = None) -> None:
        self.embed_model = embed_model
        self.model_id = model_id or f"llamaindex:{embed_model.model_name}"
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embed_model.get_text_embedding("dimension probe"))
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return np.asarray(self.embed_model.get_text_embedding_batch(list(texts)), dtype=np.float32)


class _ThelmaBase(BaseEvaluator):
    metrics: tuple[str, ...] = METRICS

    def __init__(self, judge: Any, *, embedder: Embedder | BaseEmbedding | None = None,
                 thresholds: Thresholds | None = None, **options: Any) -> None:
        if isinstance(embedder, BaseEmbedding):
            embedder = LlamaIndexEmbedder(embedder)
        self.thelma = Thelma(as_judge(judge), metrics=self.metrics, embedder=embedder,
                             thresholds=thresholds or Thresholds(), **options)

    def _tasks(self) -> list[str]:
        return list(dict.fromkeys(t for m in self.metrics for t in _TASKS[m]))

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        """The langrag templates this evaluator renders (Jinja2 text with its header), by task."""
        out = {}
        for task in self._tasks():
            given = self.thelma.prompts.get(task)
            t = given if isinstance(given, PromptTemplate) else load_prompt(given or f"thelma/{task}")
            out[task] = template_prompt(t)
        return out

    def _update_prompts(self, prompts_dict: dict[str, Any]) -> None:
        """Replace task templates: langrag template text (with its header) or a file path."""
        updated = dict(self.thelma.prompts)
        for task, value in prompts_dict.items():
            if task not in self._tasks():
                raise ConfigError(f"unknown THELMA prompt {task!r}; this evaluator uses {', '.join(self._tasks())}")
            updated[task] = user_template(value, task, load_prompt(f"thelma/{task}"))
        self.thelma.prompts = updated

    async def _result(self, query: str | None, response: str | None,
                      contexts: Sequence[Any] | None) -> ThelmaResult:
        return await self.thelma.aevaluate(ThelmaSample(query=query or "", response=response,
                                                       sources=list(contexts or [])))


def _reason(result: ThelmaResult, metric: str) -> str:
    value = result.metrics[metric]
    return f"{value.cause}: {value.reason}" if not value.scored else ""  # type: ignore[union-attr]


class ThelmaMetricEvaluator(_ThelmaBase):
    """One THELMA metric. Subclasses fix ``metric``; this class takes it as an argument."""

    metric: ClassVar[str] = ""

    def __init__(self, judge: Any, *, metric: str | None = None, **options: Any) -> None:
        chosen = metric or self.metric
        if chosen not in METRICS:
            raise ConfigError(f"unknown THELMA metric {chosen!r}; choose from {', '.join(METRICS)}")
        self._metric = chosen
        self.metrics = (chosen,)
        super().__init__(judge, **options)

    @traced_evaluation
    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, **kwargs: Any) -> EvaluationResult:
        result = await self._result(query, response, contexts)
        score = result.score(self._metric)
        if score is None:
            return EvaluationResult(query=query, response=response, contexts=context_texts(contexts), invalid_result=True,
                                    invalid_reason=_reason(result, self._metric))
        value = result.metrics[self._metric]
        return EvaluationResult(
            query=query, response=response, contexts=context_texts(contexts), score=score,
            passing=not self.thelma.thresholds.is_low(self._metric, score),
            feedback=f"{METRIC_NAMES[self._metric]}: {sum(value.verdicts)} of {len(value.verdicts)} "  # type: ignore[union-attr]
                     f"components {'repeated' if self._metric == 'sd' else 'matched'}")


class SourcePrecisionEvaluator(ThelmaMetricEvaluator):
    """Source precision; ``variant=1`` per retrieved source (default), ``variant=2`` per fact."""

    def __init__(self, judge: Any, *, variant: int = 1, **options: Any) -> None:
        if variant not in (1, 2):
            raise ConfigError("source precision variant must be 1 (per source) or 2 (per fact)")
        super().__init__(judge, metric=f"sp{variant}", **options)


class SourceQueryCoverageEvaluator(ThelmaMetricEvaluator):
    metric = "sqc"


class ResponsePrecisionEvaluator(ThelmaMetricEvaluator):
    metric = "rp"


class ResponseQueryCoverageEvaluator(ThelmaMetricEvaluator):
    metric = "rqc"


class SelfDistinctnessEvaluator(ThelmaMetricEvaluator):
    metric = "sd"


class GroundednessEvaluator(ThelmaMetricEvaluator):
    metric = "gr"


class ThelmaEvaluator(_ThelmaBase):
    """All THELMA metrics (or ``metrics=``) at once. ``score`` is the mean of the scored metrics,
    ``passing`` is True when no scored metric is low and no Table 2 pattern fired, and ``feedback``
    lists every metric and the diagnosis. ``last_result`` keeps the full ``ThelmaResult``."""

    def __init__(self, judge: Any, *, metrics: Sequence[str] = METRICS, **options: Any) -> None:
        self.metrics = tuple(metrics)
        self.last_result: ThelmaResult | None = None
        super().__init__(judge, **options)

    @traced_evaluation
    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, **kwargs: Any) -> EvaluationResult:
        result = await self._result(query, response, contexts)
        self.last_result = result
        scores = {m: s for m, s in result.scores().items() if s is not None}
        lines = [f"{m}={scores[m]:.3f}" if m in scores else f"{m}=unscored ({_reason(result, m)})"
                 for m in result.metrics]
        lines += [f"diagnosis: {f.rule} -> improve the {f.component}" for f in result.diagnosis]
        if not scores:
            return EvaluationResult(query=query, response=response, contexts=context_texts(contexts), invalid_result=True,
                                    invalid_reason="; ".join(lines))
        t = self.thelma.thresholds
        return EvaluationResult(query=query, response=response, contexts=context_texts(contexts),
                                score=sum(scores.values()) / len(scores),
                                passing=not result.diagnosis and not any(t.is_low(m, s) for m, s in scores.items()),
                                feedback="\n".join(lines))
