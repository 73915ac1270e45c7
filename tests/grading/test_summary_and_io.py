"""The per-dataset summary (pure function, JSON shape) and the grading-file reader's bad-input rules."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from langrag_eval.errors import DataError
from langrag_eval.grading import ARTIFACT, Columns, VragGrade, read_grading_file, summarize
from langrag_eval.files.tables import read_table
from langrag_eval.results import Unscored
from langrag_eval.runtime import RunStore


def g(score: int, confidence: int | None = None, threshold: int = 4) -> VragGrade:
    return VragGrade(score=score, accepted=score >= threshold, confidence=confidence)


def test_summary_counts_distribution_accept_rate_unscored_and_subjects() -> None:
    results = [g(1), g(2), g(4, 70), g(5, 90), g(5), Unscored(reason="cannot grade: answer empty",
                                                               cause="invalid_input"),
               Unscored(reason="unparseable reply", cause="unparseable")]
    subjects = ["Fraud", "Fraud", "Token", None, "Token", "Fraud", " "]
    s = summarize(results, ids=[f"q{i}" for i in range(7)], subjects=subjects)
    assert s["items"] == 7 and s["scored"] == 5
    assert s["distribution"] == {"1": 1, "2": 1, "3": 0, "4": 1, "5": 2}
    assert (s["accepted"], s["rejected"], s["accept_rate"]) == (3, 2, 0.6)
    assert s["mean_score"] == pytest.approx(17 / 5) and s["mean_confidence"] == 80
    assert s["unscored"]["count"] == 2
    assert s["unscored"]["by_cause"] == {"invalid_input": 1, "unparseable": 1}
    assert s["unscored"]["items"][0] == {"id": "q5", "cause": "invalid_input",
                                         "reason": "cannot grade: answer empty"}
    assert set(s["subjects"]) == {"Fraud", "Token", "(none)"}
    fraud = s["subjects"]["Fraud"]
    assert (fraud["items"], fraud["scored"], fraud["accept_rate"]) == (3, 2, 0.0)
    assert fraud["unscored"] == {"count": 1, "by_cause": {"invalid_input": 1}}
    assert s["subjects"]["Token"]["accept_rate"] == 1.0
    assert s["subjects"]["(none)"]["items"] == 2
    assert json.loads(json.dumps(s)) == s


def test_summary_of_nothing_scored_has_no_nan() -> None:
    s = summarize([Unscored(reason="x", cause="timeout")])
    assert s["accept_rate"] is None and s["mean_score"] is None and s["subjects"] == {}
    text = json.dumps(s)
    assert "NaN" not in text and not any(isinstance(v, float) and math.isnan(v) for v in s.values())


def test_summary_is_stored_as_the_vrag_artifact() -> None:
    store = RunStore(":memory:")
    run = store.open_run("grade", {"file": "x"})
    store.put_artifact(run, ARTIFACT, summarize([g(4), g(3)], threshold=4))
    assert store.get_artifact(run, "vrag")["accept_rate"] == 0.5


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


def test_csv_with_custom_columns_humans_and_subjects(tmp_path: Path) -> None:
    p = write(tmp_path, "qa.csv", "qid,q,resp,truth,area,ann1,ann2\n"
                                  'a1,"Multi\nline?",Yes,Yes,Fraud,4,5\n'
                                  "a2,Why?,Because,Because,,3,\n")
    data = read_grading_file(p, Columns(question="q", answer="resp", label="truth", id="qid",
                                        humans=("ann1", "ann2"), subject="area"))
    assert [s.id for s in data.samples] == ["a1", "a2"]
    assert data.samples[0].question == "Multi\nline?" and data.samples[0].reference == "Yes"
    assert data.lines == {"a1": 2, "a2": 4}  # the quoted newline makes row 1 span two lines
    assert data.humans == {"a1": {"ann1": 4, "ann2": 5}, "a2": {"ann1": 3, "ann2": None}}
    assert data.subjects == {"a1": "Fraud", "a2": None}
    assert data.issues == []


def test_bad_rows_are_reported_with_file_line_and_field_and_the_rest_kept(tmp_path: Path) -> None:
    p = write(tmp_path, "qa.csv", "id,question,answer,label,h\n"
                                  "1,Q1,A1,L1,4\n"
                                  "2,Q2,,L2,five\n"
                                  "1,Q3,A3,L3,2\n"
                                  "4,Q4,A4,,9\n"
                                  "5,Q5,A5,L5,4.0\n")
    data = read_grading_file(p, Columns(humans=("h",)))
    assert [s.id for s in data.samples] == ["1", "2", "4", "5"]
    messages = [str(i) for i in data.issues]
    assert f'{p}:3: field "answer": empty answer; graded as unscored (invalid_input)' in messages
    assert any(m.startswith(f'{p}:3: field "h": human score \'five\'') for m in messages)
    assert f"{p}:4: field \"id\": repeated id '1' (first on line 2); row skipped" in messages
    assert any(m.startswith(f'{p}:5: field "label": empty label') for m in messages)
    assert any(m.startswith(f'{p}:5: field "h": human score \'9\'') for m in messages)
    assert data.humans["5"] == {"h": 4} and data.humans["2"] == {"h": None}
    assert data.skipped == 1


def test_non_utf8_rows_are_reported_and_skipped(tmp_path: Path) -> None:
    p = write(tmp_path, "qa.csv", b"id,question,answer,label\n1,Q1,A1,L1\n2,Q2,caf\xe9,L2\n3,Q3,A3,L3\n")
    data = read_grading_file(p)
    assert [s.id for s in data.samples] == ["1", "3"]
    (issue,) = data.issues
    assert (issue.line, issue.field) == (3, "answer") and "not UTF-8 (byte 0xe9" in str(issue)
    j = write(tmp_path, "qa.jsonl", b'{"id": "a", "question": "Q", "answer": "A", "label": "L"}\n'
                                    b'{"id": "b", "question": "Q", "answer": "caf\xe9", "label": "L"}\n'
                                    b'not json\n[1]\n')
    data = read_grading_file(j)
    assert [s.id for s in data.samples] == ["a"]
    assert [(i.line, i.field) for i in data.issues] == [(2, "answer"), (3, None), (4, None)]


def test_jsonl_missing_keys_and_non_text_values(tmp_path: Path) -> None:
    p = write(tmp_path, "qa.jsonl", '{"question": "Q1", "answer": "A1", "label": "L1"}\n'
                                    '{"question": "Q2", "answer": "A2"}\n'
                                    '{"question": "Q3", "answer": {"x": 1}, "label": 42}\n')
    data = read_grading_file(p)
    assert [s.id for s in data.samples] == ["line-1", "line-2", "line-3"]  # no id column: lines
    assert data.samples[2].reference == "42"
    assert [(i.line, i.field) for i in data.issues] == [(2, "label"), (3, "answer"), (3, "answer")]
    assert "missing label" in str(data.issues[0])


@pytest.mark.parametrize("content,columns,match", [
    ("id,question,answer\n1,Q,A\n", Columns(), r"qa.csv:1: missing column 'label' \(the label column\)"),
    ("id,question,answer,label\n1,Q,A,L\n", Columns(humans=("h1",)), "'h1'"),
    ("id,question,answer,label\n1,Q,A,L\n", Columns(subject="area"), "'area'"),
    ("id,question,answer,label\n1,Q,A,L\n", Columns(id="key"), "'key'"),
    ("", Columns(), "empty"),
])
def test_missing_columns_and_empty_files_raise_one_clear_error(tmp_path: Path, content, columns, match) -> None:
    p = write(tmp_path, "qa.csv", content)
    with pytest.raises(DataError, match=match):
        read_grading_file(p, columns)


def test_unreadable_files_raise(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_table(tmp_path / "none.csv")
    with pytest.raises(DataError, match="UTF-16"):
        read_table(write(tmp_path, "u16.csv", "id,question\n".encode("utf-16")))
    with pytest.raises(DataError, match="header row is not UTF-8"):
        read_table(write(tmp_path, "bad.csv", b"id,qu\xe9stion\n1,2\n"))
    with pytest.raises(DataError, match="format"):
        read_table(write(tmp_path, "qa.xlsx", "x"))
    with pytest.raises(DataError, match="no line could be read"):
        read_table(write(tmp_path, "x.jsonl", "nope\n"))
    assert read_table(write(tmp_path, "bom.csv", b"\xef\xbb\xbfid,question\n1,Q\n")).columns == ["id", "question"]
