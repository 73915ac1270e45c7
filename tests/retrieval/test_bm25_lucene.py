"""The embedded BM25 against real Lucene (BM25Similarity + StandardAnalyzer, no stop words).

tests/retrieval/lucene/BM25Oracle.java, compiled against Debian's liblucene8-java, indexes the same
corpus and runs each query as OpenSearch's match query does (a disjunction of its terms). Rankings
must be identical and every score the same single-precision float, bit for bit (the issue's bar is
1e-6 relative; equality is what the arithmetic gives). Skipped only when javac or the jars are missing.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from langrag_eval.retrieval import Chunk, EmbeddedBackend
from langrag_eval.retrieval.analysis import analyze

MULTILINGUAL = Path(__file__).parent / "lucene" / "multilingual.txt"

WORDS = ["the", "of", "and", "a", "to", "in", "is", "was", "for", "on", "retrieval", "ranking", "fusion", "query", "document", "passage", "answer", "judge", "model", "score", "lucene", "search", "index", "vector", "token", "length", "average", "capital", "city", "river", "mountain", "café", "naïve", "façade", "Straße", "Müller", "Größe", "déjà-vu", "résumé", "Москва", "Санкт-Петербург", "ΟΔΟΣ", "Ἀθῆναι", "İstanbul", "Łódź", "Ærøskøbing", "東京", "日本語", "한국어", "ไทย", "e-mail", "U.S.A.", "3.14", "1,000", "don't", "O'Neil", "x.org", "user@example.com", "2024", "covid-19", "c++", "n't", "v1.2.3"]
TRICKY = [
    "Don't panic: the U.S.A. has 3.14 ÉTÉS and 1,000,000 people!",
    "E-mail user@example.com or visit https://www.example.com/path?x=1&y=2 today.",
    "ΟΔΟΣ ΣΟΦΙΑΣ in İstanbul; Ærøskøbing and Łódź, déjà-vu façade.",
    "東京都に住んでいます。日本語のテキスト、カタカナ、한국어 텍스트 สวัสดีครับ ภาษาไทย",
    "Emoji 🙂 👍🏽 🇫🇷 ❤️ © 2024 ™ co-operate $5.00 50% 3:45pm a_b __init__ foo.bar_baz",
    "E=mc² and footnotes¹ ² change nothing: Lucene drops superscripts.",
]


def _compare(lucene, chunks: list[Chunk], queries: list[str], k: int,
             backend: EmbeddedBackend | None = None) -> int:
    """Search every query both ways (Lucene indexing ``chunks`` in order, ours in ``backend`` or a
    fresh backend holding them); returns the number of (rank, score) pairs checked."""
    expected = lucene.search([(c.id, c.text) for c in chunks], queries, k)
    if backend is None:
        backend = EmbeddedBackend()
        assert backend.index(chunks).indexed == len(chunks)
    checked = 0
    for qi, query in enumerate(queries):
        ours = backend.search(text=query, k=k) if analyze(query) else []
        theirs = expected.get(qi, [])
        assert [d.id for d in ours] == [d for d, _ in theirs], f"ranking differs for {query!r}"
        for doc, (_, score) in zip(ours, theirs):
            assert np.float32(doc.score) == score, (query, doc.id, doc.score, float(score))
            assert doc.score == pytest.approx(float(score), rel=1e-6)
            checked += 1
    return checked


def _small_corpus(seed: int = 7) -> tuple[list[Chunk], list[str]]:
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(WORDS))]  # Zipf-like: common and rare terms
    chunks = [Chunk(id=f"t{i}", text=t) for i, t in enumerate(TRICKY)]
    lengths = [3, 5, 8, 12, 20, 30, 31, 45, 60, 90, 128, 150, 200, 256, 300, 333, 400]
    for i in range(120):
        n = lengths[i % len(lengths)] + rng.randrange(0, 7)
        words = rng.choices(WORDS, weights=weights, k=n)
        sentences = [" ".join(words[j:j + 11]).capitalize() + "." for j in range(0, n, 11)]
        chunks.append(Chunk(id=f"d{i}", text="\n".join(sentences)))
    chunks.append(Chunk(id="dup-a", text="river mountain river"))
    chunks.append(Chunk(id="dup-b", text="river mountain river"))  # an exact tie: lower doc first
    queries = ["river", "Retrieval ranking", "café Straße", "москва", "東京", "ไทย", "don't panic",
               "the the the", "u.s.a 3.14", "mountain river capital", "nothing-matches-this",
               "e-mail user@example.com", "lucene vector search index", "déjà-vu", "🙂", "o'neil covid-19",
               "mc² superscripts"]
    for _ in range(30):
        queries.append(" ".join(rng.choices(WORDS, k=rng.randrange(1, 6))))
    return chunks, queries


def test_bm25_rankings_and_scores_match_lucene(lucene):
    chunks, queries = _small_corpus()
    assert sum(len(analyze(c.text)) > 250 for c in chunks) >= 10  # long documents are exercised
    assert _compare(lucene, chunks, queries, k=20) > 300
    backend = EmbeddedBackend()
    backend.index(chunks)
    ties = [d.id for d in backend.search(text="river mountain", k=50) if d.id.startswith("dup")]
    assert ties == ["dup-a", "dup-b"]


def test_bm25_after_replacements_and_removals_matches_lucene(lucene):
    """Indexed in batches, some chunks replaced and some removed: the scores are those of Lucene
    indexing only the chunks that remain, a replaced chunk where it was last indexed."""
    chunks, queries = _small_corpus(seed=8)
    backend = EmbeddedBackend()
    for start in range(0, len(chunks), 40):
        backend.index(chunks[start:start + 40])
    rng = random.Random(3)
    gone = {c.id for c in rng.sample(chunks, 25)}
    assert backend.delete(sorted(gone)) == len(gone)
    kept = [c for c in chunks if c.id not in gone]
    moved = rng.sample(kept, 10)
    replaced = [Chunk(id=c.id, text=rng.choice(chunks).text) for c in moved]
    backend.index(replaced)
    by_id = {c.id: c for c in replaced}
    remaining = [c for c in kept if c.id not in by_id] + replaced
    assert backend.count() == len(remaining)
    assert _compare(lucene, remaining, queries, k=20, backend=backend) > 200


def _multilingual_corpus(n_docs: int, seed: int = 11) -> tuple[list[Chunk], list[str]]:
    """Documents drawn Zipf-like from the words of real text in 50 languages and scripts (with its
    punctuation, numbers, URLs and emoji), lengths from 1 to 600 words."""
    lines = MULTILINGUAL.read_text(encoding="utf-8").splitlines()
    words = [w for line in lines for w in line.split()] + WORDS
    rng = random.Random(seed)
    rng.shuffle(words)
    weights = [1.0 / (i + 1) ** 0.9 for i in range(len(words))]
    chunks = []
    for i in range(n_docs):
        n = int(rng.paretovariate(1.5) * 40) % 600 + 1
        text = " ".join(rng.choices(words, weights=weights, k=n))
        if rng.random() < 0.05:
            text += "\n" + rng.choice(lines)
        chunks.append(Chunk(id=f"m{i}", text=text))
    queries = [" ".join(rng.choices(words, weights=weights, k=rng.randrange(1, 5))) for _ in range(200)]
    queries += [" ".join(rng.sample(words, rng.randrange(1, 4))) for _ in range(150)]  # rare terms
    queries += rng.sample(lines, 20)  # whole sentences: many terms at once
    return chunks, queries


@pytest.mark.slow
def test_bm25_10k_multilingual_documents_match_lucene(lucene):
    chunks, queries = _multilingual_corpus(10_000)
    assert _compare(lucene, chunks, queries, k=10) > 3000
