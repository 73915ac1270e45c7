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

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, BaseWorkflowAgent
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.evaluation.pairwise import EvaluationSource
from llama_index.core.prompts import BasePromptTemplate

from langrag_eval.errors import ConfigError
from langrag_eval.results import Unscored
from langrag_eval.runtime import RunStore, synchronous
from langrag_eval.tournament import (
    DEFAULT_FACTORS,
    PairwiseEvaluator,
    GameSample,
    TournamentConfig,
    TournamentResult,
    atournament_over_apps,
)
from langrag_eval.tournament.apps import afirst_query_checked
from langrag_eval.contexts import as_documents, as_text
from langrag_eval.types import Document

from .capture import capturing, result_documents, result_text
from ._common import JudgeLike, as_judge, template_prompt, traced_evaluation

__all__ = ["RAGEloPairwiseEvaluator", "atournament_from_query_engines", "tournament_from_query_engines"]

PROMPT_KEY = "pairwise_template"


class RAGEloPairwiseEvaluator(BaseEvaluator):
    """RAGElo's pairwise judge for LlamaIndex. Its prompt ``pairwise_template`` is the langrag
    template text (Jinja2 with a header); an update may also be a LlamaIndex ``PromptTemplate`` with
    ``{query}``-style fields over the five variables (query, documents, answer_a, answer_b, factors)."""

    def __init__(self, judge: JudgeLike, *, threshold: int = 2,
                 factors: str = DEFAULT_FACTORS) -> None:
        self.judge = as_judge(judge)
        self.pairwise = PairwiseEvaluator(self.judge, threshold=threshold, factors=factors)

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        return {PROMPT_KEY: template_prompt(self.pairwise.template)}

    def _update_prompts(self, prompts_dict: dict[str, BasePromptTemplate]) -> None:
        if PROMPT_KEY in prompts_dict:  # the evaluator reads and checks framework prompt objects
            self.pairwise = dataclasses.replace(self.pairwise, prompt=prompts_dict[PROMPT_KEY])

    @traced_evaluation
    async def aevaluate(self, query: str | None = None, response: Any = None,
                        contexts: Any = None, second_response: Any = None,
                        second_contexts: Any = None, reference: str | None = None,
                        sleep_time_in_seconds: int = 0, **kwargs: Any) -> EvaluationResult:
        """Responses may be strings or LlamaIndex ``Response`` objects (whose ``source_nodes`` are
        then the contexts unless given); contexts a string, strings, nodes or ``NodeWithScore``\\ s."""
        if contexts is None and hasattr(response, "source_nodes"):
            contexts = response
        if second_contexts is None and hasattr(second_response, "source_nodes"):
            second_contexts = second_response
        response, second_response = as_text(response, field="response"), as_text(
            second_response, field="second_response")
        docs_a = as_documents(contexts)
        docs_b = as_documents(second_contexts, field="second_contexts")
        if query is None or response is None or second_response is None:
            return EvaluationResult(query=query, response=response, invalid_result=True,
                                    invalid_reason="invalid_input: query, response and second_response are needed")
        game = await self.pairwise.aevaluate(GameSample.pooled(query, response, second_response, docs_a, docs_b))
        all_contexts = [d.text for d in [*docs_a, *docs_b]]
        if isinstance(game, Unscored):
            return EvaluationResult(query=query, response=response, contexts=all_contexts, invalid_result=True,
                                    invalid_reason=f"{game.cause}: {game.reason}")
        return EvaluationResult(
            query=query, response=response, contexts=all_contexts, score=game.score_a,
            passing={"a": True, "b": False, "tie": None}[game.outcome],
            pairwise_source=(EvaluationSource.ORIGINAL if game.consistent else EvaluationSource.NEITHER).value,
            feedback=f"first response shown as A:\n{game.raw_forward}\n\nsecond response shown as A:\n"
                     f"{game.raw_backward}")


Start = str | Callable[[str], Mapping[str, Any]]


def _run_kwargs(engine: Any, query: str, start: Start | None) -> dict[str, Any]:
    """The keywords a workflow's ``run`` gets: ``start`` names the keyword (``"query"``) or builds
    them; by default an agent gets ``user_msg`` and any other workflow ``query``, as LlamaIndex's
    docs write their start steps (``ev.get("query")``)."""
    if callable(start):
        return dict(start(query))
    if start is not None:
        return {start: query}
    return {"user_msg": query} if isinstance(engine, (BaseWorkflowAgent, AgentWorkflow)) else {"query": query}


def _fix(name: str, exc: BaseException) -> str:
    return ("a workflow's start step reads its own keyword: pass start='query' (or start=lambda q: "
            "{...} for several) to say how run() takes the question; a query engine, chat engine or "
            "agent needs no option")


def _app(engine: Any, start: Start | None):
    """An app call for the tournament: a query engine's ``aquery``, a chat engine's ``achat`` (a
    fresh conversation per query, one query at a time per engine) or a workflow's or agent's
    ``run``; answer and contexts read by a capture of the call, like any captured sample."""
    one_at_a_time = asyncio.Lock()

    async def ask(query: str) -> Any:
        if hasattr(engine, "aquery"):
            return await engine.aquery(query)
        if hasattr(engine, "achat"):
            async with one_at_a_time:  # the engine keeps one conversation: reset it for each query
                engine.reset()
                return await engine.achat(query)
        if hasattr(engine, "run"):
            return await engine.run(**_run_kwargs(engine, query, start))
        raise ConfigError(f"{type(engine).__name__} is not a query engine, chat engine, agent or workflow")

    async def call(query: str) -> tuple[str | None, list[Document]]:
        with capturing() as cap:
            result = await ask(query)
            if hasattr(result, "async_response_gen") and hasattr(result, "get_response"):  # read the stream
                result = await result.get_response()
        samples = cap.samples
        if len(samples) == 1:
            return samples[0].answer, as_documents(samples[0].contexts)
        return result_text(result), result_documents(result) or []
    return call


async def atournament_from_query_engines(engines: Mapping[str, Any],
                                         queries: Sequence[str] | Mapping[str, str],
                                         judge: JudgeLike, config: TournamentConfig | None = None,
                                         *, start: Start | None = None, timeout: float | None = None,
                                         store: RunStore | None = None, run_id: str | None = None,
                                         limit: int = 8) -> TournamentResult:
    """Ask every engine every query (query engines, chat engines, agents and workflows alike), then
    run the tournament. Answer and contexts are what :func:`capturing` records of each call (the
    nodes that reached the answering model call's prompt, node ids as document ids). A workflow is
    run with ``start`` (a keyword name, or ``question -> keywords``; default ``user_msg`` for
    agents, ``query`` for other workflows). Every engine answers the first query before the others
    are asked: one that raises on it stops the run with one :class:`ConfigError` naming it, the
    error and a fix; ``timeout`` bounds each call, in seconds. ``queries`` is a list (ids q1, q2
    ...) or ``{qid: query}``."""
    apps = {name: _app(e, start) for name, e in engines.items()}
    apps = await afirst_query_checked(apps, queries, timeout=timeout, fix=_fix)
    return await atournament_over_apps(apps, queries, as_judge(judge), config, store=store, run_id=run_id,
                                      limit=limit)


tournament_from_query_engines = synchronous(atournament_from_query_engines)
