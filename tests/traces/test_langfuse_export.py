"""The outside oracle for Langfuse exports: apps traced by Langfuse's own LangChain callback handler
(``langfuse.langchain.CallbackHandler``, exporting through the real SDK) into a local stand-in for
the Langfuse API, exported with the real client (``api.observations.get_many``), read back into the
samples live capture recorded for the same calls."""

from __future__ import annotations

import json
import uuid
from contextvars import ContextVar
from pathlib import Path

import pytest

pytest.importorskip("langfuse")

from langfuse_server import serving
from test_trace_capture import QUESTIONS, _view, langgraph_agent, lcel_chain

from langrag_eval.traces import export_format, read_langfuse_samples

_HANDLER: ContextVar = ContextVar("langfuse_handler", default=None)


def _hook() -> None:
    # The docs pass the handler in each call's config; a configure hook does the same for apps that
    # take only the question, through LangChain's own mechanism (as tracing_v2_enabled does).
    from langchain_core.tracers.context import register_configure_hook

    register_configure_hook(_HANDLER, inheritable=True)


def _export(build, *, parse_io: bool) -> tuple[list, list[dict], list[dict]]:
    """Live samples, the observations as the client returns them, and the same grouped into trace
    objects as ``GET /api/public/traces/{id}`` returns them."""
    from langfuse import Langfuse
    from langfuse.langchain import CallbackHandler
    from opentelemetry.sdk.trace import TracerProvider

    from langchain_langrag import capturing

    _hook()
    app = build()
    key = f"pk-lf-{uuid.uuid4().hex}"  # the SDK keeps one client per key: a new key, a new server
    with serving() as (url, _store):
        client = Langfuse(public_key=key, secret_key="sk-lf-local", base_url=url,
                          tracer_provider=TracerProvider())  # not the process's global provider
        token = _HANDLER.set(CallbackHandler(public_key=key))
        try:
            with capturing() as capture:
                for q in QUESTIONS:
                    app(q)
        finally:
            _HANDLER.reset(token)
        client.flush()
        observations, cursor = [], None
        while True:
            page = client.api.observations.get_many(fields="core,basic,io,model,usage,metadata",
                                                    parse_io_as_json=parse_io, cursor=cursor)
            observations += [json.loads(o.json(by_alias=True)) for o in page.data]
            cursor = page.meta.cursor
            if not cursor:
                break
        client.shutdown()
    traces: dict[str, dict] = {}
    for o in observations:
        t = traces.setdefault(o["traceId"], {"id": o["traceId"], "observations": []})
        t["observations"].append(o)
        if o["parentObservationId"] is None:
            t.update(name=o["name"], timestamp=o["startTime"], input=o["input"], output=o["output"])
    return capture.samples, observations, list(traces.values())


def _read(path: Path) -> list:
    problems: list = []
    read = sorted(read_langfuse_samples(path, problems=problems), key=lambda s: s.metadata["started"])
    assert problems == []
    return read


@pytest.mark.parametrize("build", [lcel_chain, langgraph_agent], ids=["lcel-chain", "create-agent"])
@pytest.mark.parametrize("parse_io", [False, True], ids=["io-as-text", "io-as-json"])
def test_samples_read_from_a_langfuse_export_equal_live_capture(build, parse_io, tmp_path: Path) -> None:
    live, observations, traces = _export(build, parse_io=parse_io)
    assert len(live) == len(QUESTIONS) and all(s.contexts for s in live)
    assert {o["type"] for o in observations} >= {"RETRIEVER", "GENERATION"}
    expected = [_view(s) for s in live]
    shapes = {"observations.jsonl": "".join(json.dumps(o) + "\n" for o in reversed(observations)),
              "page.json": json.dumps({"data": observations, "meta": {}}, indent=1),
              "traces.json": json.dumps(traces, indent=1),
              "traces.jsonl": "".join(json.dumps(t) + "\n" for t in traces)}
    for name, text in shapes.items():
        path = tmp_path / name
        path.write_text(text)
        assert export_format(path) == "langfuse", name
        read = _read(path)
        assert [_view(s) for s in read] == expected, name
        assert all(s.capture_note is None for s in read), name
        assert [s.metadata["trace_id"] for s in read] == sorted({o["traceId"] for o in observations},
                                                                key=[s.id for s in read].index)


def test_a_bad_record_and_a_cut_trace_are_one_line_each(tmp_path: Path) -> None:
    live, observations, traces = _export(lcel_chain, parse_io=False)
    root = next(o for o in observations if o["parentObservationId"] is None)
    lines = [json.dumps(o) for o in observations if o is not root]
    lines.insert(1, "{not json")
    path = tmp_path / "observations.jsonl"
    path.write_text("\n".join(lines) + "\n")
    problems: list = []
    read = list(read_langfuse_samples(path, problems=problems))
    assert [_view(s) for s in read] == [_view(live[1])]  # the observations come in time order: the first root is the first call's
    assert len(problems) == 2 and f"{path}:2:" in str(problems[0]) and "not its root observation" in str(problems[1])
    listed = tmp_path / "listed.json"  # the trace list gives observation ids only
    listed.write_text(json.dumps({"data": [{**traces[0], "observations": [o["id"] for o in traces[0]["observations"]]}],
                                  "meta": {"page": 1}}))
    problems = []
    assert list(read_langfuse_samples(listed, problems=problems)) == []
    assert len(problems) == 1 and "observations are ids" in str(problems[0]) and str(listed) in str(problems[0])


def test_thelma_reads_a_langfuse_export_by_its_format(tmp_path: Path) -> None:
    from test_trace_windows import thelma

    _live, _observations, traces = _export(lcel_chain, parse_io=False)
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    run = thelma(tmp_path, path)
    assert run.returncode == 0, run.stderr
    assert "judged 2" in run.stdout and " 2 traces (baseline)" in run.stdout, run.stdout
    forced = thelma(tmp_path, path, "--trace-format", "langsmith")
    assert forced.returncode != 0 and "not a LangSmith run" in forced.stderr + forced.stdout
