"""The outside oracle for LangSmith exports: apps traced by LangChain's own LangSmith tracer into a
local stand-in for the API, exported with the real ``langsmith.Client.list_runs``, read back into the
samples live capture recorded for the same calls."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("langsmith")

from langsmith_server import serving
from test_trace_capture import QUESTIONS, _view, langgraph_agent, lcel_chain

from langrag_eval.traces import is_langsmith_export, read_run_samples


def _export(build, tmp_path: Path, *, jsonl: bool):
    from langchain_core.tracers.context import tracing_v2_enabled
    from langsmith import Client

    from langchain_langrag import capturing

    app = build()
    with serving() as (url, _store):
        client = Client(api_url=url, api_key="local")
        with tracing_v2_enabled(project_name="prod", client=client), capturing() as capture:
            for q in QUESTIONS:
                app(q)
        client.flush()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = [json.loads(r.model_dump_json()) for r in
                    client.list_runs(project_id="00000000-0000-0000-0000-000000000001")]
    path = tmp_path / ("runs.jsonl" if jsonl else "runs.json")
    path.write_text("".join(json.dumps(r) + "\n" for r in runs) if jsonl else json.dumps(runs, indent=1))
    return capture.samples, path


@pytest.mark.parametrize("build", [lcel_chain, langgraph_agent], ids=["lcel-chain", "create-agent"])
@pytest.mark.parametrize("jsonl", [True, False], ids=["jsonl", "json-list"])
def test_samples_read_from_a_langsmith_export_equal_live_capture(build, jsonl, tmp_path: Path) -> None:
    live, path = _export(build, tmp_path, jsonl=jsonl)
    assert len(live) == len(QUESTIONS) and all(s.contexts for s in live)
    assert is_langsmith_export(path)
    problems: list = []
    read = sorted(read_run_samples(path, problems=problems), key=lambda s: s.metadata["started"])
    assert problems == []
    assert [_view(s) for s in read] == [_view(s) for s in live]
    assert all(s.capture_note is None for s in read)


def test_a_bad_record_and_a_cut_trace_are_one_line_each(tmp_path: Path) -> None:
    live, path = _export(lcel_chain, tmp_path, jsonl=True)
    lines = path.read_text().splitlines()
    roots = [i for i, line in enumerate(lines) if json.loads(line).get("parent_run_id") is None]
    del lines[roots[0]]
    lines.insert(1, "{not json")
    path.write_text("\n".join(lines) + "\n")
    problems: list = []
    read = list(read_run_samples(path, problems=problems))
    assert [_view(s) for s in read] == [_view(live[1])]
    assert len(problems) == 2 and f"{path}:2:" in str(problems[0]) and "not its root run" in str(problems[1])


def test_thelma_reads_a_langsmith_export_by_its_format(tmp_path: Path) -> None:
    from test_trace_windows import thelma

    _live, path = _export(lcel_chain, tmp_path, jsonl=True)
    run = thelma(tmp_path, path)
    assert run.returncode == 0, run.stderr
    assert "judged 2" in run.stdout and " 2 traces (baseline)" in run.stdout, run.stdout
    forced = thelma(tmp_path, path, "--trace-format", "otlp")  # a LangSmith run read as OTLP: one line each
    assert forced.returncode != 0 and "not an OTLP trace export" in forced.stderr + forced.stdout
