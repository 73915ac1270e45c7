"""Text analysis as Lucene's ``StandardAnalyzer`` without stop words, and Lucene's one-byte length norm.

OpenSearch scores a ``text`` field with the standard analyzer: Lucene's ``StandardTokenizer`` (UAX #29
word boundaries as Lucene 8's grammar draws them, see :mod:`.standard_tokenizer`) and a per-code-point
lower case. A regex ``\\w+`` split differs from it on roughly one English paragraph in five (hyphens,
apostrophes, decimals, URLs, ``²``), enough to change BM25 rankings.

Lucene stores each document's token count in one byte (``SmallFloat.intToByte4``): exact below 24,
then four significant bits, so a 300-token document is scored as if it had 280 tokens.

>>> analyze("Don't panic: the U.S.A. has 3.14 ÉTÉS! E=mc²")
["don't", 'panic', 'the', 'u.s.a', 'has', '3.14', 'étés', 'e', 'mc']
>>> [byte4_to_int(int_to_byte4(n)) for n in (7, 24, 100, 300)]
[7, 24, 96, 280]
"""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from .standard_tokenizer import BUFFER_UNITS, tokenize

__all__ = ["LENGTH_TABLE", "MAX_TOKEN_LENGTH", "analyze", "byte4_to_int", "encode_lengths",
           "int_to_byte4"]

MAX_TOKEN_LENGTH = BUFFER_UNITS  # StandardAnalyzer's default maxTokenLength, in UTF-16 units


def analyze(text: str) -> list[str]:
    """Tokens of ``text`` as OpenSearch's ``standard`` analyzer (no stop words) produces them."""
    return tokenize(text)


def _long_to_int4(i: int) -> int:
    num_bits = i.bit_length()
    if num_bits < 4:
        return i  # subnormal: small values are exact
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07  # keep the 3 bits after the implicit leading one
    return encoded | ((shift + 1) << 3)


def _int4_to_long(i: int) -> int:
    bits, shift = i & 0x07, (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_NUM_FREE_VALUES = 255 - _long_to_int4(2**31 - 1)  # 24: lengths below this are stored exactly


def int_to_byte4(i: int) -> int:
    """Lucene ``SmallFloat.intToByte4``: a document length to its one-byte norm (0..255)."""
    if i < 0:
        raise ArgumentError(f"length must be non-negative, got {i}")
    if i < _NUM_FREE_VALUES:
        return i
    return _NUM_FREE_VALUES + _long_to_int4(i - _NUM_FREE_VALUES)


def byte4_to_int(b: int) -> int:
    """Lucene ``SmallFloat.byte4ToInt``: the length a one-byte norm stands for."""
    if b < _NUM_FREE_VALUES:
        return b
    return _NUM_FREE_VALUES + _int4_to_long(b - _NUM_FREE_VALUES)


LENGTH_TABLE = np.array([byte4_to_int(b) for b in range(256)], dtype=np.float32)
_BYTE_OF_LENGTH_CUTS = np.array([byte4_to_int(b) for b in range(256)], dtype=np.int64)


def encode_lengths(lengths: np.ndarray) -> np.ndarray:
    """Vectorised :func:`int_to_byte4` (the table is monotone, so a search gives the byte)."""
    return (np.searchsorted(_BYTE_OF_LENGTH_CUTS, np.asarray(lengths, dtype=np.int64), side="right")
            - 1).astype(np.uint8)

