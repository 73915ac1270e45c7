"""The embedded BM25 beside bm25s and rank-bm25, for benchmarks/retrieval.py.

Every engine runs in its own fresh process (benchmarks/peers/bm25_engine.py) on the same corpus,
written once to a JSON-lines file, and the same queries: ours with this interpreter, the peers with
benchmarks/.retrieval-peers-venv's (made on first use by benchmarks/peers/setup_retrieval_peers.sh;
the peers are never dependencies of langrag-eval, nor in the project's environment: the script runs
``pip install -r benchmarks/peers/retrieval-requirements.txt`` (bm25s 0.3.16 with numpy, no numba,
and rank-bm25) into that venv, or into ``$PEERS_VENV``). Each reports its build time (inputs to first
answer), resident memory growth, peak memory growth and query latency; see bm25_engine.py for what
each figure covers. rank-bm25 scores every document in Python for every query term, so it gets
fewer queries.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import langrag_eval
from langrag_eval.retrieval import Chunk

__all__ = ["bm25_peers", "bm25_report"]

HERE = Path(__file__).resolve().parent
VENV = HERE / ".retrieval-peers-venv"
ENGINE = HERE / "peers" / "bm25_engine.py"
TOKENIZERS = ("tokenizers differ: ours is Lucene's StandardAnalyzer (UAX #29 word breaks, lower case), "
              "as OpenSearch scores;\n  bm25s and rank-bm25 get bm25s's default (?u)\\b\\w\\w+\\b over "
              "lower-cased text, stop words off")


def ensure_peers(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating the BM25 peers' environment in {venv} "
              f"(benchmarks/peers/setup_retrieval_peers.sh) ...", flush=True)
        subprocess.run(["bash", str(HERE / "peers" / "setup_retrieval_peers.sh")], check=True,
                       env={**os.environ, "PEERS_VENV": str(venv)})
    return python


def _run(python: Path | str, engine: str, corpus: Path, queries: Path, n: int) -> dict[str, Any]:
    # The child imports the same langrag_eval as this process (a source tree or an install).
    source = str(Path(langrag_eval.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run([str(python), str(ENGINE), engine, str(corpus), str(queries), str(n)],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return {"engine": engine, "error": f"exit {done.returncode}: {tail}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One engine's repeats: the fastest build (least disturbed by other processes), the median of
    the memory and latency figures."""
    good = [r for r in runs if "error" not in r]
    if not good:
        return runs[0]
    out = dict(good[0], repeats=len(good))
    for key in ("build_s", "build_cpu_s"):
        out[key] = min(r[key] for r in good)
    for key in ("resident_mib", "peak_mib", "p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms"):
        out[key] = statistics.median(r[key] for r in good)
    return out


def bm25_peers(chunks: list[Chunk], queries: list[str], n_queries: int, rank_bm25_queries: int = 50,
               repeats: int = 1, venv: Path = VENV,
               peers: tuple[str, ...] = ("bm25s", "rank-bm25")) -> list[dict[str, Any]]:
    """Figures of ours and ``peers`` (bm25s, rank-bm25), each built in a fresh process from the same
    corpus; with ``repeats`` the engines take turns that many times (see :func:`_combine`)."""
    python = ensure_peers(venv)
    engines = [("ours", sys.executable, n_queries), ("bm25s", python, n_queries),
               ("rank-bm25", python, min(n_queries, rank_bm25_queries))]
    engines = [e for e in engines if e[0] == "ours" or e[0] in peers]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in engines}
    with tempfile.TemporaryDirectory() as tmp:
        corpus, qfile = Path(tmp) / "corpus.jsonl", Path(tmp) / "queries.json"
        with open(corpus, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"id": c.id, "text": c.text, "metadata": c.metadata}) + "\n"
                          for c in chunks)
        qfile.write_text(json.dumps(queries[:n_queries]), encoding="utf-8")
        for _ in range(repeats):
            for name, interpreter, n in engines:
                runs[name].append(_run(interpreter, name, corpus, qfile, n))
    return [_combine(runs[name]) for name, _, _ in engines]


def bm25_report(results: list[dict[str, Any]], n_docs: int) -> None:
    repeats = max((r.get("repeats", 1) for r in results), default=1)
    turns = f"; {repeats} turns each: fastest build, median memory and latency" if repeats > 1 else ""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"BM25 at {n_docs:,} documents, each engine in a fresh process, same corpus file and queries "
          f"(k 10){turns}; load average (1, 5, 15 min) {load} at the end")
    print(f"  {'':<18} {'build (CPU)':>16} {'resident':>12} {'peak':>12} {'query p50 / p95':>20} "
          f"{'CPU p50 / p95':>18} {'queries':>8}")
    for r in results:
        name = f"{r['engine']} {r.get('version', '')}".strip()
        if "error" in r:
            print(f"  {name:<18} failed: {r['error']}")
            continue
        print(f"  {name:<18} {r['build_s']:>6.1f} s ({r['build_cpu_s']:>5.1f} s) "
              f"{r['resident_mib']:>8.0f} MiB {r['peak_mib']:>8.0f} MiB "
              f"{r['p50_ms']:>8.2f} / {r['p95_ms']:>6.2f} ms "
              f"{r['cpu_p50_ms']:>7.2f} / {r['cpu_p95_ms']:>6.2f} ms {r['queries']:>8}")
    by = {r["engine"]: r for r in results if "error" not in r}
    if "ours" in by:
        print(f"  ours: langrag_eval from {by['ours']['source']}")
    if "ours" in by and "bm25s" in by:
        o, p = by["ours"], by["bm25s"]
        x = {key: o[key] / p[key] for key in ("build_s", "build_cpu_s", "resident_mib", "peak_mib",
                                               "p50_ms", "p95_ms", "cpu_p95_ms")}
        print(f"  ours / bm25s: build {x['build_s']:.2f}x (CPU {x['build_cpu_s']:.2f}x), resident "
              f"{x['resident_mib']:.2f}x, peak {x['peak_mib']:.2f}x, query p50 {x['p50_ms']:.2f}x, "
              f"p95 {x['p95_ms']:.2f}x (CPU {x['cpu_p95_ms']:.2f}x)")
        print(f"  targets: query p50 <= 1.0x bm25s: {'met' if x['p50_ms'] <= 1.0 else 'NOT met'}; "
              f"build <= 1.0x bm25s: {'met' if x['build_s'] <= 1.0 else 'NOT met'}; "
              f"resident <= 1.2x bm25s: {'met' if x['resident_mib'] <= 1.2 else 'NOT met'}")
    print("  build: from the engine's inputs (ours: Chunk objects; peers: a list of str) to its first "
          "answer;")
    print("  resident / peak: RSS growth over a baseline taken with those inputs in memory (no engine keeps")
    print("  a copy of the texts; ours keeps the chunks by reference to return ids, texts and metadata)")
    print(f"  {TOKENIZERS}")
