"""The answers JSONL layout and the queries file: round trips and errors that name file, line, field."""

from __future__ import annotations

import json

import pytest

from langrag_eval.errors import DataError
from langrag_eval.pipelines import AgentAnswer, Query, read_answers, read_queries, write_answers
from langrag_eval.types import Document


def answer(qid="q1", agent="fusion-bm25", **kw) -> AgentAnswer:
    return AgentAnswer(id=qid, question="Is the mic waterproof?", agent=agent, answer="Yes, IP57.",
                       contexts=[Document(id="mic-ip", text="IP57 \u00e9t\u00e9", score=0.0328),
                                  Document(id="mic-snr", text="72 dB", score=None)], **kw)


def record(**overrides) -> dict:
    base = {"qid": "q1", "query": "Q?", "agent": "rag-bm25", "answer": "A.",
            "documents": [{"id": "d1", "text": "T", "score": 1.5}]}
    base.update(overrides)
    return base


def write_lines(path, *objects) -> None:
    path.write_text("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objects) + "\n",
                    encoding="utf-8")


def test_round_trip_keeps_order_scores_and_variations(tmp_path):
    path = tmp_path / "out" / "answers.jsonl"
    answers = [answer(variations=["IP rating mic", "waterproof microphone"]), answer(agent="rag-bm25")]
    assert write_answers(path, answers) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert list(first) == ["qid", "query", "agent", "answer", "documents", "variations"]
    assert first["documents"][0] == {"id": "mic-ip", "text": "IP57 \u00e9t\u00e9", "score": 0.0328}
    assert "variations" not in json.loads(lines[1])  # RAG agents write no variations
    assert "\u00e9t\u00e9" in lines[0]  # UTF-8, not escaped
    assert read_answers(path) == answers


def test_writer_refuses_an_answer_without_qid(tmp_path):
    with pytest.raises(DataError, match="no qid"):
        write_answers(tmp_path / "a.jsonl", [answer(qid=None)])


@pytest.mark.parametrize("bad, field, message", [
    ("{not json", None, "not valid JSON"),
    ("[1, 2]", None, "expected a JSON object"),
    (record(qid=None), "qid", "non-empty string"),
    ({k: v for k, v in record().items() if k != "answer"}, "answer", "is missing"),
    (record(agent=""), "agent", "non-empty string"),
    (record(documents=3), "documents", "list of passages"),
    (record(documents=[{"id": "d1", "text": "T"}, {"id": 7, "text": "U"}]), "documents[1].id", "string"),
    (record(documents=[{"id": "d1"}]), "documents[0].text", "string"),
    (record(documents=[{"id": "d1", "text": "T", "score": "high"}]), "documents[0].score", "finite number"),
    (record(documents=[{"id": "d1", "text": "T", "score": True}]), "documents[0].score", "finite number"),
    (record(variations="one"), "variations", "list of strings"),
])
def test_reader_errors_name_file_line_and_field(tmp_path, bad, field, message):
    path = tmp_path / "answers.jsonl"
    write_lines(path, record(qid="q0"), bad)
    with pytest.raises(DataError, match=message) as caught:
        read_answers(path)
    assert caught.value.path == str(path) and caught.value.line == 2 and caught.value.field == field
    assert str(caught.value).startswith(f"{path}:2: ")


def test_a_repeated_qid_and_agent_pair_is_an_error(tmp_path):
    path = tmp_path / "answers.jsonl"
    write_lines(path, record(), record(agent="rag-knn"), "", record())
    with pytest.raises(DataError, match="twice \\(first on line 1\\)") as caught:
        read_answers(path)
    assert caught.value.line == 4


def test_reader_can_collect_bad_lines_and_keep_the_good_ones(tmp_path):
    path = tmp_path / "answers.jsonl"
    write_lines(path, record(qid="q1"), "{oops", record(qid="q2", answer=""), record(qid="q3"))
    errors: list[DataError] = []
    good = read_answers(path, errors=errors)
    assert [a.id for a in good] == ["q1", "q3"]
    assert [(e.line, e.field) for e in errors] == [(2, None), (3, "answer")]


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_answers(tmp_path / "nope.jsonl")


def test_queries_from_jsonl_with_aliases_and_from_text(tmp_path):
    jsonl = tmp_path / "q.jsonl"
    write_lines(jsonl, {"qid": "a", "query": "first?"}, "", {"id": 7, "question": "second?"})
    assert read_queries(jsonl) == [Query(qid="a", query="first?"), Query(qid="7", query="second?")]

    text = tmp_path / "q.txt"
    text.write_text("first?\n\n  second?  \n", encoding="utf-8")
    assert read_queries(text) == [Query(qid="q1", query="first?"), Query(qid="q3", query="second?")]


@pytest.mark.parametrize("lines, line, field, message", [
    ([{"qid": "a", "query": "x"}, {"qid": "a", "query": "y"}], 2, "qid", "repeats line 1"),
    ([{"query": "x"}], 1, "qid", "is missing"),
    ([{"qid": "a"}], 1, "query", "is missing"),
    ([{"qid": "a", "query": "  "}], 1, "query", "non-empty string"),
    ([{"qid": "", "query": "x"}], 1, "qid", "non-empty string"),
])
def test_query_file_errors(tmp_path, lines, line, field, message):
    path = tmp_path / "q.jsonl"
    write_lines(path, *lines)
    with pytest.raises(DataError, match=message) as caught:
        read_queries(path)
    assert (caught.value.line, caught.value.field) == (line, field)


def test_an_empty_query_file_is_an_error(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="no queries"):
        read_queries(path)
