"""The compact BM25 index under change: after any sequence of additions, replacements and removals
(saved and loaded back, or not) the embedded backend ranks and scores exactly as a backend built
afresh from the chunks that remain, each where it was last indexed; test_bm25_lucene.py checks
such a fresh index, and one after removals, against Lucene itself. Also: the top-k selection
against a full sort, and folders saved in the first on-disk layout (a forward index) still load.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.errors import RetrievalError
from langrag_eval.retrieval import Chunk, EmbeddedBackend
from langrag_eval.retrieval.analysis import analyze
from langrag_eval.retrieval.bm25 import BM25Index, top_k
from langrag_eval.retrieval.maxscore import top_k_essential
from langrag_eval.retrieval.contract import CORPUS

# "—" yields no token: a chunk of dashes only is indexed with length 0, as Lucene would.
WORDS = ["river", "mountain", "capital", "city", "lucene", "the", "of", "café", "don't", "東京",
         "3.14", "—"]
QUERIES = ["river", "mountain river", "the of the", "café capital city", "東京 3.14", "don't lucene",
           "river river mountain", "nothing"]

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join)
batch = st.lists(st.tuples(st.integers(0, 14), texts), min_size=1, max_size=8)
operation = st.one_of(st.tuples(st.just("index"), batch),
                      st.tuples(st.just("delete"), st.lists(st.integers(0, 16), max_size=5)))


def _ranked(backend: EmbeddedBackend, k: int) -> list[list[tuple[str, float]]]:
    return [[(d.id, d.score) for d in backend.search(text=q, k=k)] for q in QUERIES]


@settings(max_examples=60, deadline=None)
@given(operations=st.lists(operation, min_size=1, max_size=8))
def test_changed_index_scores_as_a_fresh_one_on_what_remains(operations):
    with tempfile.TemporaryDirectory() as tmp:
        saved = EmbeddedBackend(Path(tmp) / "idx")
        memory = EmbeddedBackend()
        current: dict[str, Chunk] = {}   # the model: live chunks, in the order last indexed
        for op, args in operations:
            if op == "index":
                chunks = [Chunk(id=f"c{i}", text=text) for i, text in args]
                for backend in (saved, memory):
                    backend.index(chunks)
                for chunk in chunks:   # a repeated id: the last one wins, where it stands last
                    current.pop(chunk.id, None)
                    current[chunk.id] = chunk
            else:
                ids = [f"c{i}" for i in args]
                removed = {i for i in ids if i in current}
                assert saved.delete(ids) == memory.delete(ids) == len(removed)
                for i in removed:
                    del current[i]
        fresh = EmbeddedBackend()
        if current:
            fresh.index(list(current.values()))
        reopened = EmbeddedBackend(Path(tmp) / "idx")
        assert memory.count() == saved.count() == reopened.count() == len(current)
        for k in (3, 50):
            expected = _ranked(fresh, k)
            assert _ranked(memory, k) == expected
            assert _ranked(saved, k) == expected
            assert _ranked(reopened, k) == expected


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from(WORDS[:6]), min_size=0, max_size=6), min_size=320,
                     max_size=900),
       query=st.lists(st.sampled_from(WORDS[:6]), min_size=1, max_size=4), k=st.integers(1, 12))
def test_top_k_equals_a_full_sort(docs, query, k):
    """Many documents with few distinct scores: the top k (pruned by block maxima where there are
    enough rows) are the full sort's, float32 ties to the lower row."""
    index = BM25Index.build([analyze(" ".join(d)) for d in docs])
    tokens = analyze(" ".join(query))
    acc = index.scores(tokens)
    hits = np.flatnonzero(acc)
    scores = acc[hits].astype(np.float32)
    order = np.lexsort((hits, -scores))[:k]
    rows, got = index.search(tokens, k)
    assert rows.tolist() == hits[order].tolist()
    assert got.tolist() == scores[order].tolist()


def _zipf_index(rng: np.random.Generator) -> tuple[BM25Index, list[str], np.ndarray]:
    vocab = [f"w{i}" for i in range(300)]
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    docs = [list(rng.choice(vocab, size=int(rng.integers(1, 40)), p=p))
            for _ in range(int(rng.integers(200, 1500)))]
    return BM25Index.build(docs), vocab, p


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), k=st.integers(1, 20))
def test_search_from_the_rare_terms_postings_equals_the_full_sum(seed, k):
    """Zipf-like documents, short and alike, so many scores tie: a query's common terms hold long
    postings with small scores, and the search sums only the rare terms' postings where the bounds
    allow (MaxScore); the rows and float32 scores are the full sum's top k all the same."""
    rng = np.random.default_rng(seed)
    index, vocab, p = _zipf_index(rng)
    for _ in range(20):
        query = list(rng.choice(vocab, size=int(rng.integers(2, 7)), p=p))
        rows, got = index.search(query, k)
        want_rows, want = top_k(index.scores(query), k)
        assert rows.tolist() == want_rows.tolist() and got.tolist() == want.tolist()


