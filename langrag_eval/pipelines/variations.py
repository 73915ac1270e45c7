"""Reading the query variations a model wrote for RAG-Fusion.

Models number their lines, add bullets, quote the queries, open with "Here are four queries:" or
repeat the user's question; :func:`parse_variations` keeps only the distinct new queries.

>>> parse_variations('Here are 2 queries:\\n1. "MEMS microphone IP rating"\\n2) waterproof mic IP57\\n'
...                  '3. What is the IP rating?', original="What is the IP rating?", n=4)
['MEMS microphone IP rating', 'waterproof mic IP57']
"""

from __future__ import annotations

import re

__all__ = ["parse_variations"]

# Leading list markers: bullets, "1.", "1)", "(1)", "#", "Query 2:", "Variation 3 -", "**1.**".
_MARKER = re.compile(
    r"^(?:[-*\u2022\u2023\u25e6+>#]+(?=\s|$)\s*"
    r"|\(?\d{1,2}[.):\]][*_]*(?=\s|$)\s*"
    r"|(?:search\s+)?(?:query|variation|question)\s*\d{1,2}\s*[:.)\-\u2013][*_]*(?=\s|$)\s*)+",
    re.IGNORECASE)
_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
_SPACE = re.compile(r"\s+")


def _normalise(text: str) -> str:
    """The comparison key: case, spacing and closing punctuation do not make a query new."""
    return _SPACE.sub(" ", text).strip().rstrip("?.!;:").strip().casefold()


def _clean(line: str) -> str:
    line = line.strip().strip("*").strip()
    previous = None
    while previous != line:  # markers and quotes can nest: '1. "**query**"'
        previous = line
        line = _MARKER.sub("", line, count=1).strip()
        line = line.strip("*").strip()
        if len(line) >= 2 and line[0] in _QUOTES and line[-1] in _QUOTES:
            line = line[1:-1].strip()
    return _SPACE.sub(" ", line)


def parse_variations(text: str, *, original: str, n: int) -> list[str]:
    """The first ``n`` distinct query variations in a model's reply, one per line.

    Numbering and bullets are stripped; blank lines, lines without a letter or digit, code fences, a preamble line ending in a colon,
    duplicates and copies of ``original`` are dropped (compared without case, extra spaces or
    closing punctuation).

    >>> parse_variations("- a\\n- A?\\n\\n- b\\n- c", original="c", n=5)
    ['a', 'b']
    """
    seen = {_normalise(original)}
    out: list[str] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("```"):
            continue
        # A line that introduces the list ("Here are four queries:") is not a query itself.
        if stripped.rstrip("*_ ").endswith(":") and not _MARKER.match(stripped):
            continue
        query = _clean(stripped)
        key = _normalise(query)
        if not any(ch.isalnum() for ch in key) or key in seen:
            continue
        seen.add(key)
        out.append(query)
        if len(out) == n:
            break
    return out
