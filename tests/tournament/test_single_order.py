"""``orders=1``: one judgment per game (RAGElo's Table 5 setting) beside the default both orders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tournament_helpers import marker_judge, records

from langrag_eval.cli import main
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.tournament import (
    GameSample, PairwiseEvaluator, TournamentConfig, TournamentData, arun_tournament,
)
from langrag_eval.tournament.pairwise import a_shown_first


def first_shown_judge(prompt: str) -> str:
    """A fully position-biased judge for games (always prefers the answer shown as A)."""
    return "[[A]]" if "<answer_a>" in prompt else marker_judge(prompt)


async def test_one_call_per_game_and_the_outcome_follows_the_shown_order() -> None:
    model = ScriptedModel(first_shown_judge)
    ev = PairwiseEvaluator(Judge(model), orders=1, seed=3)
    games = [(f"q{i}", "x", "y") for i in range(200)]
    outcomes = []
    for qid, a, b in games:
        record = await ev.aevaluate(GameSample(query=f"question {qid}?", answer_a="one", answer_b="two", agent_a=a, agent_b=b, qid=qid))
        assert record.orders == 1 and record.consistent
        first = a_shown_first(3, qid, a, b)
        assert (record.forward, record.backward) == (("A", None) if first else (None, "A"))
        assert record.outcome == ("a" if first else "b")   # the biased judge favours whoever is shown first
        outcomes.append(record.outcome)
    assert len(model.prompts) == len(games)                   # one judge call per game
    assert 0.4 < outcomes.count("a") / len(outcomes) < 0.6    # a fair coin: no alphabetical advantage
    again = PairwiseEvaluator(Judge(ScriptedModel(first_shown_judge)), orders=1, seed=3)
    assert [(await again.aevaluate(GameSample(query=f"question {q}?", answer_a="one", answer_b="two", agent_a=a, agent_b=b, qid=q))).outcome
            for q, a, b in games] == outcomes                 # seeded: the same coin for the same game


async def test_both_orders_turn_the_same_bias_into_ties() -> None:
    model = ScriptedModel(first_shown_judge)
    record = await PairwiseEvaluator(Judge(model)).aevaluate(GameSample(query="q?", answer_a="one", answer_b="two", agent_a="x", agent_b="y"))
    assert record.orders == 2 and record.outcome == "tie" and not record.consistent
    assert len(model.prompts) == 2


async def test_single_order_tournament_halves_the_calls_and_keeps_content_verdicts() -> None:
    data = TournamentData.from_records(records({"hi": 3, "mid": 2, "lo": 1}, queries=4))
    both = await arun_tournament(data, Judge(ScriptedModel(marker_judge)), TournamentConfig(tournaments=20, n_boot=0))
    one = await arun_tournament(data, Judge(ScriptedModel(marker_judge)),
                               TournamentConfig(tournaments=20, n_boot=0, orders=1))
    relevance_calls = both.summary["retrieval"]["documents_judged"] + both.summary["retrieval"]["documents_unscored"]
    games = both.summary["games"]["played"]
    assert both.summary["judge_calls"] - relevance_calls == 2 * games
    assert one.summary["judge_calls"] - relevance_calls == games
    assert one.summary["games"]["orders"] == 1 and both.summary["games"]["orders"] == 2
    # A judge that reads content only gives the same win matrix either way.
    assert one.summary["win_matrix"] == both.summary["win_matrix"]
    assert one.summary["ranking"] == both.summary["ranking"]


def test_cli_orders_option_is_reported(tmp_path: Path, capsys) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps(r) for r in records({"hi": 3, "lo": 1}, queries=2)) + "\n",
                       encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"<document>": 'ok\n{"reason": "r", "relevance": 2}',
                                 "quality=3\n</answer_a>": "[[A]]", "quality=1\n</answer_a>": "[[B]]"}),
                     encoding="utf-8")
    base = ["tournament", "--answers", str(answers), "--judge", f"scripted:{judge}", "--tournaments", "5",
            "--bootstrap", "0", "--store", str(tmp_path / "runs.sqlite")]
    assert main([*base, "--orders", "1", "--json", str(tmp_path / "one.json")]) == 0
    out = capsys.readouterr().out
    assert "each judged in one order" in out
    summary = json.loads((tmp_path / "one.json").read_text(encoding="utf-8"))
    assert summary["games"]["orders"] == 1 and summary["config"]["orders"] == 1
    assert main(base) == 0
    assert re.search(r"\d+ with verdicts that changed with the order", capsys.readouterr().out)
    with pytest.raises(SystemExit):
        main([*base, "--orders", "3"])
