"""``langrag-eval grammar`` end to end with scripted judges."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.grammar import read_dataset
from langrag_eval.runtime import RunStore


def test_generate_demo_without_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ds.jsonl"
    assert main(["grammar", "generate", "--db", "demo", "--out", str(out), "--store",
                 str(tmp_path / "runs.sqlite")]) == 0
    queries = read_dataset(out)
    assert len(queries) == 84 and len({q.logic_id for q in queries}) == 42
    liam = [q for q in queries if "Liam O'Connor" in q.question and q.template_id == "employee-title"]
    assert {q.answer for q in liam} == {"Project Director"} and len(liam) == 2
    assert "project-by-status: 3 combinations, 1 logics, 2 queries (no answer 0, several answers 2, NULL only 0, more than 20 answers 0)" in capsys.readouterr().out


def test_generate_writes_templates_then_reloads_edits(spider_company_db: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    db = spider_company_db
    replies = tmp_path / "judge.json"
    replies.write_text(json.dumps({
        "SQL query templates": "<templates>\nSELECT Headquarters FROM company WHERE Name = '[company.Name]'\n</templates>",
        "natural questions": json.dumps({"short": ["Where is [company.Name] based?"],
                                         "long": ["Could you tell me where the head office of [company.Name] is?"]}),
    }), encoding="utf-8")
    templates = tmp_path / "templates.json"
    common = ["--db", str(db), "--templates", str(templates), "--judge", f"scripted:{replies}",
              "--store", str(tmp_path / "runs.sqlite"), "--texts-per-style", "1"]
    assert main(["grammar", "generate", *common, "--templates-only"]) == 0
    assert "review and edit them" in capsys.readouterr().out
    saved = json.loads(templates.read_text(encoding="utf-8"))
    assert [t["sql"] for t in saved["templates"]] == ["SELECT Headquarters FROM company WHERE Name = '[company.Name]'"]
    # A reviewer adds a template of their own, without phrasings: the judge phrases it on reload.
    saved["templates"].append({"id": "industry", "sql": "SELECT Industry FROM company WHERE Name = '[company.Name]'"})
    templates.write_text(json.dumps(saved, indent=2), encoding="utf-8")
    out = tmp_path / "ds.jsonl"
    assert main(["grammar", "generate", *common, "--out", str(out), "--stratify", "2"]) == 0
    text = capsys.readouterr().out
    assert "reloaded 2 template(s)" in text and "phrased 1 template(s)" in text
    queries = read_dataset(out)
    assert {q.template_id for q in queries} == {"t1", "industry"}
    assert len(queries) == 2 * 2 * 19  # 2 templates x 19 companies x (short + long)


def test_analyze_stores_the_grammar_artifact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = tmp_path / "ds.jsonl"
    store = tmp_path / "runs.sqlite"
    assert main(["grammar", "generate", "--db", "demo", "--out", str(ds), "--store", str(store)]) == 0
    queries = [q for q in read_dataset(ds) if q.template_id == "office-country"]
    ds.write_text("".join(q.model_dump_json() + "\n" for q in queries), encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    with answers.open("w", encoding="utf-8") as f:
        for q in queries:
            text = f"That office is in {q.answer}." if q.style == "short" else "I do not know."
            f.write(json.dumps({"qid": q.id, "query": q.question, "agent": "rag-bm25", "answer": text,
                                "documents": [{"id": f"doc-{q.logic_id}" if q.style == "short" else "other",
                                               "text": "...", "score": 1.0}]}, ensure_ascii=False) + "\n")
        f.write("{not json}\n")
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps({"qid": q.id, "evaluator": "thelma", "verdict": 0.9}) + "\n"
                                for q in queries), encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"I do not know": "Judgement: [[Incorrect]]", "": "Judgement: [[Correct]]"}))
    summary = tmp_path / "summary.json"
    assert main(["grammar", "analyze", "--dataset", str(ds), "--answers", str(answers), "--judge",
                 f"scripted:{judge}", "--store", str(store), "--verdicts", str(verdicts),
                 "--out", str(summary)]) == 0
    captured = capsys.readouterr()
    assert f"skipped: {answers}:9:" in captured.err  # the broken line is reported, the rest graded
    run_id = re.search(r"run (grammar-\w+)", captured.out).group(1)
    artifact = RunStore(store).get_artifact(run_id, "grammar")
    assert artifact == json.loads(summary.read_text(encoding="utf-8"))
    r = artifact["agents"]["rag-bm25"]
    assert r["overall"]["groups"] == {"gap": 0, "robust": 0, "non_robust": 4}
    assert r["overall"]["robustness"] == 0.5 and r["attribution"]["retrieval"] == 4
    thelma = r["reference_free"]["thelma"]
    assert (thelma["tp"], thelma["fp"]) == (4, 4) and thelma["precision"]["value"] == 0.5
    assert "short vs long: CMH p =" in captured.out
    from langrag_eval.report import build_report  # the report's summary names the accuracy, no interval

    top = build_report(RunStore(store), run_id).split('<section id="summary">')[1].split("</section>")[0]
    assert re.search(r"GRAMMAR</bdi></a>: <bdi>accuracy of rag-bm25</bdi>.*?<bdi>50%</bdi>", top, re.S)


def test_bad_database_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grammar", "schema", "--db", str(tmp_path / "missing.sqlite")]) == 2
    assert "SQLite database file not found" in capsys.readouterr().err


def test_schema_command_warns_about_meaningless_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3
    db = tmp_path / "m.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (c1 TEXT, name TEXT)")
    conn.commit()
    conn.close()
    assert main(["grammar", "schema", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "warning: table t is empty" in out and "column name(s) c1 say nothing" in out
