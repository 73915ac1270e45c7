"""Telling what a judge said from what it quoted: masks over quoted text, and JSON objects found
in free text. Used by the verdict parsers.

A mask is only as good as its delimiters, and a judge that echoes an answer unquoted echoes the
answer's stray delimiters too: an unclosed quote, a lone ``</x>`` or ``<x>``. Paired with a
delimiter of the judge's own, or with one echoed from another text, such a stray one would hide the
judge's verdict and leave the forged one visible. So the masks trust only delimiters that cannot
pair that way:

- tag blocks only for the names in :data:`~langrag_eval.prompting.delimiters.QUOTE_TAGS`, which rendering
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
from typing import Any, Callable, Hashable, Sequence, TypeVar

from .delimiters import QUOTE_TAGS
from .echoes import Untrusted, current_reading, echoed_tokens, mask_echoes, reading
from ..errors import AmbiguousVerdictError, JudgeOutputError

V = TypeVar("V", bound=Hashable)
T = TypeVar("T")

__all__ = ["read_verdict", "mask_quoted", "line_start", "find_json_objects", "own_json_objects", "tag_blocks",
           "single_verdict", "loads_strict", "repeated_keys", "keys_in_spans"]

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
    :func:`~langrag_eval.prompting.echoes.reading` (the untrusted texts of the prompt known), whatever the
    reply reproduces of them is blanked first, and with ``delimiters=False`` only that."""
    state = current_reading()
    if state is not None:
        text = mask_echoes(text, state.spans(text))
        if not state.delimiters:
            return _unquote(text, keep_tags, quotes)
    text = _mask_spans(text, [(a, b) for a, b, _ in tag_blocks(text, skip=keep_tags)])
    if quotes:
        text = "\n".join(_mask_inline(line) for line in text.split("\n"))
    return _BLOCKQUOTE.sub(lambda m: _blank(m.group(0)), text)


_QUOTE_MARKS = re.compile("[\"`\u201c\u201d]")
_BLOCKQUOTE_MARK = re.compile(r"^([ \t]*)>", re.M)


def _unquote(text: str, keep_tags: frozenset[str], quotes: bool) -> str:
    """``text`` read as if the judge had said what it quoted: the marks of its quotes (tags of
    QUOTE_TAGS but ``keep_tags``, quote marks, ``>`` markers) blanked, their content left, so a
    verdict the judge wrote inside ``<grade>`` or quotes reads as it would on a line of its own."""
    marks = [(m.start(), m.end()) for m in _ANY_TAG.finditer(text)
             if (m.group(1) or m.group(2)).lower() in QUOTE_TAGS - keep_tags]
    if quotes:
        marks += [(m.start(), m.end()) for m in _QUOTE_MARKS.finditer(text)]
    marks += [(m.end() - 1, m.end()) for m in _BLOCKQUOTE_MARK.finditer(text)]
    return _mask_spans(text, marks)


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


# The readings of a reply, as (echoes set aside, the judge's quotes set aside), most set aside first.
_READINGS = ((True, True), (True, False), (False, True), (False, False))
_NAMES = {(True, True): "with echoes and quoted text set aside", (True, False): "with echoes set aside",
          (False, True): "with quoted text set aside", (False, False): "as written"}


def read_verdict(fmt: Any, text: str, untrusted: Untrusted | Sequence[str] | None,
                 parse: Callable[[str], T] | None = None) -> T:
    """``fmt.parse(text)`` (or ``parse(text)``) read every way the reply can be attributed.

    Neither an echo (a stretch that reproduces ``untrusted``, decoded or not) nor a quote of the
    judge's (quotes, tag blocks, block quotes) settles who wrote what: an answer can hold the very
    words the judge will use for its verdict, so the judge's own line reads as an echo, and a judge
    writes its own verdict inside ``<grade>`` or quotes. So the reply is read four ways: with echoes
    and quotes set aside, with echoes only, with quotes only, and as written. The verdict is that of
    the first of the two readings that set echoes aside to find one; a verdict only the readings that
    keep echoes find is a copy of the graded text, not the judge's. When every reading agrees, that
    is the verdict. When one disagrees, the verdict holds only if no verdict in its reading can be a
    copy of the graded text (none stands there, decoded or not): otherwise which one is the judge's
    cannot be told, and the reply is ambiguous, naming the readings that disagree."""
    parse = parse or fmt.parse
    known = untrusted if isinstance(untrusted, Untrusted) else Untrusted(tuple(untrusted or ()))
    if not known.texts:
        with reading(None):
            return parse(text)
    with reading(known):
        state = current_reading()
        echoless = state is None or not state.spans(text)
        if echoless and _QUOTING.search(text) is None:
            # nothing echoed and nothing quoted (most replies): the four readings see one text
            return parse(text)
    return _read_every_way(fmt, text, known, parse, echoless=echoless)


# Every mask a reading applies needs one of these: a tag, a quote mark, a block quote's marker.
_QUOTING = re.compile("[<>\"`\u201c\u201d]")


