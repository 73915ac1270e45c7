"""Bad input across every CLI command: malformed files and arguments for grade, agreement, thelma,
tournament, agents, index, search, synth, grammar, report and quickstart.

A user error ends the command with status 2 and ONE error line on stderr that names the file (and
line and field when it is about a file's content) or the option at fault; never a traceback. A
problem confined to one row is reported with file, line and field while the other rows are still
processed and the command succeeds. Judges are scripted (``--judge scripted:FILE``), stores live in
``tmp_path``, and the only network address used is a closed loopback port.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.runtime import open_store

Capture = pytest.CaptureFixture[str]
REPLY = "Score: [[4]], Reason: [[fine]]"
UNREACHABLE = "http://127.0.0.1:9"  # loopback, nothing listening: refused at once


@dataclass
class Work:
    """Files for one test, written on demand in ``tmp_path``."""

    root: Path

    def file(self, name: str, content: str | bytes) -> str:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return str(path)

    @property
    def folder(self) -> str:
        path = self.root / "a_folder"
        path.mkdir(exist_ok=True)
        return str(path)

    @property
    def missing(self) -> str:
        return str(self.root / "no_such_file.csv")

    @property
    def store(self) -> list[str]:
        return ["--store", str(self.root / "runs.sqlite")]

    @property
    def judge(self) -> list[str]:
        return ["--judge", f"scripted:{self.file('judge.json', json.dumps({'': REPLY}))}", *self.store]

    @property
    def generator(self) -> list[str]:
        return ["--generator", f"scripted:{self.file('generator.json', json.dumps([REPLY]))}"]

    @property
    def not_json(self) -> str:
        return self.file("not_json.json", "Score: [[4]] -- this is not JSON")

    @property
    def qa(self) -> str:
        return self.file("qa.csv", "id,question,answer,label\nq1,Q1?,A1,L1\nq2,Q2?,A2,L2\n")

    @property
    def thelma(self) -> str:
        return self.file("traffic.jsonl", json.dumps({"id": "s1", "query": "Q?", "sources": ["S."],
                                                      "response": "R."}) + "\n")

    @property
    def queries(self) -> str:
        return self.file("queries.csv", "qid,query\nq1,Q1?\n")

    @property
    def answers(self) -> str:
        return self.file("answers.csv", "qid,agent,answer\nq1,A,x\nq1,B,y\n")

    @property
    def corpus(self) -> str:
        return self.file("corpus/refunds.txt", "Refunds take five working days after approval. " * 30)

    @property
    def examples(self) -> str:
        return self.file("examples.txt", "How long do refunds take?\n")

    @property
    def dataset(self) -> str:
        rows = [{"id": f"t1:x/{style}-1", "logic_id": "t1:x", "template_id": "t1", "text_id": f"{style}-1",
                 "style": style, "question": f"{style} question?", "answer": "42", "sql": "SELECT 42",
                 "params": {}} for style in ("short", "long")]
        return self.file("dataset.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    @property
    def grammar_answers(self) -> str:
        rows = [{"qid": f"t1:x/{s}-1", "query": "q", "agent": "A", "answer": "42", "documents": []}
                for s in ("short", "long")]
        return self.file("grammar_answers.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    def run_id(self) -> str:
        """The id of a finished run in the store: a two-row grade."""
        assert main(["grade", self.qa, *self.judge, "--run", "graded"]) == 0
        return "graded"

    def text_index(self) -> str:
        """A BM25-only embedded index (no embedding model needed)."""
        folder = str(self.root / "text_index")
        assert main(["index", self.corpus, "--store-dir", folder, "--no-embeddings"]) == 0
        return folder


Case = Callable[[Work], tuple[list[str], list[str]]]

# Each case: the argv and the words its one error line must contain (a file name, an option, ...).
CASES: dict[str, Case] = {
    # ---- grade
    "grade missing file": lambda w: (["grade", w.missing, *w.judge], ["no_such_file.csv", "not found"]),
    "grade directory as file": lambda w: (["grade", w.folder, *w.judge], ["a_folder", "directory"]),
    "grade empty file": lambda w: (["grade", w.file("empty.csv", ""), *w.judge], ["empty.csv", "empty"]),
    "grade blank file": lambda w: (["grade", w.file("blank.csv", "\n \n"), *w.judge], ["blank.csv", "empty"]),
    "grade missing column": lambda w: (
        ["grade", w.file("nolabel.csv", "id,question,answer\n1,Q,A\n"), *w.judge],
        ["nolabel.csv:1", "'label'", "missing column"]),
    "grade renamed column absent": lambda w: (
        ["grade", w.qa, "--label-col", "ground_truth", *w.judge], ["qa.csv", "'ground_truth'"]),
    "grade human column absent": lambda w: (
        ["grade", w.qa, "--human-cols", "e1", *w.judge], ["qa.csv", "'e1'"]),
    "grade header not UTF-8": lambda w: (
        ["grade", w.file("latin1.csv", b"id,qu\xe9stion,answer,label\n1,Q,A,L\n"), *w.judge],
        ["latin1.csv:1", "UTF-8"]),
    "grade UTF-16 file": lambda w: (
        ["grade", w.file("utf16.csv", "id,question,answer,label\n1,Q,A,L\n".encode("utf-16")), *w.judge],
        ["utf16.csv", "UTF-16"]),
    "grade unknown file type": lambda w: (
        ["grade", w.file("qa.xlsx", "id,question\n"), *w.judge], ["qa.xlsx", ".csv"]),
    "grade JSONL with no readable line": lambda w: (
        ["grade", w.file("broken.jsonl", '{"question": "Q"\n[1, 2]\n'), *w.judge],
        ["broken.jsonl", "no line could be read", "broken.jsonl:1"]),
    "grade unknown judge": lambda w: (
        ["grade", w.qa, "--judge", "nosuch:model", *w.store], ["nosuch:model"]),
    "grade empty judge": lambda w: (["grade", w.qa, "--judge", "", *w.store], ["empty judge"]),
    "grade judge without provider": lambda w: (["grade", w.qa, "--judge", "nosuch", *w.store], ["'nosuch'"]),
    "grade scripted judge not JSON": lambda w: (
        ["grade", w.qa, "--judge", f"scripted:{w.not_json}", *w.store], ["not_json.json", "JSON"]),
    "grade scripted judge missing": lambda w: (
        ["grade", w.qa, "--judge", f"scripted:{w.missing}", *w.store], ["no_such_file.csv", "not found"]),
    "grade scripted judge is a directory": lambda w: (
        ["grade", w.qa, "--judge", f"scripted:{w.folder}", *w.store], ["a_folder", "directory"]),
    "grade scripted judge wrong shape": lambda w: (
        ["grade", w.qa, "--judge", f"scripted:{w.file('numbers.json', '[1, 2]')}", *w.store],
        ["numbers.json", "list of strings"]),
    "grade zero concurrency": lambda w: (["grade", w.qa, *w.judge, "--concurrency", "0"], ["--concurrency"]),
    "grade negative concurrency": lambda w: (["grade", w.qa, *w.judge, "--concurrency", "-4"], ["--concurrency"]),
    "grade zero timeout": lambda w: (["grade", w.qa, *w.judge, "--timeout", "0"], ["--timeout"]),
    "grade negative timeout": lambda w: (["grade", w.qa, *w.judge, "--timeout", "-1.5"], ["--timeout"]),
    "grade zero attempts": lambda w: (["grade", w.qa, *w.judge, "--max-attempts", "0"], ["--max-attempts"]),
    "grade threshold out of range": lambda w: (["grade", w.qa, *w.judge, "--threshold", "6"], ["--threshold"]),
    "grade negative threshold": lambda w: (["grade", w.qa, *w.judge, "--threshold", "-1"], ["--threshold"]),
    "grade unknown combine": lambda w: (["grade", w.qa, *w.judge, "--combine", "mean"], ["--combine", "mean"]),
    "grade price table not JSON": lambda w: (
        ["grade", w.qa, *w.judge, "--prices", w.not_json], ["not_json.json", "price table"]),
    "grade price table is a directory": lambda w: (
        ["grade", w.qa, *w.judge, "--prices", w.folder], ["a_folder", "price table"]),
    "grade rubric missing": lambda w: (["grade", w.qa, *w.judge, "--rubric", w.missing], ["no_such_file.csv", "rubric"]),
    "grade rubric is a directory": lambda w: (
        ["grade", w.qa, *w.judge, "--rubric", w.folder], ["a_folder", "rubric", "directory"]),
    "grade examples not objects": lambda w: (
        ["grade", w.qa, *w.judge, "--examples", w.file("examples.json", "5")], ["examples.json"]),
    "grade examples row wrong type": lambda w: (
        ["grade", w.qa, *w.judge, "--examples", w.file("shots.jsonl", json.dumps(
            {"question": "Q", "label": "L", "answer": "A", "score": "high", "reason": "r"}) + "\n")],
        ["shots.jsonl:1", "score"]),
    "grade prompt template missing": lambda w: (
        ["grade", w.qa, *w.judge, "--prompt", str(w.root / "nothere.txt")], ["nothere.txt"]),
    "grade store is a directory": lambda w: (
        ["grade", w.qa, *w.judge[:2], "--store", w.folder], ["a_folder", "run store"]),
    "grade store is not SQLite": lambda w: (
        ["grade", w.qa, *w.judge[:2], "--store", w.file("notes.sqlite", "plain text " * 200)],
        ["notes.sqlite", "run store"]),
    "grade out is a directory": lambda w: (["grade", w.qa, *w.judge, "--out", w.folder], ["--out", "a_folder"]),
    # ---- agreement
    "agreement missing file": lambda w: (
        ["agreement", w.file("a.csv", "id,score\n1,4\n"), w.missing], ["no_such_file.csv", "not found"]),
    "agreement directory as file": lambda w: (["agreement", w.folder, w.qa], ["a_folder", "directory"]),
    "agreement empty file": lambda w: (["agreement", w.file("e.csv", ""), w.qa], ["e.csv", "empty"]),
    "agreement missing score column": lambda w: (
        ["agreement", w.qa, w.qa, "--score-col", "grade"], ["qa.csv", "'grade'"]),
    "agreement threshold zero": lambda w: (["agreement", w.qa, w.qa, "--threshold", "0"], ["--threshold"]),
    "agreement one name": lambda w: (
        ["agreement", w.file("a.csv", "id,score\n1,4\n"), w.file("b.csv", "id,score\n1,5\n"), "--names", "x"],
        ["--names"]),
    "agreement json is a directory": lambda w: (
        ["agreement", w.file("a.csv", "id,score\n1,4\n"), w.file("b.csv", "id,score\n1,5\n"), "--json", w.folder],
        ["--json", "a_folder"]),
    # ---- thelma
    "thelma missing file": lambda w: (["thelma", w.missing, *w.judge, "--embedder", "none"], ["no_such_file.csv"]),
    "thelma missing column": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--query-col", "question"],
        ["traffic.jsonl", "'question'"]),
    "thelma no readable row": lambda w: (
        ["thelma", w.file("bad.jsonl", json.dumps({"query": 1, "sources": [], "response": "r"}) + "\n"),
         *w.judge, "--embedder", "none"], ["bad.jsonl", "no row"]),
    "thelma zero samples in flight": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--samples-in-flight", "0"], ["--samples-in-flight"]),
    "thelma bad threshold spec": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--threshold", "zz=1"], ["--threshold", "zz=1"]),
    "thelma low above high": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--low", "0.9", "--high", "0.1"], ["0.9", "0.1"]),
    "thelma unknown metric": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--metrics", "zz,gr"], ["zz"]),
    "thelma sd threshold out of range": lambda w: (
        ["thelma", w.thelma, *w.judge, "--sd-threshold", "-2", "--metrics", "gr,sd"], ["--sd-threshold", "-2"]),
    "thelma prompt file missing": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--prompt", f"match_essential={w.missing}"],
        ["--prompt", "no_such_file.csv"]),
    "thelma prompt unknown task": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--prompt", f"nosuch={w.examples}"],
        ["--prompt", "'nosuch'"]),
    "thelma out is a directory": lambda w: (
        ["thelma", w.thelma, *w.judge, "--embedder", "none", "--out", w.folder], ["--out", "a_folder"]),
    # ---- tournament
    "tournament no input": lambda w: (["tournament", *w.judge], ["--answers"]),
    "tournament answers missing": lambda w: (["tournament", "--answers", w.missing, *w.judge], ["no_such_file.csv"]),
    "tournament answers directory": lambda w: (
        ["tournament", "--answers", w.folder, *w.judge], ["a_folder", "directory"]),
    "tournament csv missing column": lambda w: (
        ["tournament", w.file("q.csv", "qid,text\nq1,Q\n"), w.answers, *w.judge], ["q.csv:1", "query"]),
    "tournament csv not UTF-8": lambda w: (
        ["tournament", w.file("q.csv", b"qid,query\nq1,caf\xe9\n"), w.answers, *w.judge], ["q.csv", "UTF-8"]),
    "tournament csv directory": lambda w: (
        ["tournament", w.folder, w.answers, *w.judge], ["a_folder", "directory"]),
    "tournament k zero": lambda w: (["tournament", w.queries, w.answers, *w.judge, "-k", "0"], ["-k"]),
    "tournament negative bootstrap": lambda w: (
        ["tournament", w.queries, w.answers, *w.judge, "--bootstrap", "-1"], ["--bootstrap"]),
    "tournament negative games per query": lambda w: (
        ["tournament", w.queries, w.answers, *w.judge, "--schedule", "sample", "--games-per-query", "-1"],
        ["--games-per-query"]),
    "tournament negative max games": lambda w: (
        ["tournament", w.queries, w.answers, *w.judge, "--max-games", "-1"], ["--max-games"]),
    "tournament factors file directory": lambda w: (
        ["tournament", w.queries, w.answers, *w.judge, "--factors-file", w.folder], ["a_folder", "factors"]),
    "tournament json is a directory": lambda w: (
        ["tournament", w.queries, w.answers, *w.judge, "--json", w.folder], ["--json", "a_folder"]),
    # ---- agents
    "agents queries missing": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.missing, "--out", "o.jsonl", *w.judge], ["no_such_file.csv"]),
    "agents queries directory": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.folder, "--out", "o.jsonl", *w.judge], ["a_folder"]),
    "agents queries line without query": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.file("q.jsonl", '{"qid": "q1", "query": "Q"}\n{"qid": "q2"}\n'),
         "--out", "o.jsonl", *w.judge], ["q.jsonl:2", '"query"']),
    "agents queries malformed JSON": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.file("q.jsonl", '{"qid": "q1", "query": "Q"\n'),
         "--out", "o.jsonl", *w.judge], ["q.jsonl:1", "JSON"]),
    "agents queries not UTF-8": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.file("q.txt", b"caf\xe9?\n"), "--out", "o.jsonl", *w.judge],
        ["q.txt", "UTF-8"]),
    "agents queries empty": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.file("q.txt", ""), "--out", "o.jsonl", *w.judge], ["q.txt"]),
    "agents k zero": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.examples, "--out", "o.jsonl", *w.judge, "-k", "0"], ["-k"]),
    "agents unknown agent": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.examples, "--out", "o.jsonl", *w.judge, "--agents", "zz"],
        ["--agents", "zz"]),
    "agents corpus missing": lambda w: (
        ["agents", "--corpus", w.missing, "--queries", w.examples, "--out", "o.jsonl", *w.judge,
         "--agents", "rag-bm25"], ["no_such_file.csv"]),
    "agents no corpus and no index": lambda w: (
        ["agents", "--queries", w.examples, "--out", "o.jsonl", *w.judge, "--agents", "rag-bm25"], ["--corpus"]),
    "agents zero chunk size": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.examples, "--out", "o.jsonl", *w.judge,
         "--agents", "rag-bm25", "--chunk-size", "0"], ["chunk size"]),
    "agents out is a directory": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.examples, "--out", w.folder, *w.judge,
         "--agents", "rag-bm25"], ["--out", "a_folder"]),
    "agents unknown judge": lambda w: (
        ["agents", "--corpus", w.corpus, "--queries", w.examples, "--out", "o.jsonl", "--judge", "nosuch:model",
         *w.store, "--agents", "rag-bm25"], ["nosuch:model"]),
    # ---- index
    "index missing path": lambda w: (["index", w.missing, "--store-dir", "ix"], ["no_such_file.csv"]),
    "index empty file": lambda w: (
        ["index", w.file("empty.txt", ""), "--store-dir", "ix", "--no-embeddings"], ["empty.txt"]),
    "index not UTF-8": lambda w: (
        ["index", w.file("latin1.txt", b"caf\xe9 refunds\n"), "--store-dir", "ix", "--no-embeddings"],
        ["latin1.txt"]),
    "index unsupported type": lambda w: (
        ["index", w.file("doc.pdf", "%PDF-1.4"), "--store-dir", "ix", "--no-embeddings"], ["doc.pdf"]),
    "index zero chunk size": lambda w: (["index", w.corpus, "--chunk-size", "0"], ["--chunk-size"]),
    "index negative overlap": lambda w: (["index", w.corpus, "--chunk-overlap", "-1"], ["--chunk-overlap"]),
    "index store dir is a file": lambda w: (
        ["index", w.corpus, "--store-dir", w.not_json, "--no-embeddings"], ["--store-dir", "not_json.json"]),
    "index opensearch unreachable": lambda w: (
        ["index", w.corpus, "--backend", "opensearch", "--url", UNREACHABLE, "--no-embeddings"],
        ["127.0.0.1:9", "cannot reach"]),
    "index opensearch malformed url": lambda w: (
        ["index", w.corpus, "--backend", "opensearch", "--url", "not a url", "--no-embeddings"], ["URL"]),
    # ---- search
    "search no index": lambda w: (["search", "refunds", "--store-dir", str(w.root / "none")], ["none"]),
    "search store dir is a file": lambda w: (
        ["search", "refunds", "--store-dir", w.not_json], ["--store-dir", "not_json.json"]),
    "search corrupt manifest": lambda w: (
        ["search", "refunds", "--store-dir", str(Path(w.file("broken_ix/manifest.json", "{oops")).parent)],
        ["manifest.json"]),
    "search k zero": lambda w: (["search", "refunds", "--store-dir", w.text_index(), "-k", "0"], ["-k"]),
    "search bad weights": lambda w: (
        ["search", "refunds", "--store-dir", w.text_index(), "--weights", "a,b"], ["--weights", "a,b"]),
    "search zero depth": lambda w: (
        ["search", "refunds", "--store-dir", w.text_index(), "--mode", "hybrid", "--depth", "0"], ["depth"]),
    "search negative rank constant": lambda w: (
        ["search", "refunds", "--store-dir", w.text_index(), "--rank-constant", "-1"], ["rank_constant"]),
    "search empty query": lambda w: (["search", "", "--store-dir", w.text_index()], ["query"]),
    "search knn on a text-only index": lambda w: (
        ["search", "refunds", "--store-dir", w.text_index(), "--mode", "knn"], ["text_index", "--mode bm25"]),
    "search opensearch unreachable": lambda w: (
        ["search", "refunds", "--backend", "opensearch", "--url", UNREACHABLE], ["127.0.0.1:9", "cannot reach"]),
    # ---- synth
    "synth corpus missing": lambda w: (
        ["synth", "queries", "--corpus", w.missing, "--examples", w.examples, *w.generator, *w.store],
        ["no_such_file.csv"]),
    "synth examples missing": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.missing, *w.generator, *w.store],
        ["no_such_file.csv"]),
    "synth examples directory": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.folder,
         *w.generator, *w.store], ["a_folder", "directory"]),
    "synth unknown generator": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples, "--generator", "nosuch:model",
         *w.store], ["nosuch:model"]),
    "synth empty generator": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples, "--generator", "", *w.store],
        ["empty judge"]),
    "synth generator not JSON": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples, "--generator",
         f"scripted:{w.not_json}", *w.store], ["not_json.json"]),
    "synth negative quota": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples, "--generator",
         f"scripted:{w.not_json}=-1", *w.store], ["--generator", "quota"]),
    "synth zero concurrency": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples, "--generator", "scripted:x",
         *w.store, "--concurrency", "0"], ["--concurrency"]),
    "synth negative max examples": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples, "--generator", "scripted:x",
         *w.store, "--max-examples", "-1"], ["--max-examples"]),
    "synth corpus not JSON": lambda w: (
        ["synth", "queries", "--corpus", w.not_json, "--examples", w.examples,
         *w.generator, *w.store], ["not_json.json:1", "JSON"]),
    "synth corpus not UTF-8": lambda w: (
        ["synth", "queries", "--corpus", w.file("c.txt", b"\xff\xfe\x00bad"), "--examples", w.examples,
         *w.generator, *w.store], ["c.txt", "UTF-8"]),
    "synth corpus malformed JSON line": lambda w: (
        ["synth", "queries", "--corpus", w.file("c.jsonl", '{"id": "a", "text": "words"}\n{bad\n'),
         "--examples", w.examples, *w.generator,
         *w.store], ["c.jsonl:2"]),
    "synth zero passages": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples,
         *w.generator, *w.store, "--passages", "0", "--min-tokens", "1"],
        ["passages"]),
    "synth similarity out of range": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples,
         *w.generator, *w.store, "--similarity", "7", "--min-tokens", "1"],
        ["similarity"]),
    "synth out is a directory": lambda w: (
        ["synth", "queries", "--corpus", w.corpus, "--examples", w.examples,
         *w.generator, *w.store, "--out", w.folder], ["--out", "a_folder"]),
    # ---- grammar
    "grammar schema missing database": lambda w: (
        ["grammar", "schema", "--db", str(w.root / "gone.sqlite")], ["gone.sqlite", "not found"]),
    "grammar schema not a database": lambda w: (["grammar", "schema", "--db", w.not_json], ["database"]),
    "grammar schema unknown dialect": lambda w: (
        ["grammar", "schema", "--db", "nosuchdialect://x"], ["nosuchdialect://x"]),
    "grammar templates not JSON": lambda w: (
        ["grammar", "generate", "--db", "demo", "--templates", w.not_json, *w.judge, "--out", "d.jsonl"],
        ["not_json.json:1", "JSON"]),
    "grammar templates directory": lambda w: (
        ["grammar", "generate", "--db", "demo", "--templates", w.folder, *w.judge, "--out", "d.jsonl"],
        ["--templates", "a_folder"]),
    "grammar unknown style": lambda w: (
        ["grammar", "generate", "--db", "demo", "--styles", "weird", *w.judge], ["--styles", "weird"]),
    "grammar zero combinations": lambda w: (
        ["grammar", "generate", "--db", "demo", *w.judge, "--max-combinations", "0", "--out",
         str(w.root / "d.jsonl")], ["max_combinations"]),
    "grammar dataset missing": lambda w: (
        ["grammar", "analyze", "--dataset", w.missing, "--answers", w.grammar_answers, *w.judge],
        ["no_such_file.csv", "not found"]),
    "grammar dataset not UTF-8": lambda w: (
        ["grammar", "analyze", "--dataset", w.file("ds.jsonl", b'{"id": "caf\xe9"}\n'), "--answers",
         w.grammar_answers, *w.judge], ["ds.jsonl:1", "UTF-8"]),
    "grammar dataset directory": lambda w: (
        ["grammar", "analyze", "--dataset", w.folder, "--answers", w.grammar_answers, *w.judge],
        ["a_folder", "directory"]),
    "grammar dataset line missing field": lambda w: (
        ["grammar", "analyze", "--dataset", w.file("ds.jsonl", '{"id": "x"}\n'), "--answers", w.grammar_answers,
         *w.judge], ["ds.jsonl:1", "logic_id"]),
    "grammar answers missing": lambda w: (
        ["grammar", "analyze", "--dataset", w.dataset, "--answers", w.missing, *w.judge], ["no_such_file.csv"]),
    "grammar verdicts missing": lambda w: (
        ["grammar", "analyze", "--dataset", w.dataset, "--answers", w.grammar_answers, *w.judge,
         "--verdicts", w.missing], ["no_such_file.csv", "verdicts"]),
    "grammar verdicts not objects": lambda w: (
        ["grammar", "analyze", "--dataset", w.dataset, "--answers", w.grammar_answers, *w.judge,
         "--verdicts", w.file("v.jsonl", "5\n")], ["v.jsonl:1", "JSON object"]),
    "grammar verdicts not UTF-8": lambda w: (
        ["grammar", "analyze", "--dataset", w.dataset, "--answers", w.grammar_answers, *w.judge,
         "--verdicts", w.file("v.jsonl", b"\xff\n")], ["v.jsonl", "UTF-8"]),
    "grammar verdict wrong type": lambda w: (
        ["grammar", "analyze", "--dataset", w.dataset, "--answers", w.grammar_answers, *w.judge,
         "--verdicts", w.file("v.jsonl", '{"qid": "a", "evaluator": "e", "verdict": "yes"}\n')],
        ["v.jsonl:1", '"verdict"']),
    "grammar zero selfcheck samples": lambda w: (
        ["grammar", "analyze", "--dataset", w.dataset, "--answers", w.grammar_answers, *w.judge, "--selfcheck",
         "--answerer", "scripted:x", "--selfcheck-samples", "0"], ["--selfcheck-samples"]),
    "grammar unknown compare clusters": lambda w: (
        ["grammar", "analyze", "--dataset", w.dataset, "--answers", w.grammar_answers, *w.judge,
         "--compare", "tiny", "huge"], ["--compare", "'tiny'", "dataset.jsonl"]),
    # ---- report
    "report unknown run": lambda w: (["report", "nosuch-run", *w.store], ["'nosuch-run'", "runs.sqlite"]),
    "report no run id": lambda w: (["report", *w.store], ["run id"]),
    "report wildcard run id": lambda w: (["report", "%", *w.store], ["'%'"]),
    "report store is a directory": lambda w: (["report", "x", "--store", w.folder], ["a_folder"]),
    "report store is not SQLite": lambda w: (
        ["report", "x", "--store", w.file("notes.sqlite", "plain text " * 200)], ["notes.sqlite"]),
    "report out is a directory": lambda w: (
        ["report", w.run_id(), *w.store, "--out", w.folder], ["--out", "a_folder"]),
    # ---- quickstart
    "quickstart out is a file": lambda w: (["quickstart", *w.judge, "--out", w.not_json], ["--out", "not_json.json"]),
    "quickstart zero questions": lambda w: (
        ["quickstart", *w.judge, "--questions", "0", "--out", "qs"], ["--questions"]),
    "quickstart too many questions": lambda w: (
        ["quickstart", *w.judge, "--questions", "9", "--out", "qs"], ["--questions"]),
    "quickstart zero k": lambda w: (["quickstart", *w.judge, "-k", "0", "--out", "qs"], ["-k"]),
    "quickstart unknown judge": lambda w: (
        ["quickstart", "--judge", "nosuch:model", *w.store, "--out", "qs"], ["nosuch:model"]),
    "quickstart zero concurrency": lambda w: (
        ["quickstart", *w.judge, "--concurrency", "0", "--out", "qs"], ["--concurrency"]),
    # ---- argument parsing itself (argparse prints its usage block, then one error line)
    "grade non-numeric concurrency": lambda w: (
        ["grade", w.qa, *w.judge, "--concurrency", "abc"], ["--concurrency", "'abc'"]),
    "tournament threshold not a choice": lambda w: (
        ["tournament", w.queries, w.answers, *w.judge, "--threshold", "5"], ["--threshold"]),
    "unknown command": lambda w: (["frobnicate"], ["'frobnicate'"]),
    "grade without a file": lambda w: (["grade", *w.judge], ["FILE"]),
}


def error_line(err: str) -> str:
    """The one error line of a failed command; every other stderr line is a warning, a note or
    argparse's usage block, never a second error or a traceback."""
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, f"expected one error line, got:\n{err}"
    line = errors[0]
    assert line.startswith("langrag-eval"), line
    for other in err.splitlines():
        assert other == line or other.startswith(("warning:", "WARNING:", "note:", "usage:", " ")), \
            f"unexpected stderr line {other!r} in:\n{err}"
    return line


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Work:
    monkeypatch.chdir(tmp_path)  # relative --out, --store-dir and report names land in tmp_path
    monkeypatch.delenv("OPENSEARCH_URL", raising=False)
    return Work(tmp_path)


