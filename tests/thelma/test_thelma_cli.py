"""``langrag-eval thelma FILE`` end to end with a scripted judge file: per-sample output, means with
spread and unscored counts, the diagnosis, the ``thelma`` artifact, bad rows reported with file, line
and field while the other rows are scored, and a resumed run that calls no model."""

from __future__ import annotations

import csv
import json

import pytest

from langrag_eval.cli import main
from langrag_eval.runtime import RunStore

REPLIES = {"<passage>": "<output>\n- Ada was born in 1815.\n</output>",
           "<message>": "<output>\n- When was Ada born?\n</output>",
           "": "<output>[1]</output>"}


@pytest.fixture
def judge_file(tmp_path):
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(REPLIES), encoding="utf-8")
    return path


def rows():
    good = {"query": "When was Ada born?", "sources": ["Ada was born in 1815."], "response": "Ada was born in 1815."}
    return [
        {"id": "a", **good},
        {"id": "b", **good, "response": ""},                                   # empty response: undefined
        {"id": "c", **good, "sources": ["Ada was born in 1815.", 42]},          # a source that is not text
        {"id": "d", **good, "sources": "not json"},                             # bad JSON: row skipped
        {"id": "e", **good, "query": 7},                                        # query not text: skipped
        {"id": "f", **good, "sources": []},                                     # no sources: undefined
    ]


def run(tmp_path, judge_file, data, *extra):
    out = tmp_path / "out.jsonl"
    store = tmp_path / "runs.sqlite"
    code = main(["thelma", str(data), "--judge", f"scripted:{judge_file}", "--store", str(store),
                 "--embedder", "none", "--out", str(out), *extra])
    return code, out, store


def test_jsonl_end_to_end(tmp_path, judge_file, capsys):
    data = tmp_path / "traffic.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows()) + "\n", encoding="utf-8")
    code, out, store = run(tmp_path, judge_file, data)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f'{data}:4: field "sources": expected a list of source texts such as ["first passage", "second passage"], got the text' in captured.err
    assert f'{data}:5: field "query": the query must be text, not int' in captured.err
    assert "self-distinctness (sd) is skipped" in captured.err
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(records) == {"a", "b", "c", "f"}
    assert records["a"]["scores"] == {m: 1.0 for m in ("sp1", "sp2", "sqc", "rp", "rqc", "gr")}
    assert records["b"]["unscored"]["rp"] == {"cause": "undefined", "reason": "empty response"}
    assert records["c"]["unscored"]["sp1"]["cause"] == "invalid_input"
    assert records["c"]["scores"]["rp"] == 1.0
    assert records["f"]["unscored"]["gr"]["reason"].startswith("no sources retrieved")
    assert records["a"]["line"] == 1 and records["f"]["line"] == 6
    assert "rp       1.000  0.000       3         1  response precision (unscored: undefined 1)" in captured.out
    assert "judge calls per sample" in captured.out
    s = RunStore(store)
    (run_row,) = s.runs()
    art = s.get_artifact(run_row["id"], "thelma")
    assert art["metrics"]["rp"]["n"] == 3 and art["metrics"]["rp"]["causes"] == {"undefined": 1}
    assert art["metrics"]["sp1"]["causes"] == {"invalid_input": 1, "undefined": 1}
    assert art["input"]["rows_skipped"] == 2 and art["input"]["problems"][0]["field"] == "sources"
    assert [x["id"] for x in art["samples"]] == ["a", "b", "c", "f"]
    assert art["usage"]["calls"] > 0 and art["mode"] == "per_component"
    assert "sd" not in art["metrics"]

    # The same command resumes the same run: no model call at all.
    calls_before = s.usage(run_row["id"])["total"]["calls"]
    code, *_ = run(tmp_path, judge_file, data)
    assert code == 0
    assert s.usage(run_row["id"])["total"]["calls"] == calls_before
    assert len(s.runs()) == 1


def test_csv_with_own_columns_batched_and_thresholds(tmp_path, judge_file, capsys):
    data = tmp_path / "traffic.csv"
    with data.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "contexts", "answer"])
        w.writerow(["When was Ada born?", json.dumps(["Ada was born in 1815."]), "Ada was born in 1815."])
        w.writerow(["When was Ada born?", json.dumps({"oops": 1}), "x"])
    code, out, store = run(tmp_path, judge_file, data, "--query-col", "question", "--sources-col", "contexts",
                           "--response-col", "answer", "--batched", "--threshold", "gr=0.9:0.95",
                           "--metrics", "rp,gr")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f'{data}:3: field "contexts": expected a list of source texts such as ["first passage", "second passage"], got an object' in captured.err
    (record,) = map(json.loads, out.read_text().splitlines())
    assert record["id"] == "line-2" and record["scores"] == {"rp": 1.0, "gr": 1.0}
    s = RunStore(store)
    art = s.get_artifact(s.runs()[0]["id"], "thelma")
    assert art["mode"] == "batched" and art["thresholds"]["low"] == {"gr": 0.9}


def test_missing_column_and_bad_options_exit_2(tmp_path, judge_file, capsys):
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({"q": "x"}) + "\n", encoding="utf-8")
    code, *_ = run(tmp_path, judge_file, data)
    assert code == 2 and "missing column 'question' (or its older name 'query')" in capsys.readouterr().err
    data.write_text(json.dumps(rows()[0]) + "\n", encoding="utf-8")
    code, *_ = run(tmp_path, judge_file, data, "--threshold", "xx=0.3")
    assert code == 2 and "METRIC=LOW[:HIGH]" in capsys.readouterr().err
    code, *_ = run(tmp_path, judge_file, data, "--metrics", "rp,zz")
    assert code == 2 and "unknown THELMA metric" in capsys.readouterr().err
