"""Summary lines say what their figures stand on: tied agents print as tied (``=1``), and the
quickstart's lines give scored and unscored counts with the main cause. The tournament through the
real entry point with the shipped scripted judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from langrag_eval.quickstart import _summary_lines
from langrag_eval.tournament.summary import rank_labels

ROOT = Path(__file__).resolve().parents[2]


def test_a_tournament_of_equal_agents_prints_them_tied(tmp_path: Path) -> None:
    docs = ["Ada wrote the notes."]
    rows = [{"id": f"q{i}", "question": f"Who wrote note {i}?", "agent": a, "answer": "Ada.", "contexts": docs}
            for i in range(2) for a in ("a", "b", "c")]
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # every document relevant, every game a tie: nothing separates the three
    (tmp_path / "judge.json").write_text(json.dumps({"<document>": '{"reason": "Names her.", "relevance": 2}',
                                                     "": "[[C]]"}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LANGRAG_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           "tournament", "--answers", "answers.jsonl", "--judge", "scripted:judge.json",
                           "--bootstrap", "20", "--tournaments", "20"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("Ranking", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    assert [line.split()[:2] for line in table] == [["=1", "a"], ["=1", "b"], ["=1", "c"]]


def test_rank_labels_mark_only_the_ratings_that_print_alike() -> None:
    assert rank_labels([{"bt_rating": 1010.0}, {"bt_rating": 1000.0}, {"bt_rating": 1000.04},
                        {"bt_rating": 990.0}]) == ["1", "=2", "=2", "4"]


def test_the_quickstart_lines_give_counts_and_the_main_cause() -> None:
    lines = _summary_lines(
        {"accept_rate": 0.5, "scored": 4, "items": 6, "unscored": {"by_cause": {"unparseable": 2}}},
        {"metrics": {"sp1": {"mean": 0.5, "n": 2, "unscored": 5, "causes": {"unparseable": 4, "timeout": 1}},
                     "sqc": {"mean": None, "n": 0, "unscored": 7, "causes": {"unparseable": 7}}}},
        {"ranking": [{"agent": "x", "bt_rating": 1000.0}, {"agent": "y", "bt_rating": 1000.0},
                     {"agent": "z", "bt_rating": 900.0}], "games": {"played": 4, "scheduled": 6, "position_flips": 1}},
        {"total": {"calls": 10, "cached": 2, "failed": 3, "prompt_tokens": 5, "completion_tokens": 6},
         "top_failure": {"error": "the request timed out", "count": 3}}, 48, 48, {"unparseable": 2})
    assert lines[1] == "vRAG-Eval: accept rate 50% (scored 4 of 6; unscored 2: mostly unparseable)"
    assert lines[2].startswith("THELMA means: SP1 0.50") and lines[2].endswith(
        "(scored 2 of 14 metric values; unscored 12: mostly unparseable and 1 other cause(s))")
    assert lines[3] == ("tournament: x (1000) = y (1000) > z (900)  [1 position flips] "
                        "(scored 4 of 6 games; unscored 2: mostly unparseable)")
    assert "3 failed, mostly: the request timed out" in lines[4]
