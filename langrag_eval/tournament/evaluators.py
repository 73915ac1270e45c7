"""The three RAGElo judges: document relevance, pointwise answer scores, pairwise games.

- :class:`RelevanceEvaluator` rates one retrieved document for a query 0 / 1 / 2 (not, somewhat,
  very relevant) with a one-sentence reason. Output format: a last-line JSON object
  ``{"reason": ..., "relevance": n}`` read with ``JsonFormat`` (the paper gives the levels, not a
  format; JSON keeps the reason and the level in one parseable place).
- :class:`PointwiseEvaluator` scores an answer 0-2 on relevance, accuracy, completeness and precision
  from a last-line JSON object (Appendix A.2), with the agent's documents in the prompt.
- :class:`PairwiseEvaluator` plays answer A against answer B with the documents pooled from both
  agents, each with its relevance judgment and reason; documents under ``threshold`` are dropped.
  By default (``orders=2``) every game is judged in both orders; when the two verdicts disagree the
  game is a tie. Both raw verdicts are kept in the :class:`GameRecord`. With ``orders=1`` each game
  is judged once, as RAGElo did for the RAG-Fusion paper's Table 5, so win and tie rates compare with
  it; which agent is shown first is a seeded coin per game (``seed``), so no agent gains from
  position bias by its name's place in the alphabet, and the record keeps the one verdict under
  ``forward`` (agent a shown first) or ``backward`` (agent b shown first).

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> ev = PairwiseEvaluator(Judge(ScriptedModel(["The first one is sharper.\\n[[A]]"])))
>>> game = asyncio.run(ev.compare("q?", "one", "two", [], agent_a="x", agent_b="y"))
>>> game.outcome, game.forward, game.backward   # both orders prefer the answer shown first: a tie
('tie', 'A', 'A')
>>> one = PairwiseEvaluator(Judge(ScriptedModel(["[[A]]"])), orders=1)
>>> game = asyncio.run(one.compare("q?", "one", "two", [], agent_a="x", agent_b="y", qid="q1"))
>>> game.orders, game.outcome == ("a" if game.forward else "b")
(1, True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..contexts import as_documents
from ..prompts import PromptTemplate, load_prompt, override_template
from ..results import Unscored
from ..runtime import Judge, gather_bounded, run_sync
from ..types import Document
from ..verdicts import JsonFormat, PairwiseFormat

__all__ = [
    "CRITERIA",
    "DEFAULT_FACTORS",
    "GameRecord",
    "PairwiseEvaluator",
    "PointwiseEvaluator",
    "PointwiseScores",
    "RelevanceEvaluator",
    "RelevanceJudgment",
    "a_shown_first",
    "combine_orders",
    "reference_documents",
    "run_sync",
    "single_order",
]

CRITERIA = ("relevance", "accuracy", "completeness", "precision")
DEFAULT_FACTORS = ("how comprehensive, correct, helpful, complete, accurate, deep and detailed each "
                   "answer is. An answer counts as comprehensive when it gives the user several "
                   "angles that all still serve what the question is after.")


class RelevanceJudgment(BaseModel):
    """One document's relevance to one query: 0 not, 1 somewhat, 2 very relevant."""

    model_config = ConfigDict(frozen=True)

    reason: str = ""
    relevance: int = Field(ge=0, le=2)


class PointwiseScores(BaseModel):
    """Appendix A.2's four criteria, each 0-2."""

    model_config = ConfigDict(frozen=True)

    relevance: int = Field(ge=0, le=2)
    accuracy: int = Field(ge=0, le=2)
    completeness: int = Field(ge=0, le=2)
    precision: int = Field(ge=0, le=2)


def _template(prompt: Any, shipped: str, allowed: set[str]) -> PromptTemplate:
    """A shipped prompt name, a user's template file or text, a LangChain / LlamaIndex prompt
    object, or an already parsed template, checked to use only ``allowed`` variables."""
    if isinstance(prompt, str) and prompt == shipped:
        return load_prompt(shipped)
    return override_template(prompt, shipped, allowed=sorted(allowed))


def _invalid(reason: str) -> Unscored:
    return Unscored(reason=reason, cause="invalid_input")


@dataclass
class RelevanceEvaluator:
    """Judges one retrieved document for one query."""

    judge: Judge
    prompt: str | Path | PromptTemplate = "tournament/relevance"

    def __post_init__(self) -> None:
        self._template = _template(self.prompt, "tournament/relevance", {"query", "document"})

    async def evaluate(self, query: str, document: str) -> RelevanceJudgment | Unscored:
        if not document.strip():
            return _invalid("the document is empty")
        answer = await self.judge.ask(self._template.render(query=query, document=document),
                                      JsonFormat(RelevanceJudgment))
        return answer.value

    def evaluate_sync(self, query: str, document: str) -> RelevanceJudgment | Unscored:
        return run_sync(self.evaluate(query, document))


