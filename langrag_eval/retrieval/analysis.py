"""Text analysis as Lucene's ``StandardAnalyzer`` without stop words, and Lucene's one-byte length norm.

OpenSearch scores a ``text`` field with the standard analyzer: Unicode word segmentation (UAX #29),
tokens kept when they hold a letter or a digit or are emoji, lower-cased code point by code point, tokens longer
than 255 characters cut into pieces. Runs of Thai, Lao, Khmer and Myanmar letters, which UAX #29
leaves unsegmented, stay one token as in Lucene. A regex ``\\w+`` split differs from this on roughly
one English paragraph in five (hyphens, apostrophes, decimals, URLs), enough to change BM25 rankings.

Lucene stores each document's token count in one byte (``SmallFloat.intToByte4``): exact below 24,
then four significant bits, so a 300-token document is scored as if it had 280 tokens.

>>> analyze("Don't panic: the U.S.A. has 3.14 ÉTÉS!")
["don't", 'panic', 'the', 'u.s.a', 'has', '3.14', 'étés']
>>> [byte4_to_int(int_to_byte4(n)) for n in (7, 24, 100, 300)]
[7, 24, 96, 280]
"""

from __future__ import annotations

import numpy as np
import regex

__all__ = ["LENGTH_TABLE", "MAX_TOKEN_LENGTH", "analyze", "byte4_to_int", "int_to_byte4"]

MAX_TOKEN_LENGTH = 255

# (?w): word boundaries per Unicode UAX #29 instead of the \w/\W transitions; V1 allows zero-width splits.
_BOUNDARY = regex.compile(r"(?V1w)\b")
# A segment is a token when it holds a letter or a digit, or is an emoji (Lucene 7+ emits those too).
_KEEP = regex.compile(r"[\p{L}\p{N}\p{Extended_Pictographic}\p{Regional_Indicator}\u20e3]")
# Scripts Lucene's grammar emits as one token per run (UAX #29 "complex context", Line_Break=SA).
_COMPLEX = regex.compile(r"^[\p{Line_Break=Complex_Context}]+$")
_ANY_COMPLEX = regex.compile(r"[\p{Line_Break=Complex_Context}]")
# Characters whose lower case differs between Python's full mapping (context-aware, may expand) and
# Java's per-code-point Character.toLowerCase, which Lucene's LowerCaseFilter uses.
_SPECIAL_LOWER = {"\u03a3": "\u03c3", "\u0130": "i"}


def _lower(token: str) -> str:
    if "\u03a3" in token or "\u0130" in token:
        return "".join(_SPECIAL_LOWER.get(ch, ch.lower()) for ch in token)
    return token.lower()


def _split_long(token: str) -> list[str]:
    if len(token) <= MAX_TOKEN_LENGTH:
        return [token]
    return [token[i:i + MAX_TOKEN_LENGTH] for i in range(0, len(token), MAX_TOKEN_LENGTH)]


def analyze(text: str) -> list[str]:
    """Tokens of ``text`` as OpenSearch's ``standard`` analyzer (no stop words) produces them."""
    segments = _BOUNDARY.split(text)
    if not _ANY_COMPLEX.search(text):
        # Fast path for the usual case: isalnum() and isspace() settle most segments without a regex.
        kept = [s for s in segments if s and (s.isalnum() or (not s.isspace() and _KEEP.search(s)))]
        if "\u03a3" in text or "\u0130" in text:
            tokens = [_lower(s) for s in kept]
        else:
            tokens = [s.lower() for s in kept]
        if any(len(t) > MAX_TOKEN_LENGTH for t in tokens):
            tokens = [piece for t in tokens for piece in _split_long(t)]
        return tokens
    tokens: list[str] = []
    run = ""  # a pending run of complex-context letters, joined into one token
    for segment in segments:
        if segment and _COMPLEX.match(segment):
            run += segment
            continue
        if run:
            tokens.extend(_split_long(_lower(run)))
            run = ""
        if _KEEP.search(segment):
            tokens.extend(_split_long(_lower(segment)))
    if run:
        tokens.extend(_split_long(_lower(run)))
    return tokens


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
        raise ValueError(f"length must be non-negative, got {i}")
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


__all__ += ["encode_lengths"]
