"""RAGElo's pairwise games: answer A against answer B for one query, with the reference documents
pooled from both agents, each with its relevance judgment and reason; documents under ``threshold``
are dropped. By default (``orders=2``) every game is judged in both orders; when the two verdicts
disagree the game is a tie. Both raw verdicts are kept in the :class:`GameRecord`. With ``orders=1``
each game is judged once, as RAGElo did for the RAG-Fusion paper's Table 5, so win and tie rates
compare with it; which agent is shown first is a seeded coin per game (``seed``), so no agent gains
from position bias by its name's place in the alphabet, and the record keeps the one verdict under
``forward`` (agent a shown first) or ``backward`` (agent b shown first).

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> ev = PairwiseEvaluator(Judge(ScriptedModel(["The first one is sharper.\\n[[A]]"])))
>>> game = ev.evaluate(GameSample(query="q?", answer_a="one", answer_b="two", agent_a="x", agent_b="y"))
>>> game.outcome, game.forward, game.backward   # both orders prefer the answer shown first: a tie
('tie', 'A', 'A')
>>> one = PairwiseEvaluator(Judge(ScriptedModel(["[[A]]"])), orders=1)
>>> game = one.evaluate(GameSample(query="q?", answer_a="one", answer_b="two", agent_a="x", agent_b="y",
...                                qid="q1"))
>>> game.orders, game.outcome == ("a" if game.forward else "b")
(1, True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ArgumentError
from ..types import as_documents
from ..evaluator import Evaluator, check_judge
from ..prompting.templates import PromptTemplate
from ..results import Declaration, Score, ScoreScale, Section, Unscored
from ..runtime import Judge, gather_bounded
from ..types import Document
from ..verdicts.formats import PairwiseFormat
from .evaluators import (
    DEFAULT_FACTORS, Documents, RelevanceEvaluator, RelevanceJudgment, RelevanceSample, _invalid,
    _template,
)

__all__ = [
    "GameOutcome",
    "GameRecord",
    "GameSample",
    "PairwiseEvaluator",
    "a_shown_first",
    "combine_orders",
    "reference_documents",
    "single_order",
]


Verdict = Literal["A", "B", "C"]
GameOutcome = Literal["a", "b", "tie"]


def combine_orders(forward: Verdict, backward: Verdict) -> GameOutcome:
    """The position-bias rule. ``forward`` was given with agent a shown as A; ``backward`` with agent
    b shown as A. A winner counts only when both orders name it; any disagreement is a tie.

    >>> combine_orders("A", "B"), combine_orders("A", "A"), combine_orders("C", "C"), combine_orders("B", "C")
    ('a', 'tie', 'tie', 'tie')
    """
    first = {"A": "a", "B": "b", "C": "tie"}[forward]
    second = {"A": "b", "B": "a", "C": "tie"}[backward]
    return first if first == second else "tie"  # type: ignore[return-value]


def single_order(forward: Verdict | None, backward: Verdict | None) -> GameOutcome:
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
    outcome: GameOutcome
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

    def feedback(self) -> str:
        """The judge's two replies: with agent a's answer shown as A, then with agent b's."""
        return f"A shown first:\n{self.raw_forward}\n\nB shown first:\n{self.raw_backward}"


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


class GameSample(BaseModel):
    """Two agents' answers to one query, with the reference documents pooled from what both
    retrieved. ``judgments`` holds each pooled document's relevance judgment by id; left ``None``,
    the :class:`PairwiseEvaluator` judges the documents itself (each once, through the judge's
    cache) before the game."""

    model_config = ConfigDict(frozen=True)

    query: str
    answer_a: str
    answer_b: str
    documents: Documents = Field(default_factory=list)
    judgments: dict[str, RelevanceJudgment | Unscored] | None = None
    agent_a: str = "a"
    agent_b: str = "b"
    qid: str = ""
    id: str | None = None

    @classmethod
    def pooled(cls, query: str, answer_a: str, answer_b: str, documents_a: Any = (), documents_b: Any = (),
               **fields: Any) -> "GameSample":
        """A game whose reference documents are both agents' retrieved documents, each once (by id)."""
        docs = [*as_documents(documents_a, field="documents_a"), *as_documents(documents_b, field="documents_b")]
        return cls(query=query, answer_a=answer_a, answer_b=answer_b,
                   documents=list({d.id: d for d in docs}.values()), **fields)


