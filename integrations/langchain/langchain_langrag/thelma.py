"""THELMA for LangChain: a string evaluator (one metric, or every metric at once), a LangSmith
evaluator returning one result per metric, and LangChain ``Embeddings`` as the self-distinctness
embedder.

The shape matches the LlamaIndex adapter's ``ThelmaEvaluator``: one class, ``metric=`` for one
metric, ``metrics=`` for the set scored together (default all seven). Scores, the mean, each
metric's comment and the feedback text come from :class:`~langrag_eval.thelma.ThelmaResult`, so
both adapters report the same numbers and words for the same sample. Contexts are passed as
``contexts=`` (texts or LangChain ``Document``\\ s). A metric that could not be scored has
``score`` None and the reason; never a silent 0.

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

from langchain_classic.evaluation import StringEvaluator
from langchain_core.embeddings import Embeddings

from langrag_eval.embeddings import Embedder, FunctionEmbedder
from langrag_eval.runtime import synchronous
from langrag_eval import Sample
from langrag_eval.thelma import METRICS, Thelma, select_metrics

from ._common import (CONTEXT_KEYS, JudgeLike, as_judge, langsmith_function, pick, read_answer, read_question,
                      traced)

__all__ = ["LangChainEmbedder", "ThelmaStringEvaluator", "as_embedder", "thelma_langsmith_evaluator"]


class LangChainEmbedder(FunctionEmbedder):
    """A LangChain ``Embeddings`` model as a langrag :class:`~langrag_eval.embeddings.Embedder`
    (its ``embed_documents``)."""

    def __init__(self, embeddings: Embeddings, *, model_id: str | None = None) -> None:
        super().__init__(embeddings.embed_documents,
                         model_id=model_id or f"langchain:{type(embeddings).__name__}")
        self.embeddings = embeddings


def as_embedder(embedder: Embedder | Embeddings | None) -> Embedder | None:
    """A LangChain ``Embeddings`` wrapped as a langrag embedder; others as they are."""
    return LangChainEmbedder(embedder) if isinstance(embedder, Embeddings) else embedder


def _thelma(judge: JudgeLike, metrics: Sequence[str], embedder: Any, options: dict[str, Any]) -> Thelma:
    return Thelma(as_judge(judge), metrics=tuple(metrics), embedder=as_embedder(embedder), **options)


class ThelmaStringEvaluator(StringEvaluator):
    """THELMA as a ``langchain_classic`` string evaluator: ``prediction`` is the response, ``input``
    the query, ``contexts=`` the retrieved sources.

    With ``metric`` set (sp1, sp2, sqc, rp, rqc, sd, gr) the result is that metric's score with its
    comment as ``reasoning``; without, ``metrics`` (default all) are computed and ``score`` is the
    mean of those scored, with ``metrics`` (per-metric scores), ``diagnosis`` (Table 2 findings),
    ``value`` the components to improve and ``reasoning`` one line per metric. Other options are
    :class:`~langrag_eval.thelma.Thelma`'s (``batched``, ``thresholds``, ``sd_threshold`` ...).
    """

    def __init__(self, judge: JudgeLike, *, metric: str | None = None, metrics: Sequence[str] | None = None,
                 embedder: Embedder | Embeddings | None = None, **options: Any) -> None:
        self.metric = metric
        self.thelma = _thelma(judge, select_metrics(metric, metrics), embedder, options)

    @property
    def requires_input(self) -> bool:
        return True

    @property
    def evaluation_name(self) -> str:
        return f"thelma_{self.metric}" if self.metric else "thelma"

    async def _aevaluate_strings(self, *, prediction: str, reference: str | None = None,
                                 input: str | None = None, **kwargs: Any) -> dict:
        with traced(self.evaluation_name, {"input": input, "prediction": prediction}, kwargs.get("callbacks")):
            result = await self.thelma.aevaluate(Sample(question=input or "", answer=prediction,
                                                             contexts=kwargs.get("contexts")))
        if self.metric:
            return {"score": result.score(self.metric), "value": None,
                    "reasoning": result.comment(self.metric)}
        return {"score": result.mean(), "value": ", ".join(result.components_to_improve()) or None,
                "reasoning": result.feedback(), "metrics": result.scores(),
                "diagnosis": [f.model_dump() for f in result.diagnosis]}

    _evaluate_strings = synchronous(_aevaluate_strings)


def thelma_langsmith_evaluator(judge: JudgeLike, *, metrics: Sequence[str] = METRICS,
                               question_key: str | None = None, answer_key: str | None = None,
                               contexts_key: str | None = None, key_prefix: str = "thelma_",
                               embedder: Embedder | Embeddings | None = None, asynchronous: bool = False,
                               **options: Any) -> Callable[..., dict | Awaitable[dict]]:
    """An evaluator for ``langsmith.evaluate`` / ``aevaluate``: ``(inputs, outputs)``, returning
    ``{"results": [...]}`` with one result per metric (key ``thelma_<metric>``; score None and the
    reason as comment when unscored) and a ``thelma_diagnosis`` result naming the components to
    improve ("none" when no Table 2 pattern fired; value None, the cause in ``metadata["unscored"]``
    and the reasons as comment when no metric was scored). The query comes from
    ``inputs[question_key]`` (default question, query, input or the only value), the response from ``outputs[answer_key]`` (default answer, output, result ...) and
    the contexts from ``outputs[contexts_key]`` (default context, contexts, documents,
    source_documents, docs).
    """
    thelma = _thelma(judge, metrics, embedder, options)

    async def score(inputs: dict, outputs: dict) -> dict:
        query = read_question(inputs, question_key)
        answer = read_answer(outputs, answer_key)
        # never the only value: an output holding just the answer has no contexts, not the answer
        raw = pick(outputs, contexts_key, CONTEXT_KEYS, sole=False) if isinstance(outputs, Mapping) else None
        result = await thelma.aevaluate(Sample(question=query or "", answer=answer, contexts=raw))
        out = [{"key": f"{key_prefix}{m}", "score": result.score(m), "comment": result.comment(m)}
               for m in result.metrics]
        missing = result.undiagnosed()
        out.append({"key": f"{key_prefix}diagnosis", "comment": result.diagnosis_text(),
                    **({"value": None, "metadata": {"unscored": missing.cause}} if missing else
                       {"value": ", ".join(result.components_to_improve()) or "none"})})
        return {"results": out}

    thelma_eval = langsmith_function(score, asynchronous=asynchronous, name="thelma_eval",
                                     keys=[f"{key_prefix}{m}" for m in thelma.metrics])
    thelma_eval.thelma = thelma  # type: ignore[attr-defined]
    return thelma_eval
