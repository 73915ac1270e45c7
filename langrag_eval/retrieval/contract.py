"""The contract every :class:`~.base.SearchBackend` must pass, shipped as pytest test classes.

Subclass the classes that apply and provide a ``backend`` fixture returning a fresh, empty backend
(vectors of :attr:`dimension` dimensions, cosinesimil space where the backend has a choice):

- :class:`BM25Contract`: text search, ingestion and errors. Asserts rankings only on clear-cut
  queries, never exact scores, so any BM25 implementation (or a text-only test server) can run it.
- :class:`KnnContract`: vector search: exact-vector hits, recall@10 against brute force, score range.
- :class:`HybridContract`: hybrid search equals client-side fusion of the backend's own sub-results.
- :class:`BackendContract`: all three.

Tests run each scenario in one event loop through the async API, and need no pytest plugin.

>>> import pytest
>>> from langrag_eval.retrieval import EmbeddedBackend
>>> class TestEmbedded(BackendContract):
...     @pytest.fixture
...     def backend(self):
...         return EmbeddedBackend()
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import pytest

from ..errors import RetrievalError
from .base import Chunk, HybridSettings, SearchBackend, run_sync
from .fusion import combine_normalized, rrf

__all__ = ["CORPUS", "BM25Contract", "BackendContract", "HybridContract", "KnnContract", "corpus_vectors"]

CORPUS: list[Chunk] = [
    Chunk(id="paris", text="Paris is the capital of France and sits on the river Seine.",
          metadata={"lang": "en", "topic": "geo"}),
    Chunk(id="berlin", text="Berlin is the capital of Germany; the river Spree flows through it.",
          metadata={"lang": "en", "topic": "geo"}),
    Chunk(id="rome", text="Rome, the capital of Italy, was founded on seven hills by the Tiber.",
          metadata={"lang": "en", "topic": "geo"}),
    Chunk(id="moscow", text="Москва — столица России. Moscow lies on the Moskva river.",
          metadata={"lang": "ru", "topic": "geo"}),
    Chunk(id="bm25", text="BM25 ranks documents by term frequency, inverse document frequency and "
                          "document length normalisation.", metadata={"topic": "ir"}),
    Chunk(id="rrf", text="Reciprocal rank fusion adds one over sixty plus the rank of each document "
                         "across several ranked lists.", metadata={"topic": "ir"}),
    Chunk(id="knn", text="Dense retrieval embeds queries and passages as vectors and returns the "
                         "nearest neighbours by cosine similarity.", metadata={"topic": "ir"}),
    Chunk(id="cafe", text="Le café crème du matin à Montréal coûte trois dollars.",
          metadata={"lang": "fr"}),
    Chunk(id="zebra", text="Zebras zebra zebra: the striped zebra of the savannah.",
          metadata={"topic": "animals"}),
    Chunk(id="zebra-short", text="A zebra.", metadata={"topic": "animals"}),
    Chunk(id="tokyo", text="東京は日本の首都です。 Tokyo is the capital of Japan.",
          metadata={"lang": "ja", "topic": "geo"}),
    Chunk(id="long", text=" ".join(["Filler words about nothing in particular."] * 40 + ["zebra"]),
          metadata={"topic": "filler"}),
]


def corpus_vectors(dimension: int = 8, seed: int = 3) -> np.ndarray:
    """One seeded random unit vector per :data:`CORPUS` chunk (float32)."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((len(CORPUS), dimension)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return run_sync(scenario())


def _ids(docs: list) -> list[str]:
    return [d.id for d in docs]


class _Base:
    dimension = 8

    @pytest.fixture
    def backend(self) -> SearchBackend:  # pragma: no cover - every subclass provides its own
        raise NotImplementedError("define a `backend` fixture returning a fresh, empty backend")


