"""``langrag-eval grade`` and ``langrag-eval agreement`` end to end with scripted judges."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.runtime import RunStore
from langrag_eval.stats import agreement

REPLIES = {f"answer text {n}": f"Score: [[{n}]], Reason: [[graded at level {n}]]" for n in range(1, 6)}


def scripted(tmp_path: Path, replies: dict[str, str] | list[str] = REPLIES) -> str:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def two_hundred(tmp_path: Path) -> Path:
    rows = [[f"q{i:03d}", f"Question {i}?", f"answer text {i % 5 + 1}", f"label {i}",
             ["Fraud", "Token", "Clearing"][i % 3], (i % 5 + 1) if i % 7 else 3, i % 5 + 1, (i * 3) % 5 + 1]
            for i in range(200)]
    return write_csv(tmp_path / "qa.csv", ["id", "question", "answer", "label", "area", "e1", "e2", "e3"], rows)


def calls_logged(store: Path) -> int:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]


def test_two_hundred_rows_summary_then_rerun_makes_zero_model_calls(tmp_path: Path, capsys) -> None:
    qa, store = two_hundred(tmp_path), tmp_path / "runs.sqlite"
    out = tmp_path / "results.jsonl"
    argv = ["grade", str(qa), "--judge", scripted(tmp_path), "--store", str(store), "--out", str(out),
            "--human-cols", "e1,e2,e3", "--subject-col", "area"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "scored 200 of 200; unscored 0" in first
    assert "accepted 80 of 200 (40.0%; scores >= 4)" in first
    assert "Fraud" in first and "Clearing" in first and "exact agreement" in first
    assert "model calls now: 200" in first
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 200 and records[0]["score"] == 1 and records[4]["accepted"] is True
    assert records[0]["humans"] == {"e1": 3, "e2": 1, "e3": 1} and records[0]["human"] == 1
    logged = calls_logged(store)
    assert logged == 200

    assert main(argv) == 0
    second = capsys.readouterr().out
    assert "model calls now: 0 (cached 0, failed 0)" in second
    assert calls_logged(store) == logged  # not even a cache lookup: the judgments were read back
    assert [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()] == records

    rs = RunStore(store)
    (run,) = rs.runs()
    usage = rs.usage(run["id"])["total"]
    assert usage["calls"] == 200 and usage["cached"] == 0
    summary = rs.get_artifact(run["id"], "vrag")
    assert summary["distribution"] == {str(n): 40 for n in range(1, 6)}
    assert set(summary["subjects"]) == {"Fraud", "Token", "Clearing"}
    # the stored agreement is the stats module's, on median-combined humans
    judge = {r["id"]: r["score"] for r in records}
    humans = {r["id"]: r["human"] for r in records}
    expected = agreement(judge, humans, names=("judge", "humans")).as_dict()
    assert summary["agreement"]["exact"] == expected["exact"]
    assert summary["agreement"]["binary_confusion"] == expected["binary_confusion"]
    assert set(summary["agreement"]["annotators"]) == {"e1", "e2", "e3"}
    assert summary["agreement"]["humans"] == ("median of e1, e2, e3 (an even count: one of the two middle "
                                              "scores at random, seed 0, as vRAG-Eval)")


def test_bad_rows_are_reported_and_the_other_items_graded(tmp_path: Path, capsys) -> None:
    qa = tmp_path / "bad.csv"
    qa.write_bytes(b"id,question,answer,label,h\n"
                   b"a,Q,answer text 4,L,4\n"
                   b"b,Q,,L,2\n"
                   b"c,Q,answer text 2,L,two\n"
                   b"a,Q,answer text 5,L,5\n"
                   b"d,Q,answer text 3,L,\n"
                   b"e,Q,caf\xe9 answer text 1,L,1\n"
                   b"f,Q,answer text 5,,5\n")
    out = tmp_path / "out.jsonl"
    code = main(["grade", str(qa), "--judge", scripted(tmp_path), "--store", str(tmp_path / "s.sqlite"),
                 "--out", str(out), "--human-cols", "h"])
    captured = capsys.readouterr()
    assert code == 0
    err = captured.err
    assert f'{qa}:3: field "answer": empty answer' in err
    assert f"{qa}:4: field \"h\": human score 'two' is not an integer" in err
    assert f"{qa}:5: field \"id\": repeated id 'a' (first on line 2); row skipped" in err
    assert f'{qa}:7: field "answer": not UTF-8 (byte 0xe9' in err
    assert f'{qa}:8: field "label": empty label' in err
    records = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert set(records) == {"a", "b", "c", "d", "f"}
    assert records["a"]["score"] == 4 and records["c"]["score"] == 2 and records["d"]["score"] == 3
    for item in ("b", "f"):
        assert records[item]["score"] is None and records[item]["unscored"]["cause"] == "invalid_input"
    assert records["c"]["human"] is None
    assert "2 row(s) skipped" in captured.out and "invalid_input 2" in captured.out


@pytest.mark.parametrize("content,extra,message", [
    ("id,question,answer\n1,Q,A\n", [], "missing column 'reference' (or its older name 'label')"),
    ("id,question,answer,label\n1,Q,A,L\n", ["--human-cols", "x,y", "--combine", "z"], "--combine 'z'"),
    ("id,q,answer,label\n1,Q,A,L\n", ["--question-col", "question"], "missing column 'question'"),
])
def test_missing_required_column_is_a_one_line_error(tmp_path: Path, capsys, content, extra, message) -> None:
    qa = tmp_path / "qa.csv"
    qa.write_text(content, encoding="utf-8")
    code = main(["grade", str(qa), "--judge", scripted(tmp_path), "--store", str(tmp_path / "s.sqlite"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert err.startswith("langrag-eval grade: error: ")


def test_unreadable_file_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["grade", str(tmp_path / "none.csv"), "--judge", scripted(tmp_path),
                 "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "none.csv: file not found" in capsys.readouterr().err


def test_jsonl_custom_columns_and_grader_options(tmp_path: Path, capsys) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text("\n".join(json.dumps({"key": f"k{i}", "q": "Q?", "resp": "R", "truth": "T"}) for i in range(3)),
                  encoding="utf-8")
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("1: HOUSE RUBRIC wrong\n5: HOUSE RUBRIC right\n", encoding="utf-8")
    examples = tmp_path / "shots.json"
    examples.write_text(json.dumps([{"question": "SHOT-Q", "label": "l", "answer": "a", "score": 2,
                                     "reason": "r"}]), encoding="utf-8")
    # the scripted judge only answers prompts carrying the rubric, the example and the confidence ask
    judge = scripted(tmp_path, {"HOUSE RUBRIC": "Score: [[5]], Confidence: [[70]], Reason: [[ok]]"})
    out = tmp_path / "o.jsonl"
    code = main(["grade", str(qa), "--id-col", "key", "--question-col", "q", "--answer-col", "resp",
                 "--label-col", "truth", "--rubric", str(rubric), "--examples", str(examples),
                 "--confidence", "--threshold", "5", "--judge", judge, "--store", str(tmp_path / "s.sqlite"),
                 "--out", str(out)])
    assert code == 0
    records = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["score"], r["confidence"], r["accepted"]) for r in records] == [
        (f"k{i}", 5, 70, True) for i in range(3)]
    assert "mean confidence 70.0" in capsys.readouterr().out


def test_agreement_command(tmp_path: Path, capsys) -> None:
    judge = [1, 2, 3, 4, 5, 4, 2, 1, 5, 3]
    human = [1, 3, 3, 5, 5, 2, 2, 2, 4, 4]
    a = tmp_path / "judge.jsonl"
    a.write_text("\n".join(json.dumps({"id": f"q{i}", "score": s}) for i, s in enumerate(judge))
                 + '\n{"id": "q10", "score": null}\n', encoding="utf-8")
    b = write_csv(tmp_path / "human.csv", ["item", "expert"],
                  [[f"q{i}", s] for i, s in enumerate(human)] + [["q10", 4], ["q11", "high"], ["q3", 1]])
    out = tmp_path / "agreement.json"
    code = main(["agreement", str(a), str(b), "--b-id-col", "item", "--b-score-col", "expert",
                 "--names", "judge,human", "--json", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    assert f"{b}:13: field \"expert\": score 'high'" in captured.err
    assert f"{b}:14: field \"item\": repeated id 'q3'" in captured.err
    stored = json.loads(out.read_text(encoding="utf-8"))
    expected = agreement(judge, human, names=("judge", "human"))
    assert stored["compared"] == 10 and stored["exact"] == expected.exact == 0.4
    assert stored["binary"] == expected.binary and stored["kappa"] == pytest.approx(expected.kappa)
    assert stored["unscored"] == {"judge": 1, "human": 1} and stored["missing"] == {"judge": 1, "human": 0}
    assert "exact agreement (5 levels)     40.0%" in captured.out
    assert "Kendall tau-b" in captured.out and "p = " in captured.out
    assert main(["agreement", str(a), str(b)]) == 2
    assert "missing columns 'id' (the id column), 'score' (the score column)" in capsys.readouterr().err
