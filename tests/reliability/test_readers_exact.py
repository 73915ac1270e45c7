"""Every reader reads exactly what the file says, or refuses in one line: never a phantom row, a
dropped line, one of two values picked silently, a NaN taken for a number, a traceback or a hang.

Every reader of a user's file x {a cell over the csv module's limit, Unicode line separators inside
strings, a repeated key, NaN and Infinity, a named pipe, a folder, a symbolic link loop}. Each call
runs under an alarm: a reader that waits on a pipe fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.audit import read_labelled_file
from langrag_eval.errors import LangragError
from langrag_eval.grading import Columns, read_grading_file
from langrag_eval.grading.io import read_examples, read_scores
from langrag_eval.grammar import read_dataset
from langrag_eval.grammar.io import read_verdicts
from langrag_eval.files.tables import read_table
from langrag_eval.files.jsontext import lines_of
from langrag_eval.pipelines import read_queries
from langrag_eval.pipelines.io import read_answers
from langrag_eval.prompting.templates import load_prompt
from langrag_eval.runtime import PriceTable
from langrag_eval.runtime.identity import file_digest
from langrag_eval.synth import load_corpus
from langrag_eval.testing.scripted import resolve
from langrag_eval.thelma.io import read_samples
from langrag_eval.tournament import load_answers_jsonl, load_ragelo_csv

SEPARATORS = "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e"


@contextlib.contextmanager
def deadline(seconds: int = 10) -> Iterator[None]:
    def fail(*_: Any) -> None:
        raise TimeoutError(f"the reader did not return within {seconds} s")
    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# Every reader of a file the user gives, by the name its tests use.
READERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "table csv": (".csv", lambda p: read_table(p)),
    "table jsonl": (".jsonl", lambda p: read_table(p)),
    "grading file": (".csv", lambda p: read_grading_file(p)),
    "scores": (".csv", lambda p: read_scores(p)),
    "examples": (".jsonl", read_examples),
    "labelled file": (".csv", lambda p: read_labelled_file(p, human_col="score")),
    "thelma samples": (".jsonl", lambda p: read_samples(p)),
    "grammar dataset": (".jsonl", read_dataset),
    "grammar verdicts": (".jsonl", read_verdicts),
    "queries": (".jsonl", read_queries),
    "answers": (".jsonl", read_answers),
    "tournament answers": (".jsonl", load_answers_jsonl),
    "tournament csv": (".csv", lambda p: load_ragelo_csv(p, None, p)),
    "synth corpus": (".jsonl", load_corpus),
    "price table": (".json", PriceTable.read),
    "scripted judge": (".json", lambda p: resolve(str(p))),
    "prompt file": (".txt", load_prompt),
    "file digest": (".txt", file_digest),
}


def _refused_in_one_line(reader: Callable[[Path], Any], path: Path) -> str:
    with deadline(), pytest.raises(LangragError) as info:
        reader(path)
    message = str(info.value)
    assert "\n" not in message and message, message
    return message


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_named_pipe_is_refused_at_once(tmp_path: Path, name: str) -> None:
    suffix, reader = READERS[name]
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    assert "pipe" in _refused_in_one_line(reader, fifo)


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_folder_is_refused(tmp_path: Path, name: str) -> None:
    suffix, reader = READERS[name]
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    message = _refused_in_one_line(reader, folder)
    assert "director" in message or "folder" in message


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_symbolic_link_loop_is_refused(tmp_path: Path, name: str) -> None:
    suffix, reader = READERS[name]
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    a.symlink_to(b)
    b.symlink_to(a)
    assert "loop" in _refused_in_one_line(reader, a)


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_device_is_refused(name: str) -> None:
    _, reader = READERS[name]
    assert "device" in _refused_in_one_line(reader, Path("/dev/zero"))


# ---- content: what the file says, exactly --------------------------------------------------------

def test_a_csv_cell_over_the_csv_modules_limit_is_one_cell(tmp_path: Path) -> None:
    long = 'x' * 300_000 + '\n"q98",\nend"'  # newlines and quotes inside the quoted cell
    path = tmp_path / "qa.csv"
    path.write_text('id,question,answer,label\nq1,Who?,"' + long.replace('"', '""') + '",Ada\nq2,When?,1843,1843\n',
                    encoding="utf-8")
    data = read_grading_file(path, Columns())
    assert [s.id for s in data.samples] == ["q1", "q2"] and not data.issues
    assert data.samples[0].answer == long


def test_a_tournament_csv_cell_over_the_limit_is_one_cell(tmp_path: Path) -> None:
    q, a = tmp_path / "q.csv", tmp_path / "a.csv"
    q.write_text("qid,query\nq1,Who?\n", encoding="utf-8")
    answer = "y" * 200_000
    a.write_text(f"qid,agent,answer\nq1,one,{answer}\nq1,two,short\n", encoding="utf-8")
    data = load_ragelo_csv(q, None, a)
    assert sorted(data.agents) == ["one", "two"] and not [p for p in data.problems if p.kind == "bad_row"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from(SEPARATORS),
                              min_size=1, max_size=30), min_size=2, max_size=6))
def test_jsonl_strings_with_unicode_line_separators_are_data(tmp_path_factory, texts: list[str]) -> None:
    path = tmp_path_factory.mktemp("sep") / "answers.jsonl"
    rows = [{"qid": f"q{i}", "query": "Who?" + t, "agent": f"agent-{j}", "answer": "A" + t,
             "documents": [{"id": "d", "text": t}]} for i, t in enumerate(texts) for j in range(2)]
    # as json.dumps(ensure_ascii=False) writes them, the way the agents command does
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    answers = read_answers(path)
    assert [(a.id, a.agent, a.answer) for a in answers] == [(r["qid"], r["agent"], r["answer"]) for r in rows]
    data = load_answers_jsonl(path)
    assert sorted(data.agents) == ["agent-0", "agent-1"]  # the tournament reads the agents' file back
    table = read_table(path)
    assert [r.line for r in table.rows] == list(range(1, len(rows) + 1)) and not table.issues


@given(st.text(alphabet=st.sampled_from("ab\n\r" + SEPARATORS), max_size=40))
def test_lines_split_at_line_feeds_only(text: str) -> None:
    lines = lines_of(text)
    assert "\n".join(lines) == text.replace("\r\n", "\n").removesuffix("\n") or text.endswith("\r")
    assert all("\n" not in line for line in lines)


REPEATED = {
    "table jsonl": '{"id": "1", "text": "a", "text": "b"}\n',
    "thelma samples": '{"query": "q", "sources": [], "response": "r", "response": "planted"}\n',
    "grammar verdicts": '{"qid": "1", "evaluator": "e", "verdict": true, "verdict": false}\n',
    "queries": '{"qid": "q1", "query": "a", "query": "b"}\n',
    "answers": '{"qid": "q1", "query": "q", "agent": "a", "answer": "x", "answer": "y", "documents": []}\n',
    "synth corpus": '{"id": "d", "text": "one", "text": "two"}\n',
    "price table": '{"m": [1, 2], "m": [3, 4]}',
    "scripted judge": '{"": "a", "": "b"}',
    "examples": '{"question": "q", "label": "l", "answer": "a", "score": 5, "score": 1, "reason": "r"}\n',
    "grammar dataset": '{"id": "x", "id": "y"}\n',
}


@pytest.mark.parametrize("name", sorted(REPEATED))
def test_a_repeated_key_is_never_read_as_one_of_its_values(tmp_path: Path, name: str) -> None:
    suffix, reader = READERS[name]
    path = tmp_path / f"f{suffix}"
    path.write_text(REPEATED[name], encoding="utf-8")
    with deadline():
        try:
            result = reader(path)
        except LangragError as exc:
            assert "appears twice" in str(exc) and "\n" not in str(exc)
            return
    # a forgiving reader reports the line and reads nothing from it
    issues = result.issues if hasattr(result, "issues") else result[-1] if isinstance(result, tuple) else []
    assert any("appears twice" in str(i) and ":1:" in str(i) for i in issues), result


NON_FINITE = {
    "table jsonl": ['{"id": "1", "score": NaN}\n', '{"id": "1", "score": Infinity}\n', '{"id": "1", "score": 1e999}\n'],
    "price table": ['{"m": [NaN, 1]}', '{"m": [1, Infinity]}', '{"m": [1e400, 1]}'],
    "answers": ['{"qid": "q1", "query": "q", "agent": "a", "answer": "x", "documents": [{"id": "d", "text": "t", '
                '"score": NaN}]}\n'],
    "grammar verdicts": ['{"qid": "1", "evaluator": "e", "verdict": NaN}\n', '{"qid": "1", "evaluator": "e", '
                         '"verdict": -Infinity}\n'],
}


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, ts in NON_FINITE.items() for t in ts])
def test_a_non_finite_number_is_refused_with_its_line(tmp_path: Path, name: str, text: str) -> None:
    suffix, reader = READERS[name]
    path = tmp_path / f"f{suffix}"
    path.write_text(text, encoding="utf-8")
    with deadline():
        try:
            result = reader(path)
        except LangragError as exc:
            assert "\n" not in str(exc)
            return
    issues = result.issues if hasattr(result, "issues") else []
    assert issues and ":1:" in str(issues[0]), result


@pytest.mark.parametrize("rank", ["NaN", "nan", "inf", "-Infinity"])
def test_a_tournament_rank_that_is_not_finite_is_a_problem_not_a_rank(tmp_path: Path, rank: str) -> None:
    q, d, a = tmp_path / "q.csv", tmp_path / "d.csv", tmp_path / "a.csv"
    q.write_text("qid,query\nq1,Who?\n", encoding="utf-8")
    d.write_text(f"qid,did,document,agent,rank\nq1,d1,one,x,{rank}\nq1,d2,two,x,1\n", encoding="utf-8")
    a.write_text("qid,agent,answer\nq1,x,Ada\nq1,y,Bob\n", encoding="utf-8")
    data = load_ragelo_csv(q, d, a)
    assert any(p.kind == "bad_row" and "rank" in p.message and "finite" in p.message for p in data.problems)


def test_an_input_is_read_once_and_hashed_from_the_bytes_read(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"qid": "q1", "query": "q", "agent": "a", "answer": "x", "documents": []}) + "\n",
                    encoding="utf-8")
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: (opened.append(str(p)), real_open(p, *a, **k))[1])
    read_answers(path)
    digest = file_digest(path)
    assert opened.count(str(path)) == 1
    import hashlib
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
