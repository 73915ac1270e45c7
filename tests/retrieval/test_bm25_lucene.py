"""The embedded BM25 against real Lucene (BM25Similarity + StandardAnalyzer, no stop words).

A small Java program (tests/retrieval/lucene/BM25Oracle.java) is compiled against the Lucene 8 jars
of Debian's liblucene8-java and indexes the same corpus; rankings must be identical and scores
within 1e-5 relative. Skipped only when javac or the jars are missing.
"""

from __future__ import annotations

import glob
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from langrag_eval.retrieval import Chunk, EmbeddedBackend
from langrag_eval.retrieval.analysis import analyze

JAVA_DIR = Path(os.environ.get("LUCENE_JAVA_DIR", "/usr/share/java"))
SOURCE = Path(__file__).parent / "lucene" / "BM25Oracle.java"


def _jar(stem: str) -> str | None:
    plain = JAVA_DIR / f"{stem}.jar"
    if plain.exists():
        return str(plain)
    versioned = sorted(glob.glob(str(JAVA_DIR / f"{stem}-[0-9]*.jar")))
    return versioned[-1] if versioned else None


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    jars = [_jar("lucene-core"), _jar("lucene-analyzers-common")]
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac/java not found: install openjdk-17-jdk-headless to run the Lucene oracle")
    if None in jars:
        pytest.skip(f"Lucene jars not found in {JAVA_DIR}: install liblucene8-java")
    out = tmp_path_factory.mktemp("lucene")
    classpath = os.pathsep.join([str(out), *jars])
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(SOURCE)], check=True,
                   capture_output=True, timeout=120)

    def run(*args: str) -> list[str]:
        done = subprocess.run(["java", "-cp", classpath, "BM25Oracle", *args], check=True,
                              capture_output=True, timeout=120)
        return done.stdout.decode("utf-8").splitlines()

    return run, out


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


WORDS = ["the", "of", "and", "a", "to", "in", "is", "was", "for", "on", "retrieval", "ranking", "fusion", "query", "document", "passage", "answer", "judge", "model", "score", "lucene", "search", "index", "vector", "token", "length", "average", "capital", "city", "river", "mountain", "café", "naïve", "façade", "Straße", "Müller", "Größe", "déjà-vu", "résumé", "Москва", "Санкт-Петербург", "ΟΔΟΣ", "Ἀθῆναι", "İstanbul", "Łódź", "Ærøskøbing", "東京", "日本語", "한국어", "ไทย", "e-mail", "U.S.A.", "3.14", "1,000", "don't", "O'Neil", "x.org", "user@example.com", "2024", "covid-19", "c++", "n't", "v1.2.3"]
TRICKY = [
    "Don't panic: the U.S.A. has 3.14 ÉTÉS and 1,000,000 people!",
    "E-mail user@example.com or visit https://www.example.com/path?x=1&y=2 today.",
    "ΟΔΟΣ ΣΟΦΙΑΣ in İstanbul; Ærøskøbing and Łódź, déjà-vu façade.",
    "東京都に住んでいます。日本語のテキスト、カタカナ、한국어 텍스트 สวัสดีครับ ภาษาไทย",
    "Emoji 🙂 👍🏽 🇫🇷 ❤️ © 2024 ™ co-operate $5.00 50% 3:45pm a_b __init__ foo.bar_baz",
]


def _corpus(seed: int = 7) -> tuple[list[Chunk], list[str]]:
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
               "e-mail user@example.com", "lucene vector search index", "déjà-vu", "🙂", "o'neil covid-19"]
    for _ in range(30):
        queries.append(" ".join(rng.choices(WORDS, k=rng.randrange(1, 6))))
    return chunks, queries


def test_analyzer_matches_standard_analyzer(oracle, tmp_path):
    run, _ = oracle
    chunks, queries = _corpus()
    texts = [c.text for c in chunks] + queries
    (tmp_path / "texts.txt").write_text("".join(_escape(t) + "\n" for t in texts), encoding="utf-8")
    lucene = [line.split("\t") if line else [] for line in run("analyze", str(tmp_path / "texts.txt"))]
    assert len(lucene) == len(texts)
    mismatches = [(t, analyze(t), tokens) for t, tokens in zip(texts, lucene) if analyze(t) != tokens]
    assert not mismatches, mismatches[:3]


def test_bm25_rankings_and_scores_match_lucene(oracle, tmp_path):
    run, _ = oracle
    chunks, queries = _corpus()
    (tmp_path / "docs.tsv").write_text("".join(f"{c.id}\t{_escape(c.text)}\n" for c in chunks),
                                       encoding="utf-8")
    (tmp_path / "queries.txt").write_text("".join(_escape(q) + "\n" for q in queries), encoding="utf-8")
    expected: dict[int, list[tuple[str, float]]] = {}
    for line in run("search", str(tmp_path / "docs.tsv"), str(tmp_path / "queries.txt"), "20"):
        q, doc_id, score = line.split("\t")
        expected.setdefault(int(q), []).append((doc_id, float(score)))

    backend = EmbeddedBackend()
    assert backend.index(chunks).indexed == len(chunks)
    assert sum(len(analyze(c.text)) > 250 for c in chunks) >= 10  # long documents are exercised
    checked = 0
    for qi, query in enumerate(queries):
        ours = backend.search(text=query, k=20)
        theirs = expected.get(qi, [])
        assert [d.id for d in ours] == [d for d, _ in theirs], f"ranking differs for {query!r}"
        for doc, (_, score) in zip(ours, theirs):
            assert doc.score == pytest.approx(score, rel=1e-5), (query, doc.id)
            checked += 1
    assert checked > 300
    ties = [d.id for d in backend.search(text="river mountain", k=50) if d.id.startswith("dup")]
    assert ties == ["dup-a", "dup-b"]
