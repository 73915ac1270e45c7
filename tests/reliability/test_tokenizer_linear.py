"""The tokenizer is linear in its input whatever the token lengths, and still the scanner it copies.

A text of one enormous token used to cost a match over the rest of the token for every 255-unit
piece cut from it (1 MB took 23 s, a 50 MB query never finished). The reference below is that
earlier algorithm, unbounded and quadratic, whose output the Lucene oracle tests (tests/retrieval)
pin down; hypothesis texts with long runs of every kind of character must tokenize the same.
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.retrieval import standard_tokenizer as tk


def _reference_spans(text: str, roles: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos, size = 0, len(roles)
    while (match := tk._TOKEN.search(roles, pos)) is not None:
        start, end = match.span()
        if roles[start] == tk._AMBIGUOUS:
            end = tk._longest(roles, start, size)
        if end - start > tk._LONG:
            limit = tk._utf16_end(text, start, tk.BUFFER_UNITS)
            if limit < end:
                end = tk._longest(roles, start, limit)
                if end == start:
                    pos = start + 1
                    continue
        spans.append((start, end))
        pos = end
    return spans


# runs of letters, digits, astral letters, emoji, joiners, the letter-emoji, punctuation and spaces
_PIECES = st.sampled_from(["x", "é", "1", "𝒜", "🙂", "\u200d", "\u2139", "'", ".", " ", "ﾀ", "中", "ก", "\u0301"])
_RUNS = st.lists(st.tuples(_PIECES, st.integers(1, 700)), min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(_RUNS)
def test_long_runs_tokenize_as_the_unbounded_scanner_does(runs: list[tuple[str, int]]) -> None:
    text = "".join(piece * count for piece, count in runs)
    roles = tk._roles_of(text)
    assert tk._spans(text, roles) == _reference_spans(text, roles)


def _seconds(text: str) -> float:
    """CPU seconds this thread spent tokenizing: what other processes on the machine take of the
    cores does not count, so the ratio below measures the algorithm, not the machine's load."""
    start = time.thread_time()
    tk.tokenize(text)
    return time.thread_time() - start


def test_one_enormous_token_takes_linear_time() -> None:
    tokens = tk.tokenize("é" * 1_000_000)
    assert [len(t) for t in tokens[:2]] == [255, 255] and sum(map(len, tokens)) == 1_000_000
    small, large = _seconds("x" * 250_000 + "é"), _seconds("x" * 2_000_000 + "é")
    assert large < 20 * max(small, 0.01)  # 8 times the text: about 8 times the time, not 64
    assert large < 30
