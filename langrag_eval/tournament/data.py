"""Tournament inputs: RAGElo's CSV layout and the answers JSONL our pipelines write.

RAGElo layout (a RAGElo user switches without converting):

- queries ``qid,query``
- documents ``qid,did,document``; optional ``agent`` (who retrieved it) and ``rank`` columns. Without
  ``agent``, a query's documents are one pool shared by every agent (no per-agent MRR then).
- answers ``qid,agent,answer``

Answers JSONL, one line per (query, agent)::

    {"qid": "q1", "query": "...", "agent": "rag-bm25", "answer": "...",
     "documents": [{"id": "d3", "text": "...", "score": 0.8}, ...]}

Bad rows never stop the load: each becomes a :class:`Problem` naming file, line and field, and the
tournament runs on what is valid. Only an unreadable file or a missing column raises ``DataError``.

>>> data = TournamentData.from_records([
...     {"qid": "q1", "query": "Who?", "agent": "a", "answer": "Ada.", "documents": [{"id": "d1", "text": "Ada did."}]},
...     {"qid": "q1", "query": "Who?", "agent": "b", "answer": ""}])
>>> data.agents, [p.kind for p in data.problems]
(['a'], ['empty_answer', 'single_agent'])
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import DataError
from ..files.tables import csv_cells_unbounded
from ..files.jsontext import finite_number
from ..files.reading import read_text
from ..types import AgentAnswer, Document

__all__ = ["AgentAnswer", "Problem", "TournamentData", "load_answers_jsonl", "load_ragelo_csv"]

ProblemKind = Literal["bad_row", "duplicate", "unknown_qid", "empty_answer", "conflict",
                      "missing_answer", "single_agent", "unscored", "app_error"]


class Problem(BaseModel):
    """Something left out of the tournament, and why."""

    model_config = ConfigDict(frozen=True)

    kind: ProblemKind
    message: str


class TournamentData(BaseModel):
    """Queries, answers and documents after validation, with what was left out."""

    queries: dict[str, str]
    answers: dict[str, dict[str, AgentAnswer]]          # qid -> agent -> answer
    pool: dict[str, dict[str, Document]] = Field(default_factory=dict)  # qid -> doc id -> document
    attributed: bool = True      # documents are known per agent (per-agent MRR is meaningful)
    problems: list[Problem] = Field(default_factory=list)

    @property
    def agents(self) -> list[str]:
        return sorted({a for per_query in self.answers.values() for a in per_query})

    def documents(self, qid: str, agent: str) -> list[Document]:
        """What ``agent`` retrieved for ``qid`` (the shared pool when documents are not attributed)."""
        if not self.attributed:
            return list(self.pool.get(qid, {}).values())
        found = self.answers.get(qid, {}).get(agent)
        return list(found.contexts) if found else []

    def pooled(self, qid: str, agents: Iterable[str]) -> list[Document]:
        """Documents retrieved by any of ``agents`` for ``qid``, each once, in first-seen order."""
        seen: dict[str, Document] = {}
        for agent in agents:
            for doc in self.documents(qid, agent):
                seen.setdefault(doc.id, doc)
        return list(seen.values())

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]], *, source: str = "<records>") -> TournamentData:
        """Build from answer records in the JSONL layout (used by the framework helpers too)."""
        builder = _Builder(source)
        for line, record in enumerate(records, start=1):
            builder.add_record(record, line)
        return builder.finish()

    def summary_of_problems(self, limit: int = 50) -> dict[str, Any]:
        return {"counts": dict(Counter(p.kind for p in self.problems)),
                "messages": [p.message for p in self.problems[:limit]],
                "truncated": max(0, len(self.problems) - limit)}


def _where(path: str, line: int | None, field: str | None, message: str) -> str:
    return str(DataError(message, path=path, line=line, field=field))


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.queries: dict[str, str] = {}
        self.answers: dict[str, dict[str, AgentAnswer]] = {}
        self.pool: dict[str, dict[str, Document]] = {}
        self.problems: list[Problem] = []
        self.attributed = True

    def problem(self, kind: ProblemKind, line: int | None, field: str | None, message: str,
                path: str | None = None) -> None:
        self.problems.append(Problem(kind=kind, message=_where(path or self.source, line, field, message)))

    def add_document(self, qid: str, doc: Document, line: int | None, path: str) -> Document:
        known = self.pool.setdefault(qid, {}).get(doc.id)
        if known is None:
            self.pool[qid][doc.id] = doc
            return doc
        if known.text != doc.text:
            self.problem("conflict", line, "text", f"document {doc.id!r} of query {qid!r} has a "
                         "different text than where it first appeared; the first text is used", path)
        return known

    def add_answer(self, qid: str, agent: str, answer: str, docs: list[Document], line: int | None,
                   path: str) -> None:
        if not answer.strip():
            self.problem("empty_answer", line, "answer", f"agent {agent!r} gave an empty answer to "
                         f"query {qid!r}; its games on this query are skipped", path)
            return
        if agent in self.answers.get(qid, {}):
            self.problem("duplicate", line, "agent", f"a second answer of agent {agent!r} to query "
                         f"{qid!r}; the first one is kept", path)
            return
        self.answers.setdefault(qid, {})[agent] = AgentAnswer(id=qid, question=self.queries.get(qid, ""),
                                                             agent=agent, answer=answer, contexts=docs)

    def add_record(self, record: Any, line: int | None, path: str | None = None) -> None:
        path = path or self.source
        if not isinstance(record, dict):
            self.problem("bad_row", line, None, "expected a JSON object", path)
            return
        for name in ("qid", "query", "agent", "answer"):
            value = record.get(name)
            if not isinstance(value, (str, int)) or (name != "answer" and not str(value).strip()):
                self.problem("bad_row", line, name, "missing or not a string; line skipped", path)
                return
        qid, query, agent = str(record["qid"]).strip(), str(record["query"]), str(record["agent"]).strip()
        if qid in self.queries and self.queries[qid] != query:
            self.problem("conflict", line, "query", f"query {qid!r} has a different text than where "
                         "it first appeared; the first text is used", path)
        self.queries.setdefault(qid, query)
        docs: list[Document] = []
        raw_docs = record.get("documents") or []
        if not isinstance(raw_docs, list):
            self.problem("bad_row", line, "documents", "must be a list; documents ignored", path)
            raw_docs = []
        seen: set[str] = set()
        for i, d in enumerate(raw_docs):
            where = f"documents[{i}]"
            if not isinstance(d, dict) or not str(d.get("id", "")).strip() or not isinstance(d.get("text"), str):
                self.problem("bad_row", line, where, "a document needs an id and a text; skipped", path)
                continue
            did = str(d["id"]).strip()
            if did in seen:
                self.problem("duplicate", line, where, f"document {did!r} listed twice; the first "
                             "position is kept", path)
                continue
            seen.add(did)
            score = d.get("score")
            doc = Document(id=did, text=d["text"], score=score if isinstance(score, (int, float)) else None)
            docs.append(self.add_document(qid, doc, line, path))
        self.add_answer(qid, agent, str(record["answer"]), docs, line, path)

    def finish(self) -> TournamentData:
        data = TournamentData(queries=self.queries, answers=self.answers, pool=self.pool,
                              attributed=self.attributed, problems=self.problems)
        agents = data.agents
        if len(agents) == 1:  # none at all: the caller says there is nothing to rank
            data.problems.append(Problem(kind="single_agent", message=(
                f"{self.source}: only one agent with valid answers ({agents[0]}); no games can be played, "
                "its documents and "
                "pointwise scores are still judged")))
        return data


def _read_csv(path: Path, required: tuple[str, ...]) -> Iterable[tuple[int, dict[str, str]]]:
    text = read_text(path, what="CSV file")
    csv_cells_unbounded(len(text))
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in required if c not in header]
        if missing:
            raise DataError(f"missing column(s) {', '.join(missing)}; found {', '.join(header) or 'none'}",
                            path=str(path), line=1)
        reader.fieldnames = header
        try:
            for row in reader:
                yield reader.line_num, {k: (v or "") for k, v in row.items() if k is not None}
        except csv.Error as exc:
            raise DataError(f"unreadable CSV ({exc})", path=str(path), line=reader.line_num) from None


def load_ragelo_csv(queries: str | Path, documents: str | Path | None, answers: str | Path) -> TournamentData:
    """Read RAGElo's three CSV files. ``documents`` may be None (answers judged without documents)."""
    qpath, apath = Path(queries), Path(answers)
    b = _Builder(str(apath))
    for line, row in _read_csv(qpath, ("qid", "query")):
        qid = row["qid"].strip()
        if not qid or not row["query"].strip():
            b.problem("bad_row", line, "qid" if not qid else "query", "empty; row skipped", str(qpath))
        elif qid in b.queries:
            b.problem("duplicate", line, "qid", f"query {qid!r} appears again; the first row is kept",
                      str(qpath))
        else:
            b.queries[qid] = row["query"]
    ranked: dict[tuple[str, str], list[tuple[float, int, Document]]] = {}
    if documents is not None:
        dpath = Path(documents)
        rows = list(_read_csv(dpath, ("qid", "did", "document")))
        b.attributed = bool(rows) and "agent" in rows[0][1]
        seen: set[tuple[str, str, str]] = set()
        for line, row in rows:
            qid, did = row["qid"].strip(), row["did"].strip()
            agent = row.get("agent", "").strip()
            if qid not in b.queries:
                b.problem("unknown_qid", line, "qid", f"query {qid!r} is not in {qpath}; row skipped",
                          str(dpath))
                continue
            if not did or not row["document"].strip():
                b.problem("bad_row", line, "did" if not did else "document", "empty; row skipped", str(dpath))
                continue
            if b.attributed and not agent:
                b.problem("bad_row", line, "agent", "empty; row skipped", str(dpath))
                continue
            if (qid, did, agent) in seen:
                b.problem("duplicate", line, "did", f"document {did!r} of query {qid!r} appears again"
                          + (f" for agent {agent!r}" if agent else "") + "; the first row is kept", str(dpath))
                continue
            seen.add((qid, did, agent))
            doc = b.add_document(qid, Document(id=did, text=row["document"]), line, str(dpath))
            try:
                rank = (finite_number(row["rank"].strip(), path=str(dpath), line=line, field="rank")
                        if row.get("rank", "").strip() else float(line))
            except DataError as exc:  # not a number, or NaN / infinity, which would rank first or last
                b.problem("bad_row", line, "rank", f"{exc.message}; file order used", str(dpath))
                rank = float(line)
            if b.attributed:
                ranked.setdefault((qid, agent), []).append((rank, line, doc))
    for line, row in _read_csv(apath, ("qid", "agent", "answer")):
        qid, agent = row["qid"].strip(), row["agent"].strip()
        if qid not in b.queries:
            b.problem("unknown_qid", line, "qid", f"query {qid!r} is not in {qpath}; row skipped")
            continue
        if not agent:
            b.problem("bad_row", line, "agent", "empty; row skipped")
            continue
        docs = [d for _, _, d in sorted(ranked.get((qid, agent), []), key=lambda t: (t[0], t[1]))]
        b.add_answer(qid, agent, row["answer"], docs, line, str(apath))
    return b.finish()


def _kind(error: DataError) -> ProblemKind:
    if error.field == "answer":
        return "empty_answer"
    return "duplicate" if "twice" in error.message else "bad_row"


def load_answers_jsonl(path: str | Path) -> TournamentData:
    """Read answers JSONL with the pipelines' reader; its bad lines become problems, not errors."""
    from ..pipelines.io import read_answers

    errors: list[DataError] = []
    answers = read_answers(path, errors=errors)
    b = _Builder(str(path))
    b.problems.extend(Problem(kind=_kind(e), message=str(e)) for e in errors)
    for a in answers:
        b.add_record({"qid": a.id, "query": a.question, "agent": a.agent, "answer": a.answer,
                      "documents": [d.model_dump() for d in a.contexts]}, None)
    return b.finish()