@dataclass
class PointwiseEvaluator:
    """Scores one answer on relevance, accuracy, completeness and precision (0-2 each)."""

    judge: Judge
    prompt: str | Path | PromptTemplate = "tournament/pointwise"

    def __post_init__(self) -> None:
        self._template = _template(self.prompt, "tournament/pointwise", {"query", "answer", "documents"})

    async def evaluate(self, query: str, answer: str, documents: Sequence[Document]) -> PointwiseScores | Unscored:
        if not answer.strip():
            return _invalid("the answer is empty")
        docs = [{"id": d.id, "text": d.text} for d in as_documents(documents, field="documents")]
        prompt = self._template.render(query=query, answer=answer, documents=docs)
        return (await self.judge.ask(prompt, JsonFormat(PointwiseScores))).value

    def evaluate_sync(self, query: str, answer: str, documents: Sequence[Document]) -> PointwiseScores | Unscored:
        return run_sync(self.evaluate(query, answer, documents))


Verdict = Literal["A", "B", "C"]
Outcome = Literal["a", "b", "tie"]


def combine_orders(forward: Verdict, backward: Verdict) -> Outcome:
    """The position-bias rule. ``forward`` was given with agent a shown as A; ``backward`` with agent
    b shown as A. A winner counts only when both orders name it; any disagreement is a tie.

    >>> combine_orders("A", "B"), combine_orders("A", "A"), combine_orders("C", "C"), combine_orders("B", "C")
    ('a', 'tie', 'tie', 'tie')
    """
    first = {"A": "a", "B": "b", "C": "tie"}[forward]
    second = {"A": "b", "B": "a", "C": "tie"}[backward]
    return first if first == second else "tie"  # type: ignore[return-value]


def single_order(forward: Verdict | None, backward: Verdict | None) -> Outcome:
    """The outcome of a game judged in one order: the one verdict, read from agent a's side.

    >>> single_order("A", None), single_order(None, "A"), single_order(None, "C")
    ('a', 'b', 'tie')
    """
    if forward is not None:
        return {"A": "a", "B": "b", "C": "tie"}[forward]  # type: ignore[return-value]
    return {"A": "b", "B": "a", "C": "tie"}[backward]  # type: ignore[index,return-value]


def a_shown_first(seed: int, qid: str, agent_a: str, agent_b: str) -> bool:
    """The seeded coin of a single-order game: True when agent a's answer is shown as A. A hash, not
    a shared random stream, so a resumed or re-scheduled run flips the same coin for the same game.

    >>> a_shown_first(0, "q1", "x", "y") == a_shown_first(0, "q1", "x", "y")
    True
    """
    digest = hashlib.sha256(json.dumps([seed, qid, agent_a, agent_b]).encode("utf-8")).digest()
    return digest[0] % 2 == 0


class GameRecord(BaseModel):
    """One game between two agents on one query, judged in both orders (or in one, where the other
    verdict is None)."""

    model_config = ConfigDict(frozen=True)

    qid: str = ""
    agent_a: str
    agent_b: str
    outcome: Outcome
    forward: Verdict | None   # verdict with agent_a's answer shown as A
    backward: Verdict | None  # verdict with agent_b's answer shown as A
    raw_forward: str | None = None
    raw_backward: str | None = None
    documents: list[str] = Field(default_factory=list)   # ids of the reference documents shown
    dropped: int = 0                                     # pooled documents under the threshold or unjudged

    @property
    def score_a(self) -> float:
        return {"a": 1.0, "b": 0.0, "tie": 0.5}[self.outcome]

    @property
    def orders(self) -> int:
        """How many orders the game was judged in (1 or 2)."""
        return int(self.forward is not None) + int(self.backward is not None)

    @property
    def consistent(self) -> bool:
        """True when both orders named the same winner (or both said tie); a single-order game shows
        no flip, so it counts as consistent."""
        if self.forward is None or self.backward is None:
            return True
        return {"A": "a", "B": "b", "C": "t"}[self.forward] == {"A": "b", "B": "a", "C": "t"}[self.backward]


def reference_documents(documents: Sequence[Document],
                        judgments: Mapping[str, RelevanceJudgment | Unscored], threshold: int
                        ) -> tuple[list[dict[str, Any]], int]:
    """The pooled documents a pairwise judge sees: those judged at least ``threshold``, each with its
    level and reason. Unjudged documents are dropped too: nothing vouches for them. Returns the kept
    documents and how many were dropped."""
    kept: list[dict[str, Any]] = []
    for doc in documents:
        j = judgments.get(doc.id)
        if isinstance(j, RelevanceJudgment) and j.relevance >= threshold:
            kept.append({"id": doc.id, "text": doc.text, "relevance": j.relevance, "reason": j.reason})
    return kept, len(documents) - len(kept)


