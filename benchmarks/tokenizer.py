"""Analyzer throughput (the Lucene StandardAnalyzer port) on real and synthetic text.

Run:  python benchmarks/tokenizer.py [--synthetic-docs 20000] [--repeat 5]

Corpora: the English texts in the repository (HaluEval passages and QA from tests/data and the
judge audit's data, PandaLM instructions and responses), the multilingual real text of the Lucene
oracle test, and the
synthetic documents of benchmarks/retrieval.py. Beside ours, the ``(?u)\\b\\w\\w+\\b`` pattern that
bm25s tokenizes with (lower-cased first), as a floor for a regex tokenizer that ignores Lucene's
rules. Times are process CPU seconds, best of ``--repeat``; other processes change wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from langrag_eval.retrieval.analysis import analyze

ROOT = Path(__file__).resolve().parents[1]
AUDIT_DATA = ROOT / "langrag_eval" / "audit" / "data"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def real_texts() -> list[str]:
    texts: list[str] = []
    for path in (ROOT / "tests" / "data" / "halueval-qa" / "qa_one-turn_first200.jsonl",
                 AUDIT_DATA / "halueval_qa.jsonl"):
        for row in _jsonl(path):
            texts += [row["knowledge"], row["question"], row["right_answer"], row["hallucinated_answer"]]
    for row in _jsonl(AUDIT_DATA / "pandalm_pairs.jsonl"):
        texts += [str(row.get(k) or "") for k in ("instruction", "input", "response1", "response2")]
    return texts


def throughput(fn: Callable[[str], list[str]], texts: list[str], repeat: int) -> tuple[int, float]:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        tokens = sum(len(fn(t)) for t in texts)
        best = min(best, time.process_time() - start)
    return tokens, best


def main(synthetic_docs: int, repeat: int) -> None:
    from retrieval import synthetic_corpus  # benchmarks/retrieval.py, beside this file

    multilingual = (ROOT / "tests" / "retrieval" / "lucene" / "multilingual.txt").read_text(
        encoding="utf-8").splitlines()
    corpora = {
        "English prose in the repository": real_texts(),
        "multilingual lines x40": multilingual * 40,
        f"synthetic {synthetic_docs} docs": [c.text for c in synthetic_corpus(synthetic_docs)[0]],
    }
    word = re.compile(r"(?u)\b\w\w+\b")
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name, texts in corpora.items():
        if not texts:
            print(f"{name}: not found, skipped")
            continue
        chars = sum(map(len, texts))
        print(f"{name}: {len(texts)} texts, {chars / 1e6:.2f} M characters")
        for label, fn in (("analyze", analyze), ("\\w\\w+ regex", lambda s: word.findall(s.lower()))):
            tokens, seconds = throughput(fn, texts, repeat)
            print(f"  {label:12} {tokens / seconds / 1e6:6.2f} M tokens/s  ({tokens} tokens, {seconds:.3f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic-docs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    main(args.synthetic_docs, args.repeat)
