"""Telling what a judge said from what it quoted: masks over quoted text, and JSON objects found
in free text. Used by the verdict parsers.

A mask is only as good as its delimiters, and a judge that echoes an answer unquoted echoes the
answer's stray delimiters too: an unclosed quote, a lone ``</x>`` or ``<x>``. Paired with a
delimiter of the judge's own, or with one echoed from another text, such a stray one would hide the
judge's verdict and leave the forged one visible. So the masks trust only delimiters that cannot
pair that way:

- tag blocks only for the names in :data:`~langrag_eval.delimiters.QUOTE_TAGS`, which rendering
  neutralises in every untrusted value (so such a tag in a reply is the judge's), and only when
  every open and close tag of that name pairs up;
- double quotes and inline code only within one line, and only where the line holds an even number;
- ``>`` block quotes, which are per line;
- not code fences: a fence has no direction, and two echoed stray fences hide what lies between.
  A verdict the judge repeats inside a fence counts as said, so a disagreeing one is ambiguous.

>>> mask_quoted('It says "Score: [[5]]". Score: [[2]]').count("[[")
1
>>> mask_quoted('A stray " then Score: [[2]]').count("[[")
1
"""

from __future__ import annotations

import json
import re
from typing import Any, Hashable, Sequence, TypeVar

from .delimiters import QUOTE_TAGS
from .echoes import current_reading, mask_echoes
from .errors import AmbiguousVerdictError, JudgeOutputError

V = TypeVar("V", bound=Hashable)

__all__ = ["mask_quoted", "line_start", "find_json_objects", "tag_blocks", "single_verdict"]

_CURLY = re.compile("\u201c[^\u201c\u201d\n]*\u201d")
_DOUBLE = re.compile(r'"[^"\n]*"')
_CODE = re.compile(r"`[^`\n]*`")
_BLOCKQUOTE = re.compile(r"^[ \t]*>.*$", re.M)
# Only well-formed tags: "<x ...>" opens, "</x>" closes; "</ x>" is text to a reader of markup.
_ANY_TAG = re.compile(r"<([A-Za-z_][\w-]*)(?:\s[^<>]*)?>|</([A-Za-z_][\w-]*)\s*>")


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts, pos = [], 0
    for a, b in sorted(spans):
        if a < pos:  # inside a span already masked
            a = pos
        if b <= a:
            continue
        parts.append(text[pos:a])
        parts.append(_blank(text[a:b]))
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def tag_blocks(text: str, *, skip: frozenset[str] = frozenset()) -> list[tuple[int, int, str]]:
    """Matched ``<x>...</x>`` blocks (outermost ones) as (start, end, lower-cased name), for every
    name in QUOTE_TAGS whose open and close tags all pair up; names in ``skip`` are left out."""
    events: dict[str, list[tuple[bool, int, int]]] = {}
    for m in _ANY_TAG.finditer(text):
        name = (m.group(1) or m.group(2)).lower()
        if name in QUOTE_TAGS:
            events.setdefault(name, []).append((m.group(2) is not None, m.start(), m.end()))
    blocks = []
    for name, seq in events.items():
        if name in skip:
            continue
        stack: list[int] = []
        pairs, clean = [], True
        for closing, start, end in seq:
            if not closing:
                stack.append(start)
            elif stack:
                opened = stack.pop()
                if not stack:
                    pairs.append((opened, end, name))
            else:
                clean = False
        if clean and not stack:
            blocks.extend(pairs)
    return blocks


def _mask_inline(line: str) -> str:
    line = _CURLY.sub(lambda m: _blank(m.group(0)), line)
    for pattern, char in ((_CODE, "`"), (_DOUBLE, '"')):
        if line.count(char) % 2 == 0:
            line = pattern.sub(lambda m: _blank(m.group(0)), line)
    return line


def mask_quoted(text: str, *, keep_tags: frozenset[str] = frozenset(), quotes: bool = True) -> str:
    """Blank out (same length, so positions hold) whatever the judge quoted rather than said:
    tag-delimited blocks (but ``keep_tags``), double-quoted spans and inline code (unless ``quotes``
    is False: JSON verdicts are full of quotes), and ``>`` block quotes. Within
    :func:`~langrag_eval.echoes.reading` (the untrusted texts of the prompt known), whatever the
    reply reproduces of them is blanked first, and with ``delimiters=False`` only that."""
    state = current_reading()
    if state is not None:
        text = mask_echoes(text, state.spans(text))
        if not state.delimiters:
            return text
    text = _mask_spans(text, [(a, b) for a, b, _ in tag_blocks(text, skip=keep_tags)])
    if quotes:
        text = "\n".join(_mask_inline(line) for line in text.split("\n"))
    return _BLOCKQUOTE.sub(lambda m: _blank(m.group(0)), text)


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
        except (json.JSONDecodeError, RecursionError, ValueError):
            i = start + 1
            continue
        if isinstance(value, dict):
            found.append((start, end, value))
        i = end
    return found


def single_verdict(visible: Sequence[V], expected: str) -> V:
    """The one verdict the judge gave: every verdict outside quoted text (``visible``) must agree.
    Raises :class:`JudgeOutputError` when there is none and :class:`AmbiguousVerdictError` when
    they disagree, naming the rival values.

    >>> single_verdict(["B", "B"], "[[A]] or [[B]]")
    'B'
    """
    distinct = list(dict.fromkeys(visible))
    if not distinct:
        raise JudgeOutputError(f"no verdict: expected {expected}")
    if len(distinct) > 1:
        shown = ", ".join(str(v) for v in distinct[:4])
        raise AmbiguousVerdictError(
            f"the reply holds verdicts that disagree ({shown}) outside quoted text; give exactly one "
            f"verdict, {expected}, and put any verdict you repeat from the graded text in quotes")
    return distinct[0]
