"""Tokenizer details and Lucene's one-byte length encoding (values computed from SmallFloat)."""

from __future__ import annotations

import numpy as np
import pytest

from langrag_eval.retrieval.analysis import analyze, byte4_to_int, encode_lengths, int_to_byte4


@pytest.mark.parametrize("text,tokens", [
    ("Hello, World!", ["hello", "world"]),
    ("don't stop", ["don't", "stop"]),
    ("pi is 3.14, not 3,14", ["pi", "is", "3.14", "not", "3,14"]),
    ("co-operate e-mail", ["co", "operate", "e", "mail"]),
    ("ΟΔΟΣ", ["οδοσ"]),  # per-code-point lower case, no final sigma
    ("İstanbul", ["istanbul"]),
    ("東京", ["東", "京"]),
    ("สวัสดีครับ", ["สวัสดีครับ"]),
    ("a 🙂 b", ["a", "🙂", "b"]),
    ("--- ... !!!", []),
])
def test_standard_analyzer_cases(text, tokens):
    assert analyze(text) == tokens


def test_overlong_tokens_are_cut_at_255():
    assert [len(t) for t in analyze("x" * 600)] == [255, 255, 90]


def test_small_lengths_are_exact_and_large_ones_rounded_down():
    assert [byte4_to_int(int_to_byte4(n)) for n in range(25)] == list(range(25))
    # 24 + (bits | 8) << shift: the four significant bits of (n - 24), rounded down.
    assert byte4_to_int(int_to_byte4(100)) == 96
    assert byte4_to_int(int_to_byte4(300)) == 280
    assert byte4_to_int(int_to_byte4(1000)) == 984  # 976 = 0b1111010000 -> 0b1111 << 6 = 960
    assert int_to_byte4(2**31 - 1) == 255


def test_encoding_is_monotone_and_vectorised_form_agrees():
    lengths = np.arange(0, 5000)
    encoded = encode_lengths(lengths)
    assert encoded.tolist() == [int_to_byte4(int(n)) for n in lengths]
    decoded = [byte4_to_int(int(b)) for b in encoded]
    assert all(d <= n for d, n in zip(decoded, lengths)) and decoded == sorted(decoded)
