"""THELMA as a LlamaIndex ``BaseEvaluator``: one class, ``metric=`` for one metric or ``metrics=``
for several scored together (default all seven), the same shape as the LangChain adapter's
``ThelmaStringEvaluator``; LlamaIndex embedding models as the self-distinctness embedder.

``evaluate_response(query=q, response=resp)`` takes the contexts from ``resp.source_nodes`` (that is
LlamaIndex's own ``BaseEvaluator`` behaviour); ``aevaluate(query, response, contexts)`` takes them
directly. Scores, the mean, each metric's comment, the feedback text and ``passing`` come from
:class:`~langrag_eval.thelma.ThelmaResult`, so both adapters report the same numbers and words for
the same sample. A metric that could not be scored is ``invalid_result=True`` with
``invalid_reason`` ("cause: reason"), never a silent 0. ``passing`` is False when the score is low
(below the diagnosis threshold of the metric, 0.5 by default). Nothing here reads ``Settings.llm``.

The per-metric classes of earlier versions (``GroundednessEvaluator``, ``SourcePrecisionEvaluator``
..., ``ThelmaMetricEvaluator``) still work, with a deprecation warning: each is
``ThelmaEvaluator(judge, metric=...)``.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ThelmaScript
>>> ev = ThelmaEvaluator(Judge(ThelmaScript(default=1).model()), metric="gr")
>>> r = ev.evaluate(query="When was Ada born?", response="Ada was born in 1815.",
...                 contexts=["Ada was born in 1815."])
>>> r.score, r.passing, r.feedback
(1.0, True, 'groundedness: 1 of 1 components matched')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts import BasePromptTemplate

from langrag_eval.deprecation import warn_renamed
from langrag_eval.embeddings import Embedder, FunctionEmbedder
from langrag_eval.errors import ConfigError
from langrag_eval import Sample
from langrag_eval.thelma import Thelma, ThelmaResult, Thresholds, select_metrics

from ._common import as_judge, context_texts, template_prompt, traced_evaluation

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
    "as_embedder",
]


class LlamaIndexEmbedder(FunctionEmbedder):
    """A LlamaIndex embedding model (``BaseEmbedding``) as a langrag ``Embedder`` (its
    ``get_text_embedding_batch``)."""

    def __init__(self, embed_model: BaseEmbedding, *, model_id: str | None = None) -> None:
        super().__init__(embed_model.get_text_embedding_batch,
                         model_id=model_id or f"llamaindex:{embed_model.model_name}")
        self.embed_model = embed_model


def as_embedder(embedder: Embedder | BaseEmbedding | None) -> Embedder | None:
    """A LlamaIndex ``BaseEmbedding`` wrapped as a langrag embedder; others as they are."""
    return LlamaIndexEmbedder(embedder) if isinstance(embedder, BaseEmbedding) else embedder


class ThelmaEvaluator(BaseEvaluator):
    """THELMA for LlamaIndex. With ``metric`` (sp1, sp2, sqc, rp, rqc, sd, gr): that metric's score,
    ``passing`` when it is not low, its comment as ``feedback``. Without: ``metrics`` (default all)
    at once, ``score`` the mean of those scored, ``passing`` True when no scored metric is low and
    no Table 2 pattern fired, ``feedback`` every metric and the diagnosis, and ``last_result`` the
    full :class:`~langrag_eval.thelma.ThelmaResult` of the latest call. Other options are
    :class:`~langrag_eval.thelma.Thelma`'s (``batched``, ``sd_threshold`` ...).

    Its prompts (``get_prompts`` / ``update_prompts``) are the THELMA tasks its metrics render, by
    task name, as langrag template text (Jinja2 with a header) or a LlamaIndex ``PromptTemplate``.
    """

    def __init__(self, judge: Any, *, metric: str | None = None, metrics: Sequence[str] | None = None,
                 embedder: Embedder | BaseEmbedding | None = None, thresholds: Thresholds | None = None,
                 **options: Any) -> None:
        self.metric = metric
        self.thelma = Thelma(as_judge(judge), metrics=select_metrics(metric, metrics),
                             embedder=as_embedder(embedder), thresholds=thresholds or Thresholds(), **options)
        self.last_result: ThelmaResult | None = None

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.thelma.metrics)

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        """The langrag templates this evaluator renders (Jinja2 text with its header), by task."""
        return {task: template_prompt(self.thelma.prompt(task)) for task in self.thelma.prompt_tasks()}

    def _update_prompts(self, prompts_dict: dict[str, Any]) -> None:
        """Replace task templates: langrag template text (with its header), a file path or a
        LlamaIndex ``PromptTemplate``."""
        self.thelma.set_prompts(prompts_dict)

    @traced_evaluation
    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, **kwargs: Any) -> EvaluationResult:
        sample = Sample(question=query or "", answer=response, contexts=contexts)
        result = await self.thelma.aevaluate(sample)
        self.last_result = result
        texts = context_texts(contexts)
        score = result.score(self.metric) if self.metric else result.mean()
        feedback = result.comment(self.metric) if self.metric else result.feedback()
        if score is None:
            return EvaluationResult(query=query, response=response, contexts=texts, invalid_result=True,
                                    invalid_reason=feedback)
        return EvaluationResult(query=query, response=response, contexts=texts, score=score,
                                passing=result.passes(self.thelma.thresholds, self.metric), feedback=feedback)


class ThelmaMetricEvaluator(ThelmaEvaluator):
    """Deprecated: ``ThelmaEvaluator(judge, metric=...)``. The subclasses below fix the metric."""

    fixed: ClassVar[str] = ""

    def __init__(self, judge: Any, *, metric: str | None = None, **options: Any) -> None:
        chosen = metric or self.fixed or getattr(type(self), "metric", None)  # a subclass's own ``metric``
        warn_renamed(type(self).__name__, f"ThelmaEvaluator(judge, metric={chosen!r})")
        super().__init__(judge, metric=chosen, **options)


class SourcePrecisionEvaluator(ThelmaMetricEvaluator):
    """Deprecated: ``ThelmaEvaluator(judge, metric="sp1")`` (``variant=2``: ``"sp2"``)."""

    def __init__(self, judge: Any, *, variant: int = 1, **options: Any) -> None:
        if variant not in (1, 2):
            raise ConfigError("source precision variant must be 1 (per source) or 2 (per fact)")
        super().__init__(judge, metric=f"sp{variant}", **options)


class SourceQueryCoverageEvaluator(ThelmaMetricEvaluator):
    """Deprecated: ``ThelmaEvaluator(judge, metric="sqc")``."""

    fixed = "sqc"


class ResponsePrecisionEvaluator(ThelmaMetricEvaluator):
    """Deprecated: ``ThelmaEvaluator(judge, metric="rp")``."""

    fixed = "rp"


class ResponseQueryCoverageEvaluator(ThelmaMetricEvaluator):
    """Deprecated: ``ThelmaEvaluator(judge, metric="rqc")``."""

    fixed = "rqc"


class SelfDistinctnessEvaluator(ThelmaMetricEvaluator):
    """Deprecated: ``ThelmaEvaluator(judge, metric="sd")``."""

    fixed = "sd"


class GroundednessEvaluator(ThelmaMetricEvaluator):
    """Deprecated: ``ThelmaEvaluator(judge, metric="gr")``."""

    fixed = "gr"
