"""JSON as a user's file should hold it, and the lines of a file as the file says them.

:func:`parse_json` refuses what Python's parser would take silently (``NaN``, ``Infinity``, a
repeated key, an integer too long to convert, a lone surrogate escape such as ``"\\udc80"``); :func:`finite_number` reads a number wherever one
is read (ranks, scores, prices, thresholds) and refuses the non-finite; :func:`lines_of` splits at
line feeds only, so Unicode line separators inside JSON strings stay data.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from ..errors import DataError

__all__ = ["parse_json", "finite_number", "lines_of", "LoneSurrogateError", "find_lone_surrogate"]

# A surrogate, written as a \u escape or (in text decoded with surrogateescape) as itself: only
# where one appears can a parsed string hold a lone one, so only then are the strings looked at.
_MAY_HOLD_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}|[\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (write a number, or null for a missing one)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is too large to be a number here (it reads as infinity)")
    return value


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object; which value is meant "
                         "cannot be told, so neither is read")
        self.key = key


class _LoneSurrogate(ValueError):
    def __init__(self, key: str | None, holder: str, *, in_key: bool = False) -> None:
        super().__init__(key, holder)
        self.key, self.holder, self.in_key = key, holder, in_key


def _holding_surrogate(value: Any) -> str | None:
    """The first string of ``value`` holding a lone surrogate (objects are checked by their own hook)."""
    if isinstance(value, str):
        return value if _SURROGATE.search(value) else None
    if isinstance(value, list):
        return next((s for v in value if (s := _holding_surrogate(v)) is not None), None)
    return None


def _text_only(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A lone surrogate is half of a UTF-16 pair, not a character: no file, store or terminal can
    # hold it as UTF-8, so the line holding it is refused here, naming the key, before an id or a
    # question holding it reaches a digest, the store or the console.
    for key, value in pairs:
        if _SURROGATE.search(key):
            raise _LoneSurrogate(_SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", key), key, in_key=True)
        if (holder := _holding_surrogate(value)) is not None:
            raise _LoneSurrogate(key, holder)
    return _one_value_per_key(pairs)


class LoneSurrogateError(json.JSONDecodeError):
    """JSON text whose string ``holder`` holds half a surrogate pair (written ``"\\udc80"``, or a
    byte that was not UTF-8 decoded with ``surrogateescape``), in the value (or the name, when
    ``in_key``) of ``field``; None outside any object. ``reason`` says so without the field."""

    def __init__(self, field: str | None, holder: str, doc: str, pos: int, *, in_key: bool = False) -> None:
        self.field, self.holder = field, holder
        self.char = _SURROGATE.search(holder).group(0)  # type: ignore[union-attr]
        self.reason = (f"{'the name ' if in_key else ''}holds the lone surrogate \\u{ord(self.char):04x} "
                       "(half of a UTF-16 pair, not a character); write the character itself or both "
                       "halves of the pair")
        where = "a key " if in_key else f'the value of "{field}" ' if field is not None else "a string "
        super().__init__(where + self.reason.removeprefix("the name "), doc, pos)


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return obj


def parse_json(text: str) -> Any:
    """JSON as a user's file should hold it. Python's parser also takes ``NaN`` and ``Infinity``,
    which would be graded as the text "nan", and keeps the last of a repeated key; both are refused
    here, as are integers too long to convert. Every refusal is a :class:`json.JSONDecodeError` with
    a readable ``msg``.

    >>> parse_json('{"a": 1}')
    {'a': 1}
    >>> parse_json('{"a": NaN}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    json.decoder.JSONDecodeError: NaN is not a JSON value ...
    >>> parse_json('{"a": 1, "a": 2}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    json.decoder.JSONDecodeError: the key 'a' appears twice in one object; ...
    >>> parse_json('{"id": "q\\\\udc80"}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.files.jsontext.LoneSurrogateError: the value of "id" holds the lone surrogate \\udc80 ...
    >>> parse_json('{"smile": "\\\\ud83d\\\\ude00"}')  # a pair is one character
    {'smile': '😀'}
    """
    escaped = _MAY_HOLD_SURROGATE.search(text) is not None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                           object_pairs_hook=_text_only if escaped else _one_value_per_key)
        if escaped and (holder := _holding_surrogate(value)) is not None:  # a string or list outside objects
            raise _LoneSurrogate(None, holder)
        return value
    except json.JSONDecodeError:
        raise
    except _LoneSurrogate as exc:
        char = _SURROGATE.search(exc.holder).group(0)  # type: ignore[union-attr]
        at = text.find(char)  # the character itself, else its escape
        if at < 0:
            escape = re.search(re.escape(f"\\u{ord(char):04x}"), text, re.IGNORECASE)
            at = escape.start() if escape else 0
        raise LoneSurrogateError(exc.key, exc.holder, text, at, in_key=exc.in_key) from None
    except _RepeatedKey as exc:
        where = [m.start() for m in re.finditer(re.escape(json.dumps(exc.key, ensure_ascii=False)), text)]
        raise json.JSONDecodeError(str(exc), text, where[1] if len(where) > 1 else 0) from None
    except ValueError as exc:  # NaN/Infinity above, or an integer over Python's digit limit
        message = str(exc)
        if "Exceeds the limit" in message:
            message = "a number has too many digits (more than 4,300)"
            where = re.search(r"\d{4301}", text)
        elif "infinity)" in message:
            where = re.search(re.escape(message.split(" ", 1)[0]), text)
        else:
            where = re.search(r"-?(?:NaN|Infinity)", text)
        raise json.JSONDecodeError(message, text, where.start() if where else 0) from None
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def finite_number(value: Any, *, path: str | None = None, line: int | None = None,
                  field: str | None = None) -> float:
    """``value`` (a number, or text holding one) as a finite float, or a :class:`DataError` naming
    the file, line and field: ``NaN`` and infinities are no score, rank or price.

    >>> finite_number("2.5")
    2.5
    >>> finite_number("NaN", path="docs.csv", line=3, field="rank")
    Traceback (most recent call last):
    langrag_eval.errors.DataError: docs.csv:3: field "rank": 'NaN' is not a finite number
    """
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{value!r} is not a number", path=path, line=line, field=field) from None
    if number != number or number in (float("inf"), float("-inf")):
        raise DataError(f"{value!r} is not a finite number", path=path, line=line, field=field)
    return number


def lines_of(text: str) -> list[str]:
    """``text`` split at line feeds only (a ``\\r`` before one goes with it). ``str.splitlines`` also
    splits at U+2028, U+2029, U+0085 and other characters that JSON strings hold as plain data.

    >>> lines_of('{"a": "x\u2028y"}\\r\\n{"b": 2}')
    ['{"a": "x\u2028y"}', '{"b": 2}']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def find_lone_surrogate(value: Any, where: str = "") -> tuple[str, str] | None:
    """``(field, surrogate)`` for the first string in ``value`` (strings, lists, mappings, pydantic
    models and dataclasses, walked in order) that holds half of a surrogate pair, or None. Such a
    string is no text: UTF-8 cannot hold it, so a digest, a store or a terminal given it fails.

    >>> find_lone_surrogate({"id": "q1", "contexts": [{"text": "ok"}, {"text": "x\\udc80"}]})
    ('contexts[1].text', '\\udc80')
    """
    if isinstance(value, str):
        m = _SURROGATE.search(value)
        return (where, m.group(0)) if m else None
    if isinstance(value, (list, tuple)):
        items: Any = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    elif isinstance(value, dict):
        items = ((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
        if (key := next((k for k in value if isinstance(k, str) and _SURROGATE.search(k)), None)) is not None:
            return (where or "key", _SURROGATE.search(key).group(0))  # type: ignore[union-attr]
    elif hasattr(value, "model_fields_set") or dataclasses.is_dataclass(value):
        items = ((f"{where}.{k}" if where else k, v) for k, v in vars(value).items() if not k.startswith("_"))
    else:
        return None
    return next((found for path, v in items if (found := find_lone_surrogate(v, path)) is not None), None)