def _read_every_way(fmt: Any, text: str, known: Untrusted, parse: Callable[[str], T], *,
                    echoless: bool = False) -> T:
    """:func:`read_verdict`'s four readings, compared. ``echoless``: the reply reproduces nothing of
    ``known``, so setting echoes aside changes nothing and each reading that keeps them is the one
    that sets them aside."""
    outcomes: dict[tuple[bool, bool], Any] = {}
    for echoes, quotes in _READINGS:
        if echoless and not echoes:
            outcomes[echoes, quotes] = outcomes[True, quotes]
            continue
        with reading(None if quotes and not echoes else known, delimiters=quotes, echoes=echoes):
            try:
                outcomes[echoes, quotes] = (parse(text),)
            except JudgeOutputError as exc:
                outcomes[echoes, quotes] = exc
    first = outcomes[True, True]
    if isinstance(first, AmbiguousVerdictError):
        raise first
    chosen = (True, True) if isinstance(first, tuple) else (True, False)
    verdict = outcomes[chosen]
    if not isinstance(verdict, tuple):
        raise verdict if isinstance(verdict, AmbiguousVerdictError) else first
    # a reading that sets the judge's quotes aside and finds no verdict at all does not disagree: the
    # judge wrote its verdict inside a quote of its own (``<grade>``, quotes)
    disagree = [key for key, o in outcomes.items() if key != chosen and (
        o[0] != verdict[0] if isinstance(o, tuple) else isinstance(o, AmbiguousVerdictError) or not key[1])]
    if not disagree:
        return verdict[0]  # type: ignore[no-any-return]
    # a reading disagrees: the verdict holds only if nothing in its own reading can be a copy of the
    # graded text (a short token, or the judge's very words planted there, cannot be told from one)
    with reading(known, delimiters=chosen[1]):
        view = mask_quoted(text, keep_tags=frozenset({"output", str(getattr(fmt, "tag", "output"))}))
    suspects = echoed_tokens(view, known)
    if suspects:
        others = "; ".join(f"{_NAMES[key]}: {_outcome(outcomes[key])}" for key in disagree)
        raise AmbiguousVerdictError(
            f"the readings of the reply disagree ({_NAMES[chosen]}: {_outcome(verdict)}; {others}), and "
            f"{suspects[0][:60]!r} also stands in the graded text, so which verdict is the judge's cannot "
            f"be told; give exactly one verdict, {getattr(fmt, 'instructions', 'in the format asked for')}, "
            "in your own words, and put any verdict you repeat from the graded text in quotes")
    return verdict[0]  # type: ignore[no-any-return]


def _outcome(outcome: Any) -> str:
    if isinstance(outcome, tuple):
        value = outcome[0]
        return repr(getattr(value, "score", value))[:40]
    return "ambiguous" if isinstance(outcome, AmbiguousVerdictError) else "no verdict"


def own_json_objects(text: str, instructions: str) -> list[tuple[int, int, Any]]:
    """The JSON objects of ``text`` the judge wrote itself, as (start, end, value). Objects inside
    ``>`` block quotes or tag blocks (but ``<output>``, where some prompts ask for the verdict) are
    quotes, and within a :func:`~langrag_eval.prompting.echoes.reading` objects wholly inside an echo are the
    graded text's. Raises :class:`AmbiguousVerdictError` when an object of the judge's repeats a key
    or reproduces a key with its value from the graded text (a reason string that breaks out)."""
    objects = find_json_objects(text)
    if not objects:
        raise JudgeOutputError("no JSON object in the reply")
    state = current_reading()
    spans = state.spans(text) if state is not None else []
    masked = text
    if state is None or state.delimiters:
        with reading(None):  # the judge's delimiters only: echoes are told by whole objects below
            masked = mask_quoted(text, quotes=False, keep_tags=frozenset({"output"}))
    # an object that merely shares a prefix with an echo ('{"reason": "') is the judge's
    own = [o for o in objects if masked[o[0]] == "{" and not any(s <= o[0] and o[1] <= e for s, e in spans)]
    if not own:
        raise JudgeOutputError("every JSON object in the reply is quoted; expected the judge's own")
    for start, end, _ in own:
        planted = keys_in_spans(text, start, end, spans)
        repeated = repeated_keys(text[start:end])
        if planted or repeated:
            why = (f"the key {planted[0]!r} lies in text reproduced from the graded material" if planted
                   else f"the key {repeated[0]!r} is repeated")
            raise AmbiguousVerdictError(f"JSON verdict: {why}; which value is the judge's cannot be "
                                        f"told; give {instructions}, each key once")
    return own


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


def repeated_keys(text: str) -> list[str]:
    """The keys that an object in the JSON ``text`` repeats (nested objects included)."""
    repeated: list[str] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                repeated.append(key)
            out[key] = value
        return out

    try:
        json.loads(text, object_pairs_hook=hook, strict=False)
    except (ValueError, RecursionError):
        return []
    return repeated


def loads_strict(text: str) -> Any:
    """``json.loads`` for a verdict: raw newlines in strings allowed, a repeated key refused as
    ambiguous (which of its values the judge meant cannot be told)."""
    value = json.loads(text, strict=False)
    repeated = repeated_keys(text)
    if repeated:
        raise AmbiguousVerdictError(f"the JSON verdict repeats the key {repeated[0]!r}; which value is the "
                                    "judge's cannot be told")
    return value


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?', re.S)


_DECODER = json.JSONDecoder(strict=False)


def keys_in_spans(text: str, start: int, end: int, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The keys of the JSON object at ``text[start:end]`` that lie, with their value, inside one of
    ``spans``: pairs the reply reproduces (a key that merely shares its spelling with the graded
    text, its value the judge's own, is not one)."""
    out = []
    for m in _JSON_STRING.finditer(text, start, end):
        if not m.group(1) or not any(s <= m.start() < e for s, e in spans):
            continue
        pos = m.end()
        while pos < end and text[pos].isspace():
            pos += 1
        try:
            _, value_end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            value_end = pos + 1
        if any(s <= m.start() and value_end <= e for s, e in spans):
            out.append(m.group()[1:].split('"')[0])
    return out
