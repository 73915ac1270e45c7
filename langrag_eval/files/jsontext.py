"""JSON as a user's file should hold it, and the lines of a file as the file says them.

:func:`parse_json` refuses what Python's parser would take silently (``NaN``, ``Infinity``, a
repeated key, an integer too long to convert); :func:`finite_number` reads a number wherever one
is read (ranks, scores, prices, thresholds) and refuses the non-finite; :func:`lines_of` splits at
line feeds only, so Unicode line separators inside JSON strings stay data.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import DataError

__all__ = ["parse_json", "finite_number", "lines_of"]


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
    """
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                          object_pairs_hook=_one_value_per_key)
    except json.JSONDecodeError:
        raise
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