def test_at_least_forty_cases_and_every_command_covered() -> None:
    commands = {name.split()[0] for name in CASES}
    assert len(CASES) >= 40
    assert {"grade", "agreement", "thelma", "tournament", "agents", "index", "search", "synth", "grammar",
            "report", "quickstart"} <= commands


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_gives_one_clear_error_line(name: str, work: Work, capsys: Capture) -> None:
    argv, needles = CASES[name](work)
    if argv[0] in ("report", "compare", "gate") or argv[:2] == ["store", "status"]:
        # The reading commands refuse a path holding no store; their cases are about a store with no such run.
        open_store(str(work.root / "runs.sqlite")).close()
    capsys.readouterr()  # drop what building the fixtures printed
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    out = capsys.readouterr()
    assert code == 2, f"exit {code}\nstdout:\n{out.out}\nstderr:\n{out.err}"
    line = error_line(out.err)
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"


def test_no_file_is_written_and_no_run_opened_on_an_early_error(work: Work, capsys: Capture) -> None:
    """Errors found in the arguments stop the command before the store or results are touched."""
    assert main(["grade", work.qa, *work.judge, "--threshold", "9"]) == 2
    assert main(["thelma", work.thelma, *work.judge, "--embedder", "none", "--prompt",
                 f"match_essential={work.missing}"]) == 2
    capsys.readouterr()
    assert not (work.root / "runs.sqlite").exists()
    assert not list(work.root.glob("*.vrag.jsonl")) and not list(work.root.glob("*.thelma.jsonl"))