@dataclass
class PairwiseEvaluator:
    """Plays answer A against answer B for one query, in both orders (``orders=2``) or in one
    (``orders=1``, the shown-first agent a seeded coin per game).

    ``threshold``: the least relevance level (0-2) a pooled document needs to be shown (2 in the
    paper). ``factors``: what the judge should weigh, in words (the paper's configurable factors).
    """

    judge: Judge
    threshold: int = 2
    factors: str = DEFAULT_FACTORS
    prompt: str | Path | PromptTemplate = "tournament/pairwise"
    orders: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        if self.threshold not in (0, 1, 2):
            raise ValueError("threshold must be 0, 1 or 2")
        if self.orders not in (1, 2):
            raise ValueError("orders must be 1 (one judgment per game) or 2 (both orders)")
        self._template = _template(self.prompt, "tournament/pairwise",
                                   {"query", "documents", "answer_a", "answer_b", "factors"})

    @property
    def template(self) -> PromptTemplate:
        """The parsed prompt template in use."""
        return self._template

    def prompts(self, query: str, answer_a: str, answer_b: str,
                documents: Sequence[dict[str, Any]]) -> tuple[str, str]:
        """The forward (a shown as A) and backward (b shown as A) prompts."""
        render = lambda x, y: self._template.render(
            query=query, documents=list(documents), answer_a=x, answer_b=y, factors=self.factors)
        return render(answer_a, answer_b), render(answer_b, answer_a)

    async def compare(self, query: str, answer_a: str, answer_b: str,
                      documents: Sequence[dict[str, Any]], *, agent_a: str = "a", agent_b: str = "b",
                      qid: str = "", dropped: int = 0) -> GameRecord | Unscored:
        """``documents`` as :func:`reference_documents` returns them (already filtered)."""
        if not answer_a.strip() or not answer_b.strip():
            return _invalid(f"an empty answer ({agent_a if not answer_a.strip() else agent_b})")
        forward_prompt, backward_prompt = self.prompts(query, answer_a, answer_b, documents)
        fmt = PairwiseFormat()
        if self.orders == 1:
            first = a_shown_first(self.seed, qid, agent_a, agent_b)
            name = "forward" if first else "backward"
            ans = await self.judge.ask(forward_prompt if first else backward_prompt, fmt)
            if isinstance(ans.value, Unscored):
                return Unscored(reason=f"{name} order: {ans.value.reason}", cause=ans.value.cause,
                                raw=f"{name}:\n{ans.raw}")
            fwd, bwd = (ans.value, None) if first else (None, ans.value)
            return GameRecord(qid=qid, agent_a=agent_a, agent_b=agent_b, outcome=single_order(fwd, bwd),
                              forward=fwd, backward=bwd, raw_forward=ans.raw if first else None,
                              raw_backward=None if first else ans.raw,
                              documents=[d["id"] for d in documents], dropped=dropped)
        forward, backward = await gather_bounded([forward_prompt, backward_prompt],
                                                 lambda p: self.judge.ask(p, fmt), limit=2)
        failed = [(name, ans) for name, ans in (("forward", forward), ("backward", backward))
                  if isinstance(ans.value, Unscored)]
        if failed:
            name, ans = failed[0]
            assert isinstance(ans.value, Unscored)
            raw = f"forward:\n{forward.raw}\n--- backward:\n{backward.raw}"
            return Unscored(reason=f"{name} order: {ans.value.reason}", cause=ans.value.cause, raw=raw)
        assert not isinstance(forward.value, Unscored) and not isinstance(backward.value, Unscored)
        return GameRecord(qid=qid, agent_a=agent_a, agent_b=agent_b,
                          outcome=combine_orders(forward.value, backward.value),
                          forward=forward.value, backward=backward.value, raw_forward=forward.raw,
                          raw_backward=backward.raw, documents=[d["id"] for d in documents],
                          dropped=dropped)

    async def compare_with_relevance(self, query: str, answer_a: str, answer_b: str,
                                     documents: Sequence[Document],
                                     judgments: Mapping[str, RelevanceJudgment | Unscored],
                                     **names: str) -> GameRecord | Unscored:
        """Filter pooled ``documents`` by their judgments and the threshold, then compare."""
        kept, dropped = reference_documents(as_documents(documents, field="documents"), judgments,
                                            self.threshold)
        return await self.compare(query, answer_a, answer_b, kept, dropped=dropped, **names)

    def compare_sync(self, query: str, answer_a: str, answer_b: str,
                     documents: Sequence[dict[str, Any]], **names: Any) -> GameRecord | Unscored:
        return run_sync(self.compare(query, answer_a, answer_b, documents, **names))