@dataclass
class PairwiseEvaluator(Evaluator[GameSample, GameRecord]):
    """Plays answer A against answer B for one query, in both orders (``orders=2``) or in one
    (``orders=1``, the shown-first agent a seeded coin per game).

    ``threshold``: the least relevance level (0-2) a pooled document needs to be shown (2 in the
    paper). ``factors``: what the judge should weigh, in words (the paper's configurable factors).
    ``relevance_prompt``: the prompt for judging pooled documents a game arrives without judgments.
    """

    judge: Judge
    threshold: int = 2
    factors: str = DEFAULT_FACTORS
    prompt: str | Path | PromptTemplate = "tournament/pairwise"
    orders: int = 2
    seed: int = 0
    relevance_prompt: str | Path | PromptTemplate = "tournament/relevance"

    task: ClassVar[str] = "tournament/game"
    result_type: ClassVar[type[GameRecord]] = GameRecord
    description: ClassVar[str] = "games"
    prompt_fields: ClassVar[dict[str, str]] = {"pairwise": "prompt", "relevance": "relevance_prompt"}

    # the games are the tournament: the report's section is the ranking a run stores as ``tournament``
    declaration: ClassVar[Declaration] = Declaration({"score_a": ScoreScale()},
                                                     sections=(Section("tournament", "tournament"),))

    def result_scores(self, result: GameRecord) -> list[Score]:
        """Agent a's game score: 1 a win, 0.5 a tie, 0 a loss."""
        return [ScoreScale().score("score_a", result.score_a,
                                   reason=f"{result.agent_a} vs {result.agent_b}: {result.outcome}")]

    def __post_init__(self) -> None:
        check_judge(self)
        if self.threshold not in (0, 1, 2):
            raise ArgumentError("threshold must be 0, 1 or 2")
        if self.orders not in (1, 2):
            raise ArgumentError("orders must be 1 (one judgment per game) or 2 (both orders)")
        self._template = _template(self.prompt, "tournament/pairwise",
                                   {"query", "documents", "answer_a", "answer_b", "factors"})
        self._relevance = RelevanceEvaluator(self.judge, prompt=self.relevance_prompt)

    def prompts(self) -> dict[str, PromptTemplate]:
        """The game's template (``pairwise``) and the pooled documents' relevance one (``relevance``)."""
        return {"pairwise": self._template, "relevance": self._relevance.prompts()["relevance"]}

    def for_judge(self, judge: Judge) -> "PairwiseEvaluator":
        clone = super().for_judge(judge)
        clone._relevance = self._relevance.for_judge(judge)  # type: ignore[attr-defined]
        return clone  # type: ignore[return-value]

    def key(self, game: GameSample) -> str:
        return game.id if game.id is not None else "\t".join((game.qid, game.agent_a, game.agent_b))

    def fingerprint(self, game: GameSample) -> Any:
        # a game's judgment depends on the texts and relevance labels behind it
        labels = game.judgments or {}
        return ((game.qid, game.agent_a, game.agent_b), game.query, game.answer_a, game.answer_b,
                game.documents, {d: labels.get(d) for d in sorted(doc.id for doc in game.documents)})

    def render_pair(self, query: str, answer_a: str, answer_b: str,
                    documents: Sequence[dict[str, Any]]) -> tuple[str, str]:
        """The forward (a shown as A) and backward (b shown as A) prompts."""
        render = lambda x, y: self._template.render(
            query=query, documents=list(documents), answer_a=x, answer_b=y, factors=self.factors)
        return render(answer_a, answer_b), render(answer_b, answer_a)

    async def aevaluate(self, game: GameSample) -> GameRecord | Unscored:
        judgments = game.judgments
        if judgments is None:
            judged = await gather_bounded(
                game.documents, lambda d: self._relevance.aevaluate(RelevanceSample(query=game.query, document=d)),
                concurrency=max(1, min(len(game.documents), self.judge.concurrency)))
            judgments = {d.id: j for d, j in zip(game.documents, judged)}
        kept, dropped = reference_documents(game.documents, judgments, self.threshold)
        return await self._play(game, kept, dropped)

    async def _play(self, game: GameSample, documents: list[dict[str, Any]], dropped: int) -> GameRecord | Unscored:
        agent_a, agent_b, qid = game.agent_a, game.agent_b, game.qid
        if not game.answer_a.strip() or not game.answer_b.strip():
            return _invalid(f"an empty answer ({agent_a if not game.answer_a.strip() else agent_b})")
        forward_prompt, backward_prompt = self.render_pair(game.query, game.answer_a, game.answer_b, documents)
        fmt = PairwiseFormat()
        shown = [d["id"] for d in documents]
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
                              raw_backward=None if first else ans.raw, documents=shown, dropped=dropped)
        forward, backward = await gather_bounded([forward_prompt, backward_prompt],
                                                 lambda p: self.judge.ask(p, fmt), concurrency=2)
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
                          raw_backward=backward.raw, documents=shown, dropped=dropped)
