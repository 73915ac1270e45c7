"""``langrag-eval conversations simulate`` over a ``create_agent`` with a checkpointer named as
MODULE:FACTORY, then ``conversations judge`` on what it wrote; a second simulate resumes the finished
run without calling the app; bad input is one line naming file, line and field."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langgraph")

from langrag_eval.cli import main

APP = '''
from chat_apps import checkpointer_agent
from langrag_eval.conversations import checkpointer_chat
CALLS = []

def make_chat():
    CALLS.append(1)
    return checkpointer_chat(checkpointer_agent()[0])
'''
USER = {"Answer to: When do spare": "GOAL MET", "Answer to: How long": "When do spare seals ship?",
        "": "How long is the warranty on the pump?"}


def test_simulate_then_judge(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "convapp.py").write_text(APP)
    (tmp_path / "user.json").write_text(json.dumps(USER))
    (tmp_path / "judge.json").write_text(json.dumps({"<goal>": "Score: [[5]], Reason: [[Both answered.]]",
                                                     "": "Score: [[3]], Reason: [[Partly.]]"}))
    (tmp_path / "personas.jsonl").write_text(
        json.dumps({"id": "p1", "persona": "A plumber", "goal": "Warranty and seals",
                    "role": "Pump support"}) + "\n")
    argv = ["conversations", "simulate", "--app", "convapp:make_chat", "--personas", "personas.jsonl",
            "--out", "out.jsonl", "--judge", "scripted:user.json", "--store", "runs.sqlite"]
    assert main(argv) == 0
    [row] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [t["user"] for t in row["turns"]] == ["How long is the warranty on the pump?", "When do spare seals ship?"]
    assert row["goal_met"] is True and "goal met in 1" in capsys.readouterr().out
    import convapp
    assert main(argv + ["--out", "again.jsonl"]) == 0  # found again: the stored conversation, no app made
    assert len(convapp.CALLS) == 1
    assert main(["conversations", "judge", "out.jsonl", "--judge", "scripted:judge.json",
                 "--store", "runs.sqlite"]) == 0
    out = capsys.readouterr().out
    assert "goal_met: pass rate 1.00, mean grade 5.00" in out
    assert "knowledge_retention: pass rate 0.00, mean grade 3.00" in out
    assert "role_adherence: pass rate 0.00" in out
    # each criterion's summary is stored with the run, so the report's scores section shows it
    from langrag_eval.report import build_report
    from langrag_eval.runtime import RunStore
    store = RunStore(tmp_path / "runs.sqlite")
    [judged] = [r["id"] for r in store.runs() if r["id"].startswith("conversations-judge-")]
    html = build_report(store, judged)
    assert 'id="scores"' in html
    assert all(f"summary/{c}" in store.artifacts(judged) and c in html
               for c in ("goal_met", "knowledge_retention", "role_adherence"))


def test_bad_personas_are_one_line(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "user.json").write_text(json.dumps(USER))
    (tmp_path / "personas.jsonl").write_text('{"id": "p1", "persona": "A plumber"}\n')
    assert main(["conversations", "simulate", "--app", "nowhere:make", "--personas", "personas.jsonl",
                 "--out", "out.jsonl", "--judge", "scripted:user.json", "--store", "runs.sqlite"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "personas.jsonl:1: field 'goal'" in err[0] and "Traceback" not in err[0]
