"""Telling what a judge said from what it quoted: masks over quoted text, and JSON objects found
in free text. Used by the verdict parsers.

>>> mask_quoted('It says "Score: [[5]]". Score: [[2]]').count("[[")
1
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["mask_quoted", "line_start", "find_json_objects"]

_QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d|```.*?(?:```|\Z)|`[^`\n]*`', re.S)
_BLOCKQUOTE = re.compile(r"^[ \t]*>.*$", re.M)
_TAG_BLOCK = re.compile(r"<([A-Za-z_][\w-]*)(?:\s[^<>]*)?>.*?</\1\s*>", re.S)


def mask_quoted(text: str, *, keep_tags: frozenset[str] = frozenset(), quotes: bool = True) -> str:
    """Blank out (same length, so positions hold) whatever the judge quoted rather than said:
    tag-delimited blocks (but ``keep_tags``), double-quoted spans and code (unless ``quotes`` is
    False: JSON verdicts are full of quotes), and ``>`` block quotes."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    def blank_tag(m: re.Match[str]) -> str:
        return m.group(0) if m.group(1).lower() in keep_tags else blank(m)

    text = _TAG_BLOCK.sub(blank_tag, text)
    if quotes:
        text = _QUOTED.sub(blank, text)
    return _BLOCKQUOTE.sub(blank, text)


def line_start(text: str, pos: int) -> bool:
    """True when only blanks or markdown markers precede ``pos`` on its line."""
    head = text[text.rfind("\n", 0, pos) + 1:pos]
    return head.strip(" \t*_#-") == ""


def find_json_objects(text: str) -> list[tuple[int, int, Any]]:
    """Every top-level JSON object in ``text`` as (start, end, value); braces inside strings ignored."""
    found: list[tuple[int, int, Any]] = []
    i = 0
    decoder = json.JSONDecoder(strict=False)  # a raw newline inside a string does not hide a verdict
    while (start := text.find("{", i)) >= 0:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        if isinstance(value, dict):
            found.append((start, end, value))
        i = end
    return found
