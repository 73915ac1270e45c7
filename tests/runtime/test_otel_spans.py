"""Evaluations as OpenTelemetry spans, read back with the OpenTelemetry SDK's own in-memory exporter:
a scripted-judge ``grade`` run in a process that set a tracer provider yields one ``LLM`` span per
judge call under one ``EVALUATOR`` span per item, prompts and replies masked; a process that set
none gets nothing, even with an SDK provider standing by."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

SECRET = "sk-proj-Abcdefghijklmnop1234"
SCRIPT = r'''
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from langrag_eval.cli import main

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
if sys.argv[1] == "set":
    trace.set_tracer_provider(provider)
code = main(sys.argv[2:])
provider.force_flush()
print(json.dumps({"code": code, "spans": [json.loads(s.to_json()) for s in exporter.get_finished_spans()]}))
'''


def _grade(tmp_path: Path, provider: str, store: str) -> dict:
    qa = tmp_path / "qa.csv"
    with qa.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "answer", "label"])
        w.writerows([[f"q{i}", f"What does clause {i} say? (key {SECRET})", f"answer {i}", f"label {i}"]
                     for i in range(3)])
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"": f"Score: [[4]], Reason: [[fine, token {SECRET} noted]]"}))
    run = subprocess.run([sys.executable, "-c", SCRIPT, provider, "grade", str(qa), "--judge", f"scripted:{judge}",
                          "--store", str(tmp_path / store), "--out", str(tmp_path / f"{store}.jsonl")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_grade_run_is_one_evaluator_span_per_item_with_its_judge_calls_inside(tmp_path: Path) -> None:
    out = _grade(tmp_path, "set", "s.sqlite")
    assert out["code"] == 0
    spans = out["spans"]
    evaluations = [s for s in spans if s["attributes"].get("openinference.span.kind") == "EVALUATOR"]
    calls = [s for s in spans if s["attributes"].get("openinference.span.kind") == "LLM"]
    assert len(evaluations) == 3 and len(calls) == 3 and len(spans) == 6
    assert sorted(s["attributes"]["langrag.item"] for s in evaluations) == ["q0", "q1", "q2"]
    by_id = {s["context"]["span_id"]: s for s in evaluations}
    for call in calls:
        parent = by_id[call["parent_id"]]  # each call inside its item's evaluation, in its trace
        assert parent["context"]["trace_id"] == call["context"]["trace_id"]
        a = call["attributes"]
        assert a["llm.model_name"].startswith("scripted") and call["status"]["status_code"] == "OK"
        assert a["llm.token_count.total"] == a["llm.token_count.prompt"] + a["llm.token_count.completion"] > 0
        assert "Score: [[4]]" in a["output.value"] and "clause" in a["input.value"]
    assert {s["context"]["trace_id"] for s in evaluations}.__len__() == 3
    for s in evaluations:
        assert s["name"] == "langrag-eval vrag" and s["attributes"]["langrag.run_id"].startswith("grade-")
        assert s["attributes"]["langrag.score.grade"] == 4.0
    text = json.dumps(spans)
    assert SECRET not in text and "***" in text  # prompts, replies and questions masked
    # resumed: every judgment is reused, no judge call is made, and no span either
    again = _grade(tmp_path, "set", "s.sqlite")
    assert again["spans"] == []


def test_nothing_is_emitted_without_a_tracer_provider(tmp_path: Path) -> None:
    out = _grade(tmp_path, "unset", "other.sqlite")
    assert out["code"] == 0 and out["spans"] == []
