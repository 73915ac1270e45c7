"""``langrag-eval tournament`` end to end with a scripted judge file."""

from __future__ import annotations

import json
from pathlib import Path

from langrag_eval.cli import main
from langrag_eval.runtime import RunStore

JUDGE = {
    "<document>": 'On topic.\n{"reason": "names the answer", "relevance": 2}',
    "<answer_a>\ngood": "A is better.\n[[A]]",
    "<answer_a>\nbad": "B is better.\n[[B]]",
}


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "queries.csv").write_text("qid,query\nq1,capital?\nq2,author?\n", encoding="utf-8")
    (tmp_path / "documents.csv").write_text(
        "qid,did,document,agent\nq1,d1,Paris is the capital,good\nq1,d1,Paris is the capital,bad\n"
        "q2,d2,Shakespeare wrote it,good\n", encoding="utf-8")
    (tmp_path / "answers.csv").write_text(
        "qid,agent,answer\nq1,good,good: Paris\nq1,bad,bad: Lyon\nq2,good,good: Shakespeare\n"
        "q2,bad,bad: Marlowe\nq3,bad,bad: nobody\n", encoding="utf-8")
    (tmp_path / "judge.json").write_text(json.dumps(JUDGE), encoding="utf-8")
    return [str(tmp_path / n) for n in ("queries.csv", "documents.csv", "answers.csv")]


def test_cli_csv_end_to_end_and_resume(tmp_path: Path, capsys) -> None:
    files = _files(tmp_path)
    store = str(tmp_path / "runs.sqlite")
    args = ["tournament", *files, "--judge", f"scripted:{tmp_path / 'judge.json'}", "--store", store,
            "--tournaments", "20", "--bootstrap", "20", "--json", str(tmp_path / "summary.json")]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.index("good") < out.index("bad")               # ranked first
    assert "MRR@5" in out and "good: 1.000  1.000" in out
    assert "Win share" in out and "100%/0%/0%" in out
    assert "answers.csv:6: field \"qid\": query 'q3'" in err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["games"]["played"] == 2 and summary["judge_calls"] == 2 + 4
    assert summary["left_out"]["counts"] == {"unknown_qid": 1}
    run = RunStore(store).runs()[0]["id"]
    assert RunStore(store).get_artifact(run, "tournament")["ranking"][0]["agent"] == "good"
    assert main(args) == 0                                     # same command: resumed, no new calls
    assert json.loads((tmp_path / "summary.json").read_text())["judge_calls"] == 0


def test_cli_answers_jsonl(tmp_path: Path, capsys) -> None:
    _files(tmp_path)
    lines = [{"qid": "q1", "query": "capital?", "agent": a, "answer": f"{a}: x",
              "documents": [{"id": "d1", "text": "Paris is the capital", "score": 1.0}]} for a in ("good", "bad")]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    assert main(["tournament", "--answers", str(path), "--judge", f"scripted:{tmp_path / 'judge.json'}",
                 "--store", str(tmp_path / "r.sqlite"), "--tournaments", "5", "--bootstrap", "5"]) == 0
    out = capsys.readouterr().out
    assert out.index("good") < out.index("bad") and "bad: 1.000  1.000" in out


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "q.csv").write_text("id,text\n", encoding="utf-8")
    assert main(["tournament", str(tmp_path / "q.csv"), str(tmp_path / "q.csv"),
                 "--judge", "scripted:nowhere.json", "--store", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "q.csv:1: missing column(s) qid, query" in err and "Traceback" not in err
    assert main(["tournament", "--store", str(tmp_path / "r.sqlite")]) == 2