# ---- row-level problems: reported with file, line and field; the other rows still run

def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_grade_csv_bad_rows_are_reported_and_the_others_graded(work: Work, capsys: Capture) -> None:
    huge = "x" * 5_000_000  # a 5 MB cell: over the CSV reader's field limit
    body = (b"id,question,answer,label\n"
            b"q1,Q1?,A1,L1\n"
            b"q2,Q2?,caf\xe9,L2\n"                      # not UTF-8 in the answer field
            b"q3,Q3?,A3,L3,surplus\n"                    # one field too many
            b"q4,Q4?," + huge.encode() + b",L4\n"         # the huge cell
            b"q5,Q5?,,L5\n"                               # empty answer: graded as unscored
            b"q6,Q6?,A6,L6\n")
    qa = work.file("rows.csv", body)
    out = work.root / "rows.out.jsonl"
    assert main(["grade", qa, *work.judge, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f'{qa}:3: field "answer": not UTF-8' in err
    assert f"{qa}:4: 5 fields but the header has 4" in err
    assert f"{qa}:5: " not in err  # a cell of any size is one cell, read whole
    assert f'{qa}:6: field "answer": empty answer' in err
    records = {r["id"]: r for r in _records(out)}
    assert set(records) == {"q1", "q4", "q5", "q6"}
    assert records["q4"]["line"] == 5
    assert records["q1"]["score"] == 4 and records["q6"]["score"] == 4 and records["q6"]["line"] == 7
    assert records["q5"]["score"] is None and records["q5"]["unscored"]["cause"] == "invalid_input"


def test_grade_jsonl_bad_lines_are_reported_and_a_huge_field_is_graded(work: Work, capsys: Capture) -> None:
    lines = [json.dumps({"id": "ok", "question": "Q?", "answer": "A", "label": "L"}),
             '{"id": "broken", "question": ',                                   # malformed JSON
             json.dumps(["a", "list"]),                                          # not an object
             json.dumps({"id": "typed", "question": "Q?", "answer": {"x": 1}, "label": "L"}),  # wrong type
             json.dumps({"id": "huge", "question": "Q?", "answer": "y" * 5_000_000, "label": "L"})]
    qa = work.file("rows.jsonl", "\n".join(lines) + "\n")
    out = work.root / "rows.out.jsonl"
    assert main(["grade", qa, *work.judge, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{qa}:2: not valid JSON" in err
    assert f"{qa}:3: expected a JSON object, got list" in err
    assert f'{qa}:4: field "answer": expected text, got dict' in err
    records = {r["id"]: r for r in _records(out)}
    assert set(records) == {"ok", "typed", "huge"}
    assert records["ok"]["score"] == 4 and records["huge"]["score"] == 4
    assert records["typed"]["unscored"]["cause"] == "invalid_input"


def test_agreement_bad_score_is_counted_unscored(work: Work, capsys: Capture) -> None:
    a = work.file("a.csv", "id,score\n1,4\n2,seven\n3,5\n,2\n")
    b = work.file("b.csv", "id,score\n1,4\n2,3\n3,5\n")
    assert main(["agreement", a, b]) == 0
    out = capsys.readouterr()
    assert f"{a}:3: field \"score\": score 'seven' is not an integer from 1 to 5" in out.err
    assert f'{a}:5: field "id": empty id' in out.err
    assert "items 3, compared 2" in out.out


def test_thelma_bad_rows_are_skipped_and_the_rest_scored(work: Work, capsys: Capture) -> None:
    rows = [json.dumps({"id": "good", "query": "Q?", "sources": ["S."], "response": "R."}),
            json.dumps({"id": "bad-sources", "query": "Q?", "sources": "not a list", "response": "R."}),
            json.dumps({"id": "bad-query", "query": 5, "sources": [], "response": "R."}),
            "{not json",
            json.dumps({"id": "good2", "query": "Q2?", "sources": [], "response": None})]
    data = work.file("traffic.jsonl", "\n".join(rows) + "\n")
    out = work.root / "t.out.jsonl"
    assert main(["thelma", data, *work.judge, "--embedder", "none", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f'{data}:2: field "sources": expected a list of source texts such as' in err and "got the text 'not a list'" in err
    assert f'{data}:3: field "query": the query must be text' in err
    assert f"{data}:4: not valid JSON" in err
    assert [r["id"] for r in _records(out)] == ["good", "good2"]


def test_tournament_bad_answer_lines_are_reported_and_games_still_played(work: Work, capsys: Capture) -> None:
    rows = [{"qid": "q1", "query": "Q1", "agent": "A", "answer": "x", "documents": []},
            {"qid": "q1", "query": "Q1", "agent": "B", "answer": "y", "documents": []},
            {"qid": "q1", "query": "Q1", "agent": "C", "answer": 5, "documents": []}]
    answers = work.file("run.jsonl", "".join(json.dumps(r) + "\n" for r in rows) + "{oops\n")
    judge = work.file("pair.json", json.dumps({"": "[[A]]"}))
    summary = work.root / "summary.json"
    assert main(["tournament", "--answers", answers, "--judge", f"scripted:{judge}", *work.store,
                 "--bootstrap", "5", "--tournaments", "5", "--json", str(summary)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f'{answers}:3: field "answer": must be a non-empty string' in err
    assert f"{answers}:4: not valid JSON" in err
    assert "2 agents, 1 queries" in err
    assert json.loads(summary.read_text(encoding="utf-8"))["games"]["played"] >= 1


def test_index_bad_jsonl_lines_are_reported_the_rest_indexed(work: Work, capsys: Capture) -> None:
    data = work.file("docs.jsonl", '{"id": "d1", "text": "Refunds take five days."}\n{bad\n{"id": "d3"}\n'
                                   '{"id": "d4", "text": 7}\n')
    # exit 1: indexed, but some inputs were skipped (each named)
    assert main(["index", data, "--store-dir", "ix", "--no-embeddings"]) == 1
    out = capsys.readouterr()
    assert f"{data}:2: not valid JSON" in out.err
    assert f'{data}:3: field "text"' in out.err and f'{data}:4: field "text"' in out.err
    assert "indexed 1 chunks from 1 documents" in out.out
    assert main(["search", "refunds", "--store-dir", "ix", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["id"].startswith("d1")


# ---- the installed entry point behaves the same as main()

def _entry_point() -> str:
    script = Path(sys.executable).parent / "langrag-eval"
    if not script.exists():
        pytest.skip("the langrag-eval script is not installed next to this Python")
    return str(script)


@pytest.mark.parametrize("name", ["grade missing file", "grade unknown judge", "index opensearch unreachable",
                                  "grammar dataset not UTF-8"])
def test_real_entry_point(name: str, work: Work) -> None:
    argv, needles = CASES[name](work)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENSEARCH_URL", "OPENAI_API_KEY", "LANGRAG_JUDGE")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run([_entry_point(), *argv], check=False, capture_output=True, text=True, cwd=work.root, env=env,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    line = error_line(proc.stderr)
    for needle in needles:
        assert needle in line
