"""Drive BM25Oracle.java (real Lucene from Debian's liblucene8-java) from Python.

Used by the retrieval tests (through the ``lucene`` fixture) and by ``generate_tables.py``. One JVM
call handles a whole batch: texts go through a UTF-8 file, one escaped text per line.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

JAVA_DIR = Path(os.environ.get("LUCENE_JAVA_DIR", "/usr/share/java"))
SOURCE = Path(__file__).with_name("BM25Oracle.java")
INSTALL_HINT = "apt-get install -y openjdk-17-jdk-headless liblucene8-java"


class OracleUnavailable(RuntimeError):
    """javac, java or the Lucene jars are missing; the message says what to install."""


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            i += 1
            c = {"n": "\n", "r": "\r", "t": "\t"}.get(text[i], text[i])
        out.append(c)
        i += 1
    return "".join(out)


def _jar(stem: str) -> str | None:
    plain = JAVA_DIR / f"{stem}.jar"
    if plain.exists():
        return str(plain)
    versioned = sorted(glob.glob(str(JAVA_DIR / f"{stem}-[0-9]*.jar")))
    return versioned[-1] if versioned else None


@dataclass
class Lucene:
    """A compiled oracle: ``classpath`` holds the compiled class and the Lucene jars."""

    classpath: str
    core_jar: str

    @classmethod
    def compile(cls, out_dir: Path) -> Lucene:
        if shutil.which("javac") is None or shutil.which("java") is None:
            raise OracleUnavailable(f"javac/java not found: {INSTALL_HINT}")
        jars = [_jar("lucene-core"), _jar("lucene-analyzers-common")]
        if None in jars:
            raise OracleUnavailable(f"Lucene jars not found in {JAVA_DIR}: {INSTALL_HINT}")
        classpath = os.pathsep.join([str(out_dir), *jars])
        subprocess.run(["javac", "-d", str(out_dir), "-cp", classpath, str(SOURCE)], check=True,
                       capture_output=True, timeout=300)
        return cls(classpath=classpath, core_jar=str(jars[0]))

    @property
    def version(self) -> str:
        """Lucene's version, read from the jar's file name (for example ``8.7.0``)."""
        stem = Path(self.core_jar).stem
        return stem.split("-")[-1] if stem[-1].isdigit() else "unknown"

    def run(self, *args: str) -> list[str]:
        done = subprocess.run(["java", "-Xss8m", "-cp", self.classpath, "BM25Oracle", *args],
                              check=True, capture_output=True, timeout=600)
        text = done.stdout.decode("utf-8")
        # Split on \n alone: str.splitlines would also split on U+0085, U+2028 and friends.
        return text.split("\n")[:-1] if text else []

    def analyze(self, texts: Sequence[str]) -> list[list[str]]:
        """Tokens of every text as StandardAnalyzer (no stop words) emits them, in one JVM call."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "texts.txt"
            path.write_text("".join(escape(t) + "\n" for t in texts), encoding="utf-8")
            rows = self.run("analyze", str(path))
        if len(rows) != len(texts):
            raise AssertionError(f"oracle returned {len(rows)} rows for {len(texts)} texts")
        return [[unescape(t) for t in row.split("\t")] if row else [] for row in rows]

    def serve(self) -> AnalyzerProcess:
        """One long-lived JVM answering batches of texts (for property tests that ask many times)."""
        proc = subprocess.Popen(["java", "-cp", self.classpath, "BM25Oracle", "serve"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return AnalyzerProcess(proc)

    def search(self, docs: Iterable[tuple[str, str]], queries: Sequence[str],
               k: int) -> dict[int, list[tuple[str, np.float32]]]:
        """Top ``k`` (doc id, score) per query index under BM25Similarity, best first; the scores
        are Lucene's floats bit for bit."""
        with tempfile.TemporaryDirectory() as tmp:
            doc_path, query_path = Path(tmp) / "docs.tsv", Path(tmp) / "queries.txt"
            doc_path.write_text("".join(f"{i}\t{escape(t)}\n" for i, t in docs), encoding="utf-8")
            query_path.write_text("".join(escape(q) + "\n" for q in queries), encoding="utf-8")
            rows = self.run("search", str(doc_path), str(query_path), str(k))
        hits: dict[int, list[tuple[str, np.float32]]] = {}
        for row in rows:
            q, doc_id, _, bits = row.split("\t")
            score = np.array([int(bits)], dtype=np.int32).view(np.float32)[0]
            hits.setdefault(int(q), []).append((doc_id, score))
        return hits


@dataclass
class AnalyzerProcess:
    """A running ``BM25Oracle serve``: :meth:`analyze` sends one batch and reads its answer."""

    proc: subprocess.Popen[bytes]

    def analyze(self, texts: Sequence[str]) -> list[list[str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        # The JVM reads the whole batch before it writes, so writing first cannot deadlock.
        self.proc.stdin.write("".join(escape(t) + "\n" for t in texts).encode("utf-8") + b"\\\n")
        self.proc.stdin.flush()
        rows = [self.proc.stdout.readline().decode("utf-8") for _ in texts]
        if any(not row.endswith("\n") for row in rows):
            raise AssertionError(f"the Lucene process ended early (exit code {self.proc.poll()})")
        return [[unescape(t) for t in row[:-1].split("\t")] if row != "\n" else [] for row in rows]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
