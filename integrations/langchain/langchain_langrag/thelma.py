"""THELMA for LangChain: string evaluators (one per metric, or all metrics at once), a LangSmith
evaluator returning one result per metric, and LangChain ``Embeddings`` as the self-distinctness
embedder.

Contexts are passed as ``contexts=`` (texts or LangChain ``Document``\\ s). A metric that could not
be scored has ``score`` None and the reason; never a silent 0.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ThelmaScript
>>> ev = ThelmaStringEvaluator(Judge(ThelmaScript(default=1).model()), metric="gr")
>>> ev.evaluate_strings(prediction="Ada was born in 1815.", input="When was Ada born?",
...                     contexts=["Ada was born in 1815."])["score"]
1.0
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_classic.evaluation import StringEvaluator
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import Embeddings

from langrag_eval.embeddings import Embedder
from langrag_eval.errors import ConfigError
from langrag_eval.runtime import run_sync
from langrag_eval.thelma import METRIC_NAMES, METRICS, Thelma, ThelmaResult, ThelmaSample

from ._common import JudgeLike, as_judge, langsmith_function, pick, read_answer, read_question, traced

__all__ = ["LangChainEmbedder", "ThelmaStringEvaluator", "contexts_of", "thelma_langsmith_evaluator"]


class LangChainEmbedder:
    """A LangChain ``Embeddings`` model as a langrag :class:`~langrag_eval.embeddings.Embedder`."""

    def __init__(self, embeddings: Embeddings, *, model_id: str | None = None) -> None:
        self.embeddings = embeddings
        self.model_id = model_id or f"langchain:{type(embeddings).__name__}"
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embeddings.embed_query("dimension probe"))
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return np.asarray(self.embeddings.embed_documents(list(texts)), dtype=np.float32)


def _embedder(embedder: Embedder | Embeddings | None) -> Embedder | None:
    return LangChainEmbedder(embedder) if isinstance(embedder, Embeddings) else embedder


def contexts_of(value: Any) -> list[Any]:
    """Retrieved contexts as texts: LangChain ``Document``\\ s give their ``page_content``; other
    values are kept as they are (THELMA reports non-text sources as invalid input)."""
    if value is None:
        return []
    if isinstance(value, (str, LCDocument)):
        value = [value]
    return [v.page_content if isinstance(v, LCDocument) else v for v in value]


def _thelma(judge: JudgeLike, metrics: Sequence[str], embedder: Any, options: dict[str, Any]) -> Thelma:
    return Thelma(as_judge(judge), metrics=tuple(metrics), embedder=_embedder(embedder), **options)


def _comment(result: ThelmaResult, metric: str) -> str:
    value = result.metrics[metric]
    if not value.scored:
        return f"{value.cause}: {value.reason}"  # type: ignore[union-attr]
    kept = sum(value.verdicts)  # type: ignore[union-attr]
    what = "repeated" if metric == "sd" else "matched"
    return f"{METRIC_NAMES[metric]}: {kept} of {len(value.verdicts)} components {what}"  # type: ignore[union-attr]


class ThelmaStringEvaluator(StringEvaluator):
    """THELMA as a ``langchain_classic`` string evaluator: ``prediction`` is the response, ``input``
    the query, ``contexts=`` the retrieved sources.

    With ``metric`` set (sp1, sp2, sqc, rp, rqc, sd, gr) the result is that metric's score; without,
    every metric is computed and ``score`` is their mean, with ``metrics`` (per-metric scores),
    ``diagnosis`` (Table 2 findings) and ``value`` the components to improve.
    Other options are :class:`~langrag_eval.thelma.Thelma`'s (``batched``, ``sd_threshold`` ...).
    """

    def __init__(self, judge: JudgeLike, *, metric: str | None = None, embedder: Embedder | Embeddings | None = None,
                 **options: Any) -> None:
        if metric is not None and metric not in METRICS:
            raise ConfigError(f"unknown THELMA metric {metric!r}; choose from {', '.join(METRICS)}")
        self.metric = metric
        self.thelma = _thelma(judge, (metric,) if metric else METRICS, embedder, options)

    @property
    def requires_input(self) -> bool:
        return True

    @property
    def evaluation_name(self) -> str:
        return f"thelma_{self.metric}" if self.metric else "thelma"

    async def _aevaluate_strings(self, *, prediction: str, reference: str | None = None,
                                 input: str | None = None, **kwargs: Any) -> dict:
        with traced(self.evaluation_name, {"input": input, "prediction": prediction}, kwargs.get("callbacks")):
            result = await self.thelma.aevaluate(ThelmaSample(query=input or "", response=prediction,
                                                             sources=contexts_of(kwargs.get("contexts"))))
        if self.metric:
            return {"score": result.score(self.metric), "value": None,
                    "reasoning": _comment(result, self.metric)}
        scored = [s for s in result.scores().values() if s is not None]
        return {"score": sum(scored) / len(scored) if scored else None,
                "value": ", ".join(dict.fromkeys(f.component for f in result.diagnosis)) or None,
                "reasoning": "; ".join(f"{m}: {_comment(result, m)}" for m in result.metrics),
                "metrics": result.scores(), "diagnosis": [f.model_dump() for f in result.diagnosis]}

    def _evaluate_strings(self, *, prediction: str, reference: str | None = None,
                          input: str | None = None, **kwargs: Any) -> dict:
        return run_sync(self._aevaluate_strings(prediction=prediction, input=input, **kwargs))


def thelma_langsmith_evaluator(judge: JudgeLike, *, metrics: Sequence[str] = METRICS,
                               question_key: str | None = None, answer_key: str | None = None,
                               contexts_key: str | None = None, key_prefix: str = "thelma_",
                               embedder: Embedder | Embeddings | None = None, asynchronous: bool = False,
                               **options: Any) -> Callable[..., dict | Awaitable[dict]]:
    """An evaluator for ``langsmith.evaluate`` / ``aevaluate``: ``(inputs, outputs)``, returning
    ``{"results": [...]}`` with one result per metric (key ``thelma_<metric>``; score None and the
    reason as comment when unscored) and a ``thelma_diagnosis`` result naming the components to
    improve. The query comes from ``inputs[question_key]`` (default question, query, input or the
    only value), the response from ``outputs[answer_key]`` (default answer, output, result) and the
    contexts from ``outputs[contexts_key]`` (default context, contexts, documents, source_documents).
    """
    thelma = _thelma(judge, metrics, embedder, options)

    async def score(inputs: dict, outputs: dict) -> dict:
        query = read_question(inputs, question_key)
        answer = read_answer(outputs, answer_key)
        # never the only value: an output holding just the answer has no contexts, not the answer
        raw = pick(outputs, contexts_key, ("context", "contexts", "documents", "source_documents"),
                   sole=False) if isinstance(outputs, Mapping) else None
        result = await thelma.aevaluate(ThelmaSample(query=query or "", response=answer,
                                                    sources=contexts_of(raw)))
        out = [{"key": f"{key_prefix}{m}", "score": result.score(m), "comment": _comment(result, m)}
               for m in result.metrics]
        components = list(dict.fromkeys(f.component for f in result.diagnosis))
        out.append({"key": f"{key_prefix}diagnosis", "value": ", ".join(components) or "none",
                    "comment": "; ".join(f"{f.rule}: {f.interpretation}" for f in result.diagnosis)
                    or "no Table 2 pattern"})
        return {"results": out}

    thelma_eval = langsmith_function(score, asynchronous=asynchronous, name="thelma_eval",
                                     keys=[f"{key_prefix}{m}" for m in thelma.metrics])
    thelma_eval.thelma = thelma  # type: ignore[attr-defined]
    return thelma_eval
