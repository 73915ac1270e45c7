"""The judge side of the app conformance suite: each captured sample goes through vRAG grading,
THELMA and a two-variant tournament, each stage with its own scripted judge so that every stage's
model calls can be counted exactly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, ThelmaScript, blocks
from langrag_eval import Sample
from langrag_eval.thelma import Thelma
from langrag_eval.tournament import TournamentResult
from langrag_eval.types import Sample

RELEVANCE = "You annotate search results"


def vrag_grades(sample: Sample, label: str) -> ScriptedModel:
    """Grade the captured answer against ``label``: one judge call, seeing that answer."""
    model = ScriptedModel(lambda prompt: "Score: [[5]], Reason: [[Matches the label.]]")
    grade = VragGrader(Judge(model)).evaluate(Sample(question=sample.question, answer=sample.answer, reference=label))
    assert grade.score == 5 and model.calls == 1
    assert blocks(model.prompts[0], "answer") == [sample.answer.strip()]
    assert blocks(model.prompts[0], "question") == [sample.question.strip()]
    return model


def thelma_scores(sample: Sample) -> ScriptedModel:
    """SP1 and GR on the captured sample: one source check per retrieved document, one claim
    extraction and one support check per claim (the answer's sentences)."""
    model = ThelmaScript(default=1).model()
    result = Thelma(Judge(model), metrics=("sp1", "gr")).evaluate(sample)
    assert result.score("sp1") == 1.0 and result.score("gr") == 1.0
    texts = [d.text for d in sample.contexts]
    claims = result.claims or []
    assert model.calls == len(set(texts)) + 1 + len(claims)
    judged_sources = [b for p in model.prompts if not blocks(p, "claim") for b in blocks(p, "source")]
    assert sorted(judged_sources) == sorted(set(texts))  # every retrieved document, nothing else
    return model


def tournament_judge() -> ScriptedModel:
    return ScriptedModel({RELEVANCE: 'On topic.\n{"reason": "on topic", "relevance": 2}',
                          "": "The first answer is better.\n[[A]]"})


def check_tournament(result: TournamentResult, model: ScriptedModel, queries: int,
                     documents: Sequence[str]) -> None:
    """Two variants, ``queries`` questions: each pooled document judged once per query, then one game
    per query played in both orders."""
    judged = [blocks(p, "document")[0] for p in model.prompts if p.startswith(RELEVANCE)]
    assert sorted(judged) == sorted(documents)
    assert model.calls == len(documents) + 2 * queries
    assert len(result.games) == queries and not result.summary.get("left_out", {}).get("counts")


@pytest.fixture
def pipeline() -> Any:
    class Pipeline:
        vrag = staticmethod(vrag_grades)
        thelma = staticmethod(thelma_scores)
        judge = staticmethod(tournament_judge)
        tournament = staticmethod(check_tournament)
    return Pipeline
