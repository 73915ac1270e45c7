"""Embedded retrieval speed on synthetic data: BM25 build and query latency, exact KNN, RRF fusion.

Run:  python benchmarks/retrieval.py [--docs 100000] [--queries 300] [--dim 384] [--knn-only]
                                     [--knn-sizes 10000,100000,300000] [--no-peers]
                                     [--rank-bm25-queries 50] [--repeats 3]

Documents are 30-200 words drawn from a Zipf-like 30,000-word vocabulary (seeded), so common words
have long posting lists as in real text; vectors are random unit vectors. Latencies are wall-clock
per query through ``EmbeddedBackend.asearch`` (the same path a Retriever takes, minus embedding).
Then KNN memory against the vectors' bytes and batched KNN for 100 queries, beside numpy and
faiss-flat measured in the same run (see benchmarks/retrieval_knn.py), and batched KNN at each of
``--knn-sizes`` documents; ``--knn-only`` runs just those.
BM25 alone beside bm25s and rank-bm25, each engine built in a fresh process from the same corpus
file: build time, resident memory and query latency (see benchmarks/retrieval_bm25.py; the peers
run from their own virtual environment, made on first use; ``--no-peers`` skips this).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import string
import time

import numpy as np

from langrag_eval.retrieval import Chunk, EmbeddedBackend, HybridSettings
from langrag_eval.retrieval.fusion import rrf

from retrieval_bm25 import bm25_peers, bm25_report
from retrieval_knn import knn_batched, knn_memory, knn_single, knn_sizes, unit_vectors


def synthetic_corpus(n_docs: int, seed: int = 0) -> tuple[list[Chunk], list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    letters = np.array(list(string.ascii_lowercase))
    vocab = ["".join(rng.choice(letters, size=rng.integers(3, 10))) for _ in range(30_000)]
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    p /= p.sum()
    lengths = rng.integers(30, 201, size=n_docs)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    chunks, at = [], 0
    for i, n in enumerate(lengths):
        text = " ".join(vocab[w] for w in words[at:at + n]).capitalize() + "."
        chunks.append(Chunk(id=f"doc-{i}", text=text, metadata={"n": int(n)}))
        at += n
    queries = [" ".join(vocab[w] for w in rng.choice(len(vocab), size=rng.integers(2, 7), p=p))
               for _ in range(1000)]
    return chunks, queries, p


def latency(samples: list[tuple[float, float]]) -> str:
    """Wall-clock p50 / p95, and the process CPU time p50 / p95 (all threads), in milliseconds."""
    wall = np.array([w for w, _ in samples]) * 1000
    cpu = np.array([c for _, c in samples]) * 1000
    return (f"{np.percentile(wall, 50):.2f} / {np.percentile(wall, 95):.2f} ms"
            f"   (CPU {np.percentile(cpu, 50):.2f} / {np.percentile(cpu, 95):.2f} ms)")


async def timed(fn, inputs) -> list[tuple[float, float]]:
    out = []
    for x in inputs:
        start, cpu = time.perf_counter(), time.process_time()
        await fn(x)
        out.append((time.perf_counter() - start, time.process_time() - cpu))
    return out


def knn_report(n_docs: int, dim: int, backend: EmbeddedBackend | None = None,
               vectors: np.ndarray | None = None) -> None:
    """KNN resident / peak memory and batched search, beside numpy and faiss-flat."""
    load_start = os.getloadavg()[0]
    if backend is None or vectors is None:
        vectors = unit_vectors(n_docs, dim)
        backend = EmbeddedBackend()
        backend.index([Chunk(id=f"d{i}", text=f"document {i}") for i in range(n_docs)], vectors)
    batched = knn_batched(backend, vectors)
    single = knn_single(backend, vectors)
    memory = knn_memory(n_docs, dim)
    print(f"KNN at {n_docs:,} x {dim} float32 ({n_docs * dim * 4 / 2 ** 20:.0f} MiB of vectors; "
          f"{os.cpu_count()} CPUs, 1-min load average {load_start:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end)")
    print(f"  {'':<12} {'resident':>14} {'peak':>14} {'100 queries':>12} {'vs numpy':>9}")
    for name, row in memory.items():
        t = batched.get(name)
        ms = "" if t is None else f"{t * 1000:.1f} ms"
        ratio = "" if t is None else f"{t / batched['numpy']:.2f}x"
        print(f"  {name:<12} {row['resident_mib']:>6.0f} MiB {row['resident_x']:>4.2f}x "
              f"{row['peak_mib']:>6.0f} MiB {row['peak_x']:>4.2f}x {ms:>12} {ratio:>9}")
    print(f"  one query through the sync search(): {single['ours']:.2f} ms median "
          f"(numpy X @ q + argpartition: {single['numpy']:.2f} ms, {single['ours'] / single['numpy']:.2f}x)")
    print(f"  targets: KNN resident <= 1.2x the vectors' bytes: "
          f"{'met' if memory['ours']['resident_x'] <= 1.2 else 'NOT met'}; batched KNN <= 1.0x numpy: "
          f"{'met' if batched['ours'] <= batched['numpy'] else 'NOT met'}")


async def main(n_docs: int, n_queries: int, dim: int, peers: bool = True,
               rank_bm25_queries: int = 50, repeats: int = 3, sizes: list[int] | None = None) -> None:
    # Other processes on a small machine change every figure: record the load next to them.
    load_start = os.getloadavg()[0]
    t = time.perf_counter()
    chunks, queries, _ = synthetic_corpus(n_docs)
    gen_s = time.perf_counter() - t
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((n_docs, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    backend = EmbeddedBackend()

    t = time.perf_counter()
    await backend.aindex(chunks, vectors)
    ingest_s = time.perf_counter() - t
    t = time.perf_counter()
    backend._compile()  # the postings are built lazily on the first search
    compile_s = time.perf_counter() - t

    qs = queries[:n_queries]
    qv = rng.standard_normal((n_queries, dim)).astype(np.float32)
    await backend.asearch(text=qs[0], k=10)  # warm-up
    bm25 = await timed(lambda q: backend.asearch(text=q, k=10), qs)
    knn = await timed(lambda v: backend.asearch(vector=v, mode="knn", k=10), qv)
    hybrid = await timed(lambda i: backend.asearch(text=qs[i], vector=qv[i], mode="hybrid", k=10,
                                                   hybrid=HybridSettings(depth=50)), range(n_queries))
    lists = [([d.id for d in await backend.asearch(text=qs[i], k=50)],
              [d.id for d in await backend.asearch(vector=qv[i], mode="knn", k=50)]) for i in range(50)]
    start = time.perf_counter()
    for _ in range(20):
        for a, b in lists:
            rrf([a, b])
    fusion_us = (time.perf_counter() - start) / (20 * len(lists)) * 1e6

    rows = [
        ("corpus", (f"{n_docs:,} docs, {sum(c.metadata['n'] for c in chunks) / n_docs:.0f} words avg, "
                    f"{dim}-d vectors (generated in {gen_s:.1f} s)")),
        ("ingest (tokenize + vectors)", f"{ingest_s:.1f} s  ({n_docs / ingest_s:,.0f} docs/s)"),
        ("compile (postings)", f"{compile_s:.2f} s"),
        ("BM25 build total", f"{ingest_s + compile_s:.1f} s"),
        ("BM25 query p50 / p95", latency(bm25)),
        ("exact KNN query p50 / p95", latency(knn)),
        ("hybrid RRF (depth 50) p50 / p95", latency(hybrid)),
        ("RRF fusion of 2 x 50 ids", f"{fusion_us:.0f} us per query"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"embedded retrieval benchmark ({n_queries} queries each; {os.cpu_count()} CPUs, "
          f"1-min load average {load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end)")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    knn_report(n_docs, dim, backend, vectors)
    del backend, vectors   # the next contenders need the memory more than this process
    if sizes:
        knn_sizes(sizes, dim)
    if peers:
        bm25_report(bm25_peers(chunks, queries, n_queries, rank_bm25_queries, repeats), n_docs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--knn-only", action="store_true", help="only the KNN memory and batch figures")
    parser.add_argument("--no-peers", action="store_true", help="skip BM25 beside bm25s and rank-bm25")
    parser.add_argument("--rank-bm25-queries", type=int, default=50,
                        help="queries for rank-bm25, which scores every document per term (default 50)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="interleaved turns each BM25 engine takes beside the peers (default 3)")
    parser.add_argument("--knn-sizes", default="10000,100000,300000",
                        help="corpus sizes for batched KNN beside numpy, comma-separated ('' skips)")
    args = parser.parse_args()
    knn_at = [int(x) for x in args.knn_sizes.split(",") if x.strip()]
    if args.knn_only:
        knn_report(args.docs, args.dim)
        knn_sizes(knn_at, args.dim)
    else:
        asyncio.run(main(args.docs, args.queries, args.dim, not args.no_peers, args.rank_bm25_queries,
                         args.repeats, knn_at))
