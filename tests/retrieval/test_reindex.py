"""Re-indexing a changed corpus into the same index: an edited document's old chunks are removed
(they used to stay and outrank the new text), a vanished document is removed with ``prune``, and
the report counts chunks added, unchanged and removed. On the embedded backend and, over real HTTP,
on osmem-server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from langrag_eval.retrieval import EmbeddedBackend, ingest
from langrag_eval.retrieval.chunking import Source
from langrag_eval.retrieval.ingest import source_of


@pytest.fixture(params=["embedded", "embedded-saved", "opensearch"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    if request.param == "opensearch":
        from langrag_eval.retrieval.opensearch import OpenSearchBackend
        b = OpenSearchBackend(request.getfixturevalue("osmem_url"), index="reindex")
        yield b
        b.close()
    else:
        yield EmbeddedBackend(tmp_path / "idx" if request.param == "embedded-saved" else None)


def _ids(hits: list) -> list[str]:
    return [h.id for h in hits]


def test_edited_document_replaces_its_chunks(backend, tmp_path: Path) -> None:
    first = [Source(id="bikes.md", text="Bikes in the city are painted red. " * 5),
             Source(id="trains.md", text="Trains leave every ten minutes from the central station.")]
    r1 = ingest(backend, first, vectors=False, size=80, overlap=20)
    assert (r1.added, r1.unchanged, r1.removed) == (r1.indexed, 0, 0)
    before = backend.count()
    edited = [Source(id="bikes.md", text="Bikes in the city are now painted blue."), first[1]]
    r2 = ingest(backend, edited, vectors=False, size=80, overlap=20)
    assert r2.unchanged == 1 and r2.added == 1 and r2.removed == before - 1
    assert backend.count() == 2
    hits = backend.search(text="red", mode="bm25", k=5)
    assert hits == []                                   # the old text is gone, not just outranked
    assert _ids(backend.search(text="blue", mode="bm25", k=5))[0].startswith("bikes.md#")
    if isinstance(backend, EmbeddedBackend) and backend.path is not None:
        assert EmbeddedBackend(backend.path).count() == 2   # and it stays gone once saved


def test_vanished_document_is_removed_only_with_prune(backend) -> None:
    corpus = [Source(id="a.txt", text="alpha text"), Source(id="b.txt", text="beta text")]
    ingest(backend, corpus, vectors=False)
    kept = ingest(backend, corpus[:1], vectors=False)
    assert kept.removed == 0 and backend.count() == 2   # indexing one document leaves the others
    pruned = ingest(backend, corpus[:1], vectors=False, prune=True)
    assert pruned.removed == 1 and backend.count() == 1
    assert _ids(backend.search(text="beta", mode="bm25", k=5)) == []


def test_chunks_indexed_as_they_are_are_never_pruned(backend) -> None:
    from langrag_eval.retrieval.base import Chunk
    ingest(backend, [Chunk(id="hand-made", text="kept as it is")], vectors=False)
    ingest(backend, [Source(id="doc", text="other text")], vectors=False, prune=True)
    assert "hand-made" in _ids(backend.search(text="kept", mode="bm25", k=5))


@pytest.mark.parametrize("source", ["plain", "with#hash", "dir/file.md", "ünï #1"])
def test_source_of_inverts_chunk_ids(source: str) -> None:
    from langrag_eval.retrieval.chunking import chunk_sources
    chunks = chunk_sources([Source(id=source, text="word " * 400)], size=100, overlap=10)
    assert {source_of(c.id) for c in chunks} == {source}