class BM25Contract(_Base):
    """Text search, ingestion and input errors (no vectors involved)."""

    def test_index_reports_and_counts(self, backend):
        async def scenario():
            report = await backend.aindex(CORPUS)
            assert report.indexed == len(CORPUS) and report.failed == []
            assert await backend.acount() == len(CORPUS)
        _run(scenario)

    def test_unique_term_ranks_its_document_first(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            for query, expected in [("Seine", "paris"), ("Spree", "berlin"), ("Tiber hills", "rome"),
                                    ("reciprocal fusion", "rrf"), ("neighbours cosine", "knn")]:
                hits = await backend.asearch(text=query, mode="bm25", k=3)
                assert hits and hits[0].id == expected, (query, _ids(hits))
        _run(scenario)

    def test_document_fields_round_trip(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            hit = (await backend.asearch(text="Seine", k=1))[0]
            source = next(c for c in CORPUS if c.id == "paris")
            assert (hit.id, hit.text, hit.metadata) == (source.id, source.text, source.metadata)
            assert hit.score is not None and hit.score > 0
        _run(scenario)

    def test_k_limits_and_scores_descend(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            hits = await backend.asearch(text="the capital of the river", k=4)
            assert len(hits) == 4 and len(set(_ids(hits))) == 4
            scores = [h.score for h in hits]
            assert scores == sorted(scores, reverse=True)
            assert len(await backend.asearch(text="capital", k=1)) == 1
        _run(scenario)

    def test_term_frequency_and_length_matter(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            hits = _ids(await backend.asearch(text="zebra", k=5))
            assert set(hits) == {"zebra", "zebra-short", "long"}
            assert hits.index("long") == 2  # one occurrence in 300 tokens ranks last
        _run(scenario)

    def test_case_and_non_ascii(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            assert (await backend.asearch(text="МОСКВА", k=1))[0].id == "moscow"
            assert (await backend.asearch(text="Café Montréal", k=1))[0].id == "cafe"
            assert (await backend.asearch(text="東京", k=1))[0].id == "tokyo"
        _run(scenario)

    def test_no_match_is_empty(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            assert await backend.asearch(text="xylophone quasar", k=5) == []
        _run(scenario)

    def test_empty_query_is_an_error(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            for text in ("", "   "):
                with pytest.raises(RetrievalError, match="empty query"):
                    await backend.asearch(text=text, mode="bm25")
        _run(scenario)

    def test_chunk_without_text_is_reported_and_others_indexed(self, backend):
        async def scenario():
            chunks = [CORPUS[0], Chunk(id="blank", text="  "), CORPUS[1]]
            report = await backend.aindex(chunks)
            assert report.indexed == 2
            assert [fid for fid, _ in report.failed] == ["blank"]
            assert "text" in report.failed[0][1]
            assert await backend.acount() == 2
            assert (await backend.asearch(text="Spree", k=1))[0].id == "berlin"
        _run(scenario)

    def test_reindexing_an_id_replaces_it(self, backend):
        async def scenario():
            await backend.aindex(CORPUS)
            await backend.aindex([Chunk(id="paris", text="Lutetia was the Roman town.")])
            assert await backend.acount() == len(CORPUS)
            assert (await backend.asearch(text="Lutetia", k=1))[0].id == "paris"
            assert "paris" not in _ids(await backend.asearch(text="Seine", k=5))
        _run(scenario)

    def test_sync_wrappers_agree(self, backend):
        report = backend.index(CORPUS)
        assert report.indexed == len(CORPUS) and backend.count() == len(CORPUS)
        assert _ids(backend.search(text="capital river", k=5)) == _ids(
            run_sync(backend.asearch(text="capital river", k=5)))


class KnnContract(_Base):
    """Vector search over :func:`corpus_vectors`."""

    def test_exact_vector_is_found_first(self, backend):
        vectors = corpus_vectors(self.dimension)

        async def scenario():
            await backend.aindex(CORPUS, vectors)
            for i in (0, 4, 9):
                hits = await backend.asearch(vector=vectors[i].tolist(), mode="knn", k=3)
                assert hits[0].id == CORPUS[i].id
                assert hits[0].score == pytest.approx(1.0, abs=1e-3)  # cosinesimil: (1 + 1) / 2
                assert all(0.0 <= h.score <= 1.0 + 1e-6 for h in hits)
        _run(scenario)

    def test_recall_against_brute_force(self, backend):
        vectors = corpus_vectors(self.dimension)
        rng = np.random.default_rng(11)
        queries = rng.standard_normal((20, self.dimension)).astype(np.float32)

        async def scenario():
            await backend.aindex(CORPUS, vectors)
            found = total = 0
            for q in queries:
                cos = vectors @ (q / np.linalg.norm(q))
                truth = {CORPUS[i].id for i in np.argsort(-cos)[:10]}
                hits = await backend.asearch(vector=q.tolist(), mode="knn", k=10)
                found += len(truth & set(_ids(hits)))
                total += len(truth)
            assert found / total >= 0.95
        _run(scenario)

    def test_dimension_mismatch_is_an_error(self, backend):
        vectors = corpus_vectors(self.dimension)

        async def scenario():
            await backend.aindex(CORPUS, vectors)
            with pytest.raises(RetrievalError, match="dimension"):
                await backend.asearch(vector=[0.1] * (self.dimension + 1), mode="knn", k=3)
            with pytest.raises(RetrievalError, match="dimension"):
                await backend.aindex([Chunk(id="x", text="x")], np.ones((1, self.dimension + 2), np.float32))
        _run(scenario)

    def test_knn_without_vector_is_an_error(self, backend):
        async def scenario():
            await backend.aindex(CORPUS, corpus_vectors(self.dimension))
            with pytest.raises(RetrievalError, match="vector"):
                await backend.asearch(text="capital", mode="knn", k=3)
        _run(scenario)


class HybridContract(_Base):
    """Hybrid search equals client-side fusion over the backend's own BM25 and KNN sub-results."""

    fusions: tuple[str, ...] = ("rrf", "normalization")
    query = "capital river zebra"

    def _vector(self) -> list[float]:
        return corpus_vectors(self.dimension)[2].tolist()

    def test_hybrid_equals_fusion_of_sub_results(self, backend):
        async def scenario():
            await backend.aindex(CORPUS, corpus_vectors(self.dimension))
            for fusion in self.fusions:
                settings = HybridSettings(fusion=fusion, depth=6, weights=(0.4, 0.6))  # type: ignore[arg-type]
                lexical = await backend.asearch(text=self.query, mode="bm25", k=settings.depth)
                dense = await backend.asearch(vector=self._vector(), mode="knn", k=settings.depth)
                hits = await backend.asearch(text=self.query, vector=self._vector(), mode="hybrid",
                                             k=5, hybrid=settings)
                if fusion == "normalization":
                    expected = combine_normalized([[(d.id, d.score) for d in lexical],
                                                   [(d.id, d.score) for d in dense]], weights=settings.weights)
                else:
                    expected = rrf([_ids(lexical), _ids(dense)], k=settings.rank_constant,
                                   weights=settings.weights)
                assert _ids(hits) == [d for d, _ in expected[:5]], fusion
                assert [h.score for h in hits] == pytest.approx([s for _, s in expected[:5]], rel=1e-4)
        _run(scenario)

    def test_hybrid_needs_text_and_vector(self, backend):
        async def scenario():
            await backend.aindex(CORPUS, corpus_vectors(self.dimension))
            with pytest.raises(RetrievalError, match="vector"):
                await backend.asearch(text=self.query, mode="hybrid", k=3)
            with pytest.raises(RetrievalError, match="empty query"):
                await backend.asearch(text=" ", vector=self._vector(), mode="hybrid", k=3)
        _run(scenario)


class BackendContract(BM25Contract, KnnContract, HybridContract):
    """The whole contract: BM25, KNN and hybrid."""
