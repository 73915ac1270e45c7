"""One BM25 engine in a fresh process, for benchmarks/retrieval_bm25.py.

    python benchmarks/peers/bm25_engine.py ENGINE CORPUS.jsonl QUERIES.json N_QUERIES

ENGINE is ``ours`` (run with langrag-eval's interpreter), ``bm25s`` or ``rank-bm25`` (run with
benchmarks/.retrieval-peers-venv's: the peers are never dependencies of langrag-eval). This file
imports only the standard library and numpy at the top, so either interpreter can run it.

The corpus is read first and put in the form the engine's API takes (ours: ``Chunk`` objects with
id, text and metadata; the peers: a list of str), then the garbage collector runs and the baseline
is taken: resident memory (VmRSS) and a reset high-water mark. "Build" is the time from those
inputs to the first answer (tokenizing, indexing, and the first query, which is when ours builds
its postings); "resident" is VmRSS growth over the baseline after a collection; "peak" is the
high-water mark over the same baseline. Then each query is timed alone (wall clock, k 10).
Build and query CPU time (this process, all threads) are reported beside the wall times: on a
shared machine they are the steadier figures.

Tokenizers differ: ours is Lucene's StandardAnalyzer (UAX #29 word breaks, lower case), as
OpenSearch scores; bm25s tokenizes with its default ``(?u)\\b\\w\\w+\\b`` pattern after lower-casing
(stop words off, as ours has none), and rank-bm25, which has no tokenizer, is given the same.
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

K = 10
SIMPLE = re.compile(r"(?u)\b\w\w+\b")  # bm25s's default token pattern


def simple_tokens(text: str) -> list[str]:
    return SIMPLE.findall(text.lower())


def _status() -> dict[str, float]:
    out = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")  # resets VmHWM to the current VmRSS (Linux 4.0+)
    except OSError:
        pass


# Each engine: inputs from the corpus rows (outside the measurement), then build(inputs) returning
# the index (kept alive while measuring) and a one-query search function.

def ours_inputs(rows: list[dict[str, Any]]) -> Any:
    from langrag_eval.retrieval import Chunk
    return [Chunk(id=r["id"], text=r["text"], metadata=r["metadata"]) for r in rows]


def ours_build(chunks: Any) -> tuple[Any, Callable[[str], Any]]:
    from langrag_eval.retrieval import EmbeddedBackend
    backend = EmbeddedBackend()
    backend.index(chunks)
    return backend, lambda q: [d.id for d in backend.search(text=q, k=K)]


def bm25s_build(texts: list[str]) -> tuple[Any, Callable[[str], Any]]:
    import bm25s
    tokens = bm25s.tokenize(texts, stopwords=None, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    del tokens

    def search(q: str) -> Any:
        docs, _ = retriever.retrieve([simple_tokens(q)], k=K, show_progress=False)
        return docs[0].tolist()
    return retriever, search


def rank_bm25_build(texts: list[str]) -> tuple[Any, Callable[[str], Any]]:
    from rank_bm25 import BM25Okapi
    index = BM25Okapi([simple_tokens(t) for t in texts])

    def search(q: str) -> Any:
        scores = index.get_scores(simple_tokens(q))
        top = np.argpartition(-scores, K)[:K]
        return top[np.argsort(-scores[top], kind="stable")].tolist()
    return index, search


ENGINES = {
    "ours": (ours_inputs, ours_build),
    "bm25s": (lambda rows: [r["text"] for r in rows], bm25s_build),
    "rank-bm25": (lambda rows: [r["text"] for r in rows], rank_bm25_build),
}


def _version(engine: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version({"ours": "langrag-eval"}.get(engine, engine))
    except PackageNotFoundError:
        return "source tree"


def _source(engine: str) -> str:
    """Where the engine was imported from (for ours: a source tree or an install)."""
    module = sys.modules.get({"ours": "langrag_eval", "rank-bm25": "rank_bm25"}.get(engine, engine))
    return os.path.dirname(os.path.dirname(os.path.abspath(getattr(module, "__file__", "") or "")))


def main(engine: str, corpus_path: str, queries_path: str, n_queries: int) -> dict[str, Any]:
    with open(corpus_path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    with open(queries_path, encoding="utf-8") as fh:
        queries = json.load(fh)[:n_queries]
    make_inputs, build = ENGINES[engine]
    inputs = make_inputs(rows)
    del rows
    gc.collect()
    base = _status()["VmRSS"]
    _reset_peak()
    start, cpu = time.perf_counter(), time.process_time()
    index, search = build(inputs)
    search(queries[0])
    build_s, build_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    gc.collect()
    after = _status()
    times, cpu_times = [], []
    for q in queries:
        t, cpu = time.perf_counter(), time.process_time()
        search(q)
        times.append(time.perf_counter() - t)
        cpu_times.append(time.process_time() - cpu)
    ms, cpu_ms = np.array(times) * 1000, np.array(cpu_times) * 1000
    return {"engine": engine, "version": _version(engine), "build_s": build_s, "build_cpu_s": build_cpu_s,
            "resident_mib": after["VmRSS"] - base, "peak_mib": after["VmHWM"] - base,
            "source": _source(engine), "queries": len(queries), "p50_ms": float(np.percentile(ms, 50)),
            "p95_ms": float(np.percentile(ms, 95)), "cpu_p50_ms": float(np.percentile(cpu_ms, 50)),
            "cpu_p95_ms": float(np.percentile(cpu_ms, 95)), "index": type(index).__name__}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))))