def test_the_rare_terms_path_is_taken(monkeypatch):
    """The test above checks the pruned path: on such a corpus some queries take it."""
    import langrag_eval.retrieval.bm25 as bm25
    taken = []

    def counted(*args):
        taken.append(top_k_essential(*args))
        return taken[-1]

    monkeypatch.setattr(bm25, "top_k_essential", counted)
    index, vocab, p = _zipf_index(np.random.default_rng(3))
    rng = np.random.default_rng(4)
    for _ in range(50):
        index.search(list(rng.choice(vocab, size=4, p=p)), 10)
    assert sum(t is not None for t in taken) >= 5


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n=st.integers(1, 3000), k=st.integers(1, 60))
def test_top_k_keeps_rows_whose_sums_differ_but_round_to_the_same_float(data, n, k):
    """Double sums a hair apart that are one float32 are one score: the lower row wins, even
    when the block maxima that prune the candidates hold the slightly larger sums."""
    levels = np.array(data.draw(st.lists(st.floats(0.5, 4.0, width=32), min_size=1, max_size=4)),
                      dtype=np.float32)
    pick = np.array(data.draw(st.lists(st.integers(-1, len(levels) - 1), min_size=n, max_size=n)))
    jitter = np.array(data.draw(st.lists(st.floats(-0.2, 0.2), min_size=n, max_size=n)))
    ulp = np.spacing(levels).astype(np.float64)
    acc = np.where(pick >= 0, levels[pick].astype(np.float64) + jitter * ulp[pick], 0.0)
    hits = np.flatnonzero(acc)
    scores = acc[hits].astype(np.float32)
    order = np.lexsort((hits, -scores))[:k]
    rows, got = top_k(acc, k)
    assert rows.tolist() == hits[order].tolist()
    assert got.tolist() == scores[order].tolist()


def _write_first_layout(path: Path, chunks: list[Chunk]) -> None:
    """A folder as the first on-disk layout held it: per document, its (term id, tf) entries
    in term order, with term ids given in order of first appearance."""
    vocab: dict[str, int] = {}
    terms, tfs, counts, lengths = [], [], [], []
    for chunk in chunks:
        tokens = analyze(chunk.text)
        tf = Counter(vocab.setdefault(t, len(vocab)) for t in tokens)
        terms += sorted(tf)
        tfs += [tf[t] for t in sorted(tf)]
        counts.append(len(tf))
        lengths.append(len(tokens))
    path.mkdir()
    (path / "chunks.jsonl").write_text("".join(json.dumps(c.model_dump()) + "\n" for c in chunks),
                                       encoding="utf-8")
    np.save(path / "vectors.npy", np.zeros((len(chunks), 0), dtype="<f4"))
    np.save(path / "has_vector.npy", np.zeros(len(chunks), dtype=bool))
    np.savez(path / "postings.npz", terms=np.array(terms, np.int32), tfs=np.array(tfs, np.int32),
             counts=np.array(counts, np.int64), lengths=np.array(lengths, np.int64))
    (path / "vocabulary.json").write_text(json.dumps(list(vocab)), encoding="utf-8")
    (path / "manifest.json").write_text(json.dumps(
        {"format": "langrag-eval-embedded", "version": 1, "space": "cosinesimil", "dimension": None,
         "chunks": len(chunks)}), encoding="utf-8")


def test_a_folder_in_the_first_layout_loads_and_scores_the_same(tmp_path):
    _write_first_layout(tmp_path / "idx", CORPUS)
    old = EmbeddedBackend(tmp_path / "idx")
    fresh = EmbeddedBackend()
    fresh.index(CORPUS)
    queries = ["capital river", "zebra", "Roma", "the city of light"]
    for q in queries:
        assert [(d.id, d.score) for d in old.search(text=q, k=10)] == [
            (d.id, d.score) for d in fresh.search(text=q, k=10)]
    old.delete([CORPUS[0].id])   # saved again, in the current layout
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["version"] == 2
    fresh.delete([CORPUS[0].id])
    again = EmbeddedBackend(tmp_path / "idx")
    for q in queries:
        assert [(d.id, d.score) for d in again.search(text=q, k=10)] == [
            (d.id, d.score) for d in fresh.search(text=q, k=10)]


def test_postings_that_do_not_match_the_chunks_are_refused(tmp_path):
    backend = EmbeddedBackend(tmp_path / "idx")
    backend.index(CORPUS)
    saved = dict(np.load(tmp_path / "idx" / "postings.npz"))
    saved["lengths"] = saved["lengths"][:-1]
    np.savez(tmp_path / "idx" / "postings.npz", **saved)
    with pytest.raises(RetrievalError, match="damaged.*postings.npz does not match chunks.jsonl"):
        EmbeddedBackend(tmp_path / "idx")
