"""Files the pipelines read and write: queries in, answers with their passages out.

**Answers JSONL** (what ``langrag-eval agents`` writes and the tournament reads), one object a line::

    {"qid": "q1", "query": "What is the IP rating of the IM72D128?", "agent": "fusion-bm25",
     "answer": "It is rated IP57 ...",
     "documents": [{"id": "guide.md#12", "text": "...", "score": 0.0328}, ...],
     "variations": ["IM72D128 ingress protection", ...]}

``qid``, ``query``, ``agent`` and ``answer`` are non-empty strings; ``documents`` lists the passages
the answer was generated from, best first, each with a string ``id``, a string ``text`` and a numeric
or null ``score`` (the retriever's score for RAG agents, the fused RRF score for Fusion agents).
``variations`` (optional, Fusion agents only) lists the generated rewrites, the original excluded.
Each ``(qid, agent)`` pair appears once. Other keys are ignored by the reader.

**Queries**: JSONL objects with ``qid`` (or ``id``) and ``query`` (or ``question``), or a plain
text file with one query per line whose ids are ``q<line number>``.

>>> import tempfile, os
>>> from langrag_eval.types import Document
>>> path = os.path.join(tempfile.mkdtemp(), "answers.jsonl")
>>> a = AgentAnswer(id="q1", question="Q?", agent="rag-bm25", answer="A.",
...                 contexts=[Document(id="d1", text="T", score=1.5)])
>>> write_answers(path, [a])
1
>>> read_answers(path) == [a]
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import DataError
from ..files.writing import atomic_write
from ..files.tables import jsonl_objects
from ..files.jsontext import lines_of
from ..files.reading import read_text
from ..types import Document, text_id
from .agents import AgentAnswer

__all__ = ["Query", "read_queries", "write_answers", "read_answers", "answer_record"]


class Query(BaseModel):
    """One query to run the agents on; ``qid`` is unique within a batch."""

    model_config = ConfigDict(frozen=True)

    qid: str
    query: str


def _strict(obj: dict[str, Any] | DataError) -> dict[str, Any]:
    if isinstance(obj, DataError):
        raise obj
    return obj


def _text(obj: dict[str, Any], names: tuple[str, ...], path: str, number: int) -> str:
    for name in names:
        if name in obj:
            value = obj[name]
            if not isinstance(value, str) or not value.strip():
                raise DataError(f"must be a non-empty string, got {value!r}", path=path, line=number,
                                field=name)
            return value
    raise DataError("is missing" if len(names) == 1 else f"is missing (also accepted: {', '.join(names[1:])})",
                    path=path, line=number, field=names[0])


def _query(obj: dict[str, Any], p: str, number: int) -> Query:
    qid = obj.get("qid", obj.get("id"))
    if isinstance(qid, (int, float)) and not isinstance(qid, bool):
        qid = str(qid)
    if "qid" not in obj and "id" not in obj:
        raise DataError("is missing (also accepted: id)", path=p, line=number, field="qid")
    if not isinstance(qid, str) or not qid.strip():
        raise DataError(f"must be a non-empty string, got {qid!r}", path=p, line=number,
                        field="qid" if "qid" in obj else "id")
    return Query(qid=qid, query=_text(obj, ("query", "question"), p, number))


def read_queries(path: str | Path) -> list[Query]:
    """Queries from a JSONL file (``.jsonl``/``.json``) or a text file with one query per line.

    Raises :class:`DataError` naming file, line and field; a repeated ``qid`` is an error.
    """
    p, text = str(path), read_text(path)
    queries: list[Query] = []
    first_line: dict[str, int] = {}
    if Path(p).suffix.lower() in (".jsonl", ".json", ".ndjson"):
        rows = ((number, _query(_strict(obj), p, number)) for number, obj in jsonl_objects(p, text))
    else:
        rows = ((number, Query(qid=f"q{number}", query=line.strip()))
                for number, line in enumerate(lines_of(text), start=1) if line.strip())
    for number, query in rows:
        if query.qid in first_line:
            raise DataError(f"qid {query.qid!r} repeats line {first_line[query.qid]}", path=p,
                            line=number, field="qid")
        first_line[query.qid] = number
        queries.append(query)
    if not queries:
        raise DataError("no queries in the file", path=p)
    return queries


def answer_record(answer: AgentAnswer) -> dict[str, Any]:
    """One answer as the JSON object of the answers layout."""
    record: dict[str, Any] = {
        "qid": answer.id, "query": answer.question, "agent": answer.agent, "answer": answer.answer,
        "documents": [{"id": d.id, "text": d.text, "score": d.score} for d in answer.contexts]}
    if answer.variations:
        record["variations"] = list(answer.variations)
    return record


def write_answers(path: str | Path, answers: Iterable[AgentAnswer]) -> int:
    """Write answers in the answers JSONL layout (replacing the file); returns how many."""
    count = 0
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(target) as out:
        for answer in answers:
            if not answer.id:
                raise DataError(f"answer of agent {answer.agent!r} to {answer.question!r} has no qid",
                                path=str(path), field="qid")
            out.write(json.dumps(answer_record(answer), ensure_ascii=False) + "\n")
            count += 1
    return count


_SAMPLE_NAMES = {"qid": ("id",), "query": ("question",)}


def _document(raw: Any, path: str, number: int, index: int) -> Document:
    where = f"documents[{index}]"
    if isinstance(raw, str):  # a plain text, as THELMA and Sample take it: its id a digest of the text
        return Document(id=text_id(raw), text=raw)
    if not isinstance(raw, dict):
        raise DataError(f"expected an object, got {type(raw).__name__}", path=path, line=number, field=where)
    for name in ("id", "text"):
        if not isinstance(raw.get(name), str) or (name == "id" and not raw[name]):
            raise DataError(f"must be a {'non-empty ' if name == 'id' else ''}string, got {raw.get(name)!r}",
                            path=path, line=number, field=f"{where}.{name}")
    score = raw.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                              or not math.isfinite(score)):
        raise DataError(f"must be a finite number or null, got {score!r}", path=path, line=number,
                        field=f"{where}.score")
    return Document(id=raw["id"], text=raw["text"], score=score)


def _record(obj: dict[str, Any], path: str, number: int) -> AgentAnswer:
    # The layout's names, or the Sample's (id, question, contexts) that every other file takes.
    fields = {name: _text(obj, (name, *_SAMPLE_NAMES.get(name, ())), path, number)
              for name in ("qid", "query", "agent", "answer")}
    key = next((k for k in ("documents", "contexts", "sources") if k in obj), "documents")
    documents = obj.get(key)
    if isinstance(documents, str):  # one passage given alone, as Sample takes it
        documents = [documents]
    if not isinstance(documents, list):
        raise DataError(f"must be a list of passages, got {documents!r}" if key in obj else
                        "is missing (also accepted: contexts)", path=path, line=number, field=key)
    variations = obj.get("variations", [])
    if not isinstance(variations, list) or not all(isinstance(v, str) for v in variations):
        raise DataError(f"must be a list of strings, got {variations!r}", path=path, line=number,
                        field="variations")
    return AgentAnswer(id=fields["qid"], question=fields["query"], agent=fields["agent"],
                       answer=fields["answer"], contexts=[_document(d, path, number, i) for i, d in enumerate(documents)],
                       variations=variations)


def read_answers(path: str | Path, *, errors: list[DataError] | None = None) -> list[AgentAnswer]:
    """Read an answers JSONL file.

    A bad line raises :class:`DataError` (file, line, field). Pass a list as ``errors`` to collect
    the bad lines there instead and read every good one.
    """
    p = str(path)
    answers: list[AgentAnswer] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, obj in jsonl_objects(p, read_text(path)):
        try:
            answer = _record(_strict(obj), p, number)
            key = (answer.id or "", answer.agent)
            if key in first_line:
                raise DataError(f"agent {answer.agent!r} answers qid {answer.id!r} twice "
                                f"(first on line {first_line[key]})", path=p, line=number, field="qid")
            first_line[key] = number
            answers.append(answer)
        except DataError as exc:
            if errors is None:
                raise
            errors.append(exc)
    return answers
