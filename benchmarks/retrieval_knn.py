"""KNN memory and batched KNN beside numpy and faiss-flat, for benchmarks/retrieval.py.

Memory: each contender runs in a fresh process (so peaks are its own): the corpus's chunks exist
first (short texts, so the BM25 side stays small), then random unit vectors are drawn, indexed,
searched once, and the caller's matrix is dropped. "Resident" is the process's RSS growth from
before the vectors were drawn to after they were dropped; "peak" is its high-water mark over the
same baseline; both as multiples of the vectors' bytes. numpy's contender is the matrix itself;
faiss-flat copies it into an ``IndexFlatIP``. For the embedded backend the same run without
vectors is subtracted, leaving what the KNN side costs.

Batched KNN: 100 query vectors, k 10, against the same unit vectors: ``search_many`` on the
embedded backend (where the backend has it; else one ``search`` per query), numpy's
``Q @ X.T`` + ``argpartition`` + sort of the k, and faiss ``IndexFlatIP.search``. The contenders
take turns, repeat after repeat, each turn after a short pause (see ``_SETTLE``), and each keeps its
median.

Batched KNN by corpus size (:func:`knn_sizes`): the same batch of 100 queries at each size (10k,
100k and 300k by default), a fresh backend and vector set per size, turns taken as above.

Single queries: the sync ``search`` (knn, k 10) one query at a time, beside numpy's ``X @ q`` +
``argpartition`` + sort: median milliseconds over 200 queries, turns taken as above.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from langrag_eval.retrieval import Chunk, EmbeddedBackend

__all__ = ["knn_batched", "knn_memory", "knn_single", "knn_sizes", "unit_vectors"]

# Seconds between two contenders' turns: faiss's OpenMP threads (and OpenBLAS's) keep spinning for a
# while after a call returns, and on a small machine that spinning was billed to whichever contender
# ran next (ours, right after faiss-flat: 10k documents measured 1.15x numpy with no pause, 0.85x
# with faiss left out of the turns). After a pause every turn starts on idle cores.
_SETTLE = 0.05


def unit_vectors(n: int, dim: int, seed: int = 1) -> np.ndarray:
    """Random unit vectors, float32, drawn without a float64 intermediate."""
    v = np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def _status() -> dict[str, float]:
    out = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


def _one(contender: str, n: int, dim: int) -> dict[str, float]:
    chunks = [Chunk(id=f"d{i}", text=f"document {i}") for i in range(n)]
    query = unit_vectors(1, dim, seed=9)[0]
    gc.collect()
    base = _status()["VmRSS"]
    keep: Any
    if contender == "bm25 only":   # the same backend without vectors: subtracted from ours
        keep = EmbeddedBackend()
        keep.index(chunks)
        keep.search(text="document", k=10)
    else:
        vectors = unit_vectors(n, dim)
        if contender == "numpy":
            keep = vectors
            np.argpartition(-(vectors @ query), 10)[:10]
        elif contender == "faiss-flat":
            import faiss
            keep = faiss.IndexFlatIP(dim)
            keep.add(vectors)
            keep.search(query[None, :], 10)
        else:
            keep = EmbeddedBackend()
            keep.index(chunks, vectors)
            keep.search(vector=query, mode="knn", k=10)
        del vectors
    gc.collect()
    now = _status()
    return {"resident_mib": now["VmRSS"] - base, "peak_mib": now["VmHWM"] - base}


def knn_memory(n: int, dim: int) -> dict[str, dict[str, float]]:
    """Resident and peak memory per contender, in MiB and as multiples of the vectors' bytes."""
    contenders = ["ours", "bm25 only", "numpy"]
    try:
        import faiss  # noqa: F401
        contenders.append("faiss-flat")
    except ImportError:
        pass
    out = {}
    for name in contenders:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            out[name] = pool.submit(_one, name, n, dim).result()
    text = out.pop("bm25 only")
    out["ours"] = {key: out["ours"][key] - text[key] for key in out["ours"]}
    vector_mib = n * dim * 4 / 2 ** 20
    for row in out.values():
        row["resident_x"] = row["resident_mib"] / vector_mib
        row["peak_x"] = row["peak_mib"] / vector_mib
    return out


def knn_batched(backend: EmbeddedBackend, vectors: np.ndarray, n_queries: int = 100, k: int = 10,
                repeats: int = 7) -> dict[str, float]:
    """Median seconds per batch of ``n_queries`` for each contender (see the module docstring)."""
    queries = unit_vectors(n_queries, vectors.shape[1], seed=5)
    many = getattr(backend, "search_many", None)

    def ours() -> object:
        if many is not None:
            return many(vectors=queries, mode="knn", k=k)
        return [backend.search(vector=q, mode="knn", k=k) for q in queries]

    def numpy_batched() -> object:
        sims = queries @ vectors.T
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        return np.take_along_axis(top, order, axis=1)

    contenders = {"ours": ours, "numpy": numpy_batched}
    try:
        import faiss
        flat = faiss.IndexFlatIP(vectors.shape[1])
        flat.add(vectors)
        contenders["faiss-flat"] = lambda: flat.search(queries, k)
    except ImportError:
        pass
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():
        fn()   # warm-up
    for _ in range(repeats):
        for name, fn in contenders.items():
            time.sleep(_SETTLE)
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def knn_single(backend: EmbeddedBackend, vectors: np.ndarray, n_queries: int = 200, k: int = 10
               ) -> dict[str, float]:
    """Median milliseconds of one sync KNN search, ours and numpy's."""
    queries = unit_vectors(n_queries, vectors.shape[1], seed=6)

    def numpy_single(q: np.ndarray) -> object:
        sims = vectors @ q
        top = np.argpartition(-sims, k)[:k]
        return top[np.argsort(-sims[top])]

    contenders = {"ours": lambda q: backend.search(vector=q, mode="knn", k=k), "numpy": numpy_single}
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for q in queries:
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn(q)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


def knn_sizes(sizes: list[int], dim: int, repeats: int = 7) -> None:
    """Print batched KNN (100 queries, k 10) beside numpy and faiss-flat at each corpus size."""
    print(f"batched KNN by corpus size: 100 queries, k 10, {dim}-d float32 unit vectors, {repeats} "
          f"interleaved turns each, median ({os.cpu_count()} CPUs)")
    print(f"  {'documents':>10} {'ours':>10} {'numpy':>10} {'faiss-flat':>11} {'ours/numpy':>11} "
          f"{'load (1, 5, 15 min)':>21}")
    met = []
    for n in sizes:
        vectors = unit_vectors(n, dim)
        backend = EmbeddedBackend()
        backend.index([Chunk(id=f"d{i}", text=f"document {i}") for i in range(n)], vectors)
        t = knn_batched(backend, vectors, repeats=repeats)
        del backend, vectors
        gc.collect()
        ratio = t["ours"] / t["numpy"]
        met.append(ratio <= 1.0)
        faiss_ms = f"{t['faiss-flat'] * 1000:.1f} ms" if "faiss-flat" in t else "-"
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"  {n:>10,} {t['ours'] * 1000:>7.1f} ms {t['numpy'] * 1000:>7.1f} ms {faiss_ms:>11} "
              f"{ratio:>10.2f}x {load:>21}", flush=True)
    print(f"  target: batched KNN <= 1.0x numpy at every size: {'met' if all(met) else 'NOT met'}")
