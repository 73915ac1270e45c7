"""Reading OTLP/JSON exports exactly: every problem is one line naming the file and the line (and the
field), what can be read around it still is, nothing is dropped without a word, and memory stays
bounded by the traces still open, not by the size of the export."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.errors import DataError
from langrag_eval.traces import read_traces, sample_of_trace

TRACE = "0af7651916cd43dd8448eb211c80319c"


def span(trace: str, span_id: str, parent: str | None, name: str, kind: str, start: int, **attrs: str) -> dict:
    attributes = [{"key": "openinference.span.kind", "value": {"stringValue": kind}}]
    attributes += [{"key": k.replace("__", "."), "value": {"stringValue": v}} for k, v in attrs.items()]
    out = {"traceId": trace, "spanId": span_id, "name": name, "startTimeUnixNano": str(start),
           "endTimeUnixNano": str(start + 1000), "attributes": attributes}
    if parent:
        out["parentSpanId"] = parent
    return out


def request(*spans: dict) -> str:
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]})


def rag_trace(trace: str, question: str, doc: str, answer: str, start: int = 1_700_000_000_000_000_000) -> list[dict]:
    root = "a" * 15 + "1"
    return [span(trace, "b" * 15 + "1", root, "retrieve", "RETRIEVER", start + 1,
                 retrieval__documents__0__document__id="d1", retrieval__documents__0__document__content=doc),
            span(trace, "c" * 15 + "1", root, "llm", "LLM", start + 2,
                 llm__input_messages__0__message__role="user",
                 llm__input_messages__0__message__content=f"Context: {doc}\nQuestion: {question}",
                 llm__output_messages__0__message__content=answer),
            span(trace, root, None, "chain", "CHAIN", start, input__value=question, output__value=answer)]


def read(path: Path) -> tuple[list, list[DataError]]:
    problems: list[DataError] = []
    return [sample_of_trace(t) for t in read_traces(path, problems=problems)], problems


def test_a_bad_line_is_named_and_the_lines_after_it_are_read(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    other = "1" * 32
    p.write_text(request(*rag_trace(TRACE, "Q1?", "Doc one.", "A1.")) + "\n{not json\n"
                 + request(*rag_trace(other, "Q2?", "Doc two.", "A2.")) + "\n", encoding="utf-8")
    samples, problems = read(p)
    assert [s.question for s in samples] == ["Q1?", "Q2?"]
    assert [str(e).split(": ")[0] for e in problems] == [f"{p}:2"]
    assert "not valid JSON" in str(problems[0])


@pytest.mark.parametrize("bad, field", [("xyz", "traceId"), ("0af7651916cd43dd", "traceId")])
def test_an_id_that_is_not_an_id_names_its_field(tmp_path: Path, bad: str, field: str) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text(request(span(bad, "a" * 16, None, "chain", "CHAIN", 1, input__value="q")) + "\n")
    samples, problems = read(p)
    assert samples == [] and len(problems) == 1
    assert str(problems[0]).startswith(f'{p}:1: field "{field}": ')


def test_a_trace_whose_root_never_came_is_reported_not_dropped(tmp_path: Path) -> None:
    p = tmp_path / "cut.jsonl"
    p.write_text(request(*rag_trace(TRACE, "Q?", "Doc.", "A.")[:2]) + "\n")
    samples, problems = read(p)
    assert samples == []
    assert len(problems) == 1 and f"trace {TRACE}: 2 span(s) but no root span" in str(problems[0])


def test_a_whole_file_request_over_many_lines_is_read(tmp_path: Path) -> None:
    p = tmp_path / "pretty.json"
    p.write_text(json.dumps(json.loads(request(*rag_trace(TRACE, "Q?", "Doc.", "A."))), indent=2))
    samples, problems = read(p)
    assert problems == [] and [(s.question, s.answer, [d.id for d in s.contexts]) for s in samples] == \
        [("Q?", "A.", ["d1"])]


def test_not_an_export_and_an_empty_folder_are_one_line_each(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"spans": []}')
    assert [str(e) for e in read(p)[1]] == [f"{p}:1: not an OTLP trace export (no resourceSpans)"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no .json or .jsonl trace export in this folder"):
        read(tmp_path / "empty")


def test_a_document_the_answering_prompt_did_not_hold_is_not_a_context(tmp_path: Path) -> None:
    spans = rag_trace(TRACE, "Q?", "Doc one.", "A.")
    spans[0]["attributes"] += [{"key": "retrieval.documents.1.document.id", "value": {"stringValue": "d2"}},
                               {"key": "retrieval.documents.1.document.content",
                                "value": {"stringValue": "Never shown."}}]
    p = tmp_path / "x.jsonl"
    p.write_text(request(*spans) + "\n")
    assert [d.id for d in read(p)[0][0].contexts] == ["d1"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1,
                                  max_size=40).filter(str.strip),
                          st.integers(0, 10**6)), min_size=1, max_size=6, unique_by=lambda x: x[0]))
def test_generated_traces_read_back_as_written(tmp_path_factory, rows) -> None:
    p = tmp_path_factory.mktemp("gen") / "x.jsonl"
    lines = [request(*rag_trace(f"{i + 1:032x}", f"Q {text}?", f"Doc {text}.", f"A {text}.", start=10**18 + t))
             for i, (text, t) in enumerate(rows)]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    samples, problems = read(p)
    assert problems == []
    assert [(s.question, s.answer, [d.text for d in s.contexts]) for s in samples] == \
        [(f"Q {t}?", f"A {t}.", [f"Doc {t}."]) for t, _ in rows]


MEMORY = r"""
import json, sys, tracemalloc
sys.path.insert(0, sys.argv[1])
from test_otlp_reader import rag_trace, request
from langrag_eval.traces import read_traces
n, path = int(sys.argv[2]), sys.argv[3]
with open(path, "w") as fh:
    for i in range(n):
        fh.write(request(*rag_trace(f"{i + 1:032x}", f"Question {i}?", f"Document {i} " * 20, f"Answer {i}.")) + "\n")
tracemalloc.start()
count = sum(1 for _ in read_traces(path, problems=[]))
print(count, tracemalloc.get_traced_memory()[1])
"""


def test_memory_is_bounded_by_open_traces_not_by_the_export(tmp_path: Path) -> None:
    peaks = {}
    for n in (500, 5000):
        out = subprocess.run([sys.executable, "-c", MEMORY, str(Path(__file__).parent), str(n), str(tmp_path / f"{n}.jsonl")],
                             capture_output=True, text=True, check=True).stdout.split()
        assert int(out[0]) == n
        peaks[n] = int(out[1])
    assert peaks[5000] < 2 * peaks[500] + 200_000, peaks  # ten times the traces, about the same peak
