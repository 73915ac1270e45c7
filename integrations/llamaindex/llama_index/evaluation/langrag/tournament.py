"""RAGElo tournaments for LlamaIndex: a pairwise ``BaseEvaluator`` and one call that runs a tournament
over several query engines.

``aevaluate(query, response, contexts, second_response=..., second_contexts=...)`` judges the pooled
contexts (0-2 with a reason), shows the judge those at or above ``threshold`` with their assessments,
and plays the two responses in both orders. Like LlamaIndex's ``PairwiseComparisonEvaluator``:
``score`` 1.0 when ``response`` wins, 0.0 when ``second_response`` wins, 0.5 for a tie, ``passing``
True / False / None; ``pairwise_source`` is ``original`` when both orders agreed and ``neither`` when
the verdict flipped with the order (then a tie). A game that could not be judged is
``invalid_result=True`` with the reason. Nothing here reads ``Settings.llm``.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> ev = RAGEloPairwiseEvaluator(Judge(ScriptedModel(["Tied.\\n[[C]]"])))
>>> r = ev.evaluate(query="Capital?", response="Paris", second_response="Paris, France")
>>> r.score, r.passing, r.pairwise_source
(0.5, None, 'original')
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.evaluation.pairwise import EvaluationSource
from llama_index.core.prompts import BasePromptTemplate

from langrag_eval.results import Unscored
from langrag_eval.runtime import RunStore, gather_bounded, run_sync
from langrag_eval.tournament import (
    DEFAULT_FACTORS,
    PairwiseEvaluator,
    RelevanceEvaluator,
    TournamentConfig,
    TournamentResult,
    tournament_over_apps,
)
from langrag_eval.types import Document

from ._common import JudgeLike, as_judge, header, template_prompt, user_template

__all__ = ["RAGEloPairwiseEvaluator", "atournament_from_query_engines", "tournament_from_query_engines"]

PROMPT_KEY = "pairwise_template"
_USER_HEADER = header("tournament/pairwise (user template)",
                      ("query", "documents", "answer_a", "answer_b", "factors"), "[[A]], [[B]] or [[C]]")


def _documents(contexts: Sequence[Any] | None) -> list[Document]:
    out = []
    for c in contexts or []:
        node = getattr(c, "node", c)   # a NodeWithScore, a node, or a string
        text = c if isinstance(c, str) else (node.get_content() if hasattr(node, "get_content") else str(c))
        if text and text.strip():
            out.append(Document(id="sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16], text=text))
    return out


class RAGEloPairwiseEvaluator(BaseEvaluator):
    """RAGElo's pairwise judge for LlamaIndex. Its prompt ``pairwise_template`` is the langrag
    template text (Jinja2 with a header); an update without a header gets one declaring the five
    variables (query, documents, answer_a, answer_b, factors)."""

    def __init__(self, judge: JudgeLike, *, threshold: int = 2,
                 factors: str = DEFAULT_FACTORS) -> None:
        self.judge = as_judge(judge)
        self.relevance = RelevanceEvaluator(self.judge)
        self.pairwise = PairwiseEvaluator(self.judge, threshold=threshold, factors=factors)

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        return {PROMPT_KEY: template_prompt(self.pairwise.template)}

    def _update_prompts(self, prompts_dict: dict[str, BasePromptTemplate]) -> None:
        if PROMPT_KEY not in prompts_dict:
            return
        template = user_template(prompts_dict[PROMPT_KEY], PROMPT_KEY, _USER_HEADER)
        self.pairwise = PairwiseEvaluator(self.judge, threshold=self.pairwise.threshold,
                                          factors=self.pairwise.factors, prompt=template)

    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, second_response: str | None = None,
                        second_contexts: Sequence[str] | None = None, reference: str | None = None,
                        sleep_time_in_seconds: int = 0, **kwargs: Any) -> EvaluationResult:
        if query is None or response is None or second_response is None:
            return EvaluationResult(query=query, response=response, invalid_result=True,
                                    invalid_reason="invalid_input: query, response and second_response are needed")
        pooled = list({d.id: d for d in [*_documents(contexts), *_documents(second_contexts)]}.values())
        judged = await gather_bounded(pooled, lambda d: self.relevance.evaluate(query, d.text),
                                      limit=self.judge.concurrency)
        game = await self.pairwise.compare_with_relevance(
            query, response, second_response, pooled, {d.id: j for d, j in zip(pooled, judged)})
        all_contexts = [*(contexts or []), *(second_contexts or [])]
        if isinstance(game, Unscored):
            return EvaluationResult(query=query, response=response, contexts=all_contexts, invalid_result=True,
                                    invalid_reason=f"{game.cause}: {game.reason}")
        return EvaluationResult(
            query=query, response=response, contexts=all_contexts, score=game.score_a,
            passing={"a": True, "b": False, "tie": None}[game.outcome],
            pairwise_source=(EvaluationSource.ORIGINAL if game.consistent else EvaluationSource.NEITHER).value,
            feedback=f"first response shown as A:\n{game.raw_forward}\n\nsecond response shown as A:\n"
                     f"{game.raw_backward}")


def _app(engine: BaseQueryEngine):
    async def call(query: str) -> tuple[str | None, list[Document]]:
        response = await engine.aquery(query)
        docs = []
        for n in getattr(response, "source_nodes", None) or []:
            text = n.node.get_content()
            if text and text.strip():
                docs.append(Document(id=n.node.node_id, text=text, score=n.score))
        answer = getattr(response, "response", None)
        return (None if answer is None else str(answer)), docs
    return call


async def atournament_from_query_engines(engines: Mapping[str, BaseQueryEngine],
                                         queries: Sequence[str] | Mapping[str, str],
                                         judge: JudgeLike, config: TournamentConfig | None = None,
                                         *, store: RunStore | None = None, run_id: str | None = None,
                                         limit: int = 8) -> TournamentResult:
    """Query every engine with every query (contexts from the response's ``source_nodes``, node ids as
    document ids), then run the tournament. ``queries`` is a list (ids q1, q2 ...) or ``{qid: query}``."""
    apps = {name: _app(e) for name, e in engines.items()}
    return await tournament_over_apps(apps, queries, as_judge(judge), config, store=store, run_id=run_id,
                                      limit=limit)


def tournament_from_query_engines(engines: Mapping[str, BaseQueryEngine], queries: Sequence[str] | Mapping[str, str],
                                  judge: JudgeLike, config: TournamentConfig | None = None,
                                  **kwargs: Any) -> TournamentResult:
    """Sync form of :func:`atournament_from_query_engines`."""
    return run_sync(atournament_from_query_engines(engines, queries, judge, config, **kwargs))
