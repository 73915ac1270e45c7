"""Verdict formats of THELMA's judge tasks, read with the runtime's masking rules.

The paper's prompts (Appendix B) have the judge answer inside ``<output>...</output>``: a bulleted
list for the decompose modules, one label for a match module. Per-component matching therefore
uses the shared :class:`~langrag_eval.verdicts.BinaryFormat`, which reads the token inside
``<output>`` (the match module is defined as a map to {0, 1}, section 4, so the prompts ask for the
digit instead of the words Essential/Extraneous). Two formats are THELMA's own:

- :class:`ListFormat`: the bulleted list of a decompose module (claims, facts, sub-questions);
- :class:`BinaryListFormat`: batched matching, one JSON list of 0/1 verdicts, one per component.

>>> ListFormat().parse("<output>\\n- Ada wrote code.\\n- Ada was born in 1815.\\n</output>")
['Ada wrote code.', 'Ada was born in 1815.']
>>> BinaryListFormat(3).parse("<output>[1, 0, 1]</output>")
[1, 0, 1]
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import AmbiguousVerdictError, JudgeOutputError
from ..verdicts.formats import TagFormat, mask_quoted, single_verdict

__all__ = ["BinaryListFormat", "ListFormat"]

_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d{1,3}[.)]|\(\w\))\s+")


@dataclass(frozen=True)
class ListFormat:
    """A list inside ``<output>``, one item per line; bullets and numbering are removed.
    An empty block is an empty list (a greeting has no claims); a reply without the block is an error."""

    instructions: str = 'a list inside <output> and </output>, one item per line starting with "- "'

    def parse(self, text: str) -> list[str]:
        body = TagFormat().parse(text)
        items = []
        for line in body.splitlines():
            item = _BULLET.sub("", line).strip()
            if item and item.lower() not in ("none", "(none)", "n/a"):
                items.append(item)
        return items

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}},
                "required": ["items"]}

    def from_json(self, obj: Any) -> list[str]:
        items = obj.get("items") if isinstance(obj, dict) else None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise JudgeOutputError("JSON reply has no list of strings under 'items'")
        return [i.strip() for i in items if i.strip()]


_LIST = re.compile(r"\[[\s\d,]*\]")


@dataclass(frozen=True)
class BinaryListFormat:
    """Exactly ``n`` verdicts, each 0 or 1, as a JSON list: inside ``<output>`` when present, else
    a list the judge wrote outside quotes. Every such list of ``n`` verdicts must agree."""

    n: int

    @property
    def instructions(self) -> str:
        return f"a JSON list of exactly {self.n} digits, each 0 or 1, inside <output> and </output>"

    def parse(self, text: str) -> list[int]:
        try:
            body: str | None = TagFormat().parse(text)
        except AmbiguousVerdictError:
            raise
        except JudgeOutputError:
            body = None
        visible = self._lists(mask_quoted(text))  # <output> blocks are masked: lists outside them
        if body is not None:
            try:
                values = json.loads(body)
            except (json.JSONDecodeError, ValueError, RecursionError):
                raise JudgeOutputError(f"verdicts {body[:60]!r} are not a JSON list") from None
            visible.append(tuple(self.from_json({"verdicts": values})))
        elif not visible:
            hits = _LIST.findall(mask_quoted(text))
            if not hits:
                raise JudgeOutputError(f"no list of verdicts: expected {self.instructions}")
            self.from_json({"verdicts": json.loads(hits[-1])})  # raises, saying what is wrong
        return list(single_verdict(visible, self.instructions))

    def _lists(self, view: str) -> list[tuple[int, ...]]:
        """Every list of exactly ``n`` 0/1 verdicts in ``view``."""
        found = []
        for hit in _LIST.findall(view):
            try:
                found.append(tuple(self.from_json({"verdicts": json.loads(hit)})))
            except (JudgeOutputError, ValueError):
                continue
        return found

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "required": ["verdicts"], "properties": {"verdicts": {
            "type": "array", "items": {"type": "integer", "enum": [0, 1]},
            "minItems": self.n, "maxItems": self.n}}}

    def from_json(self, obj: Any) -> list[int]:
        values = obj.get("verdicts") if isinstance(obj, dict) else None
        if not isinstance(values, list):
            raise JudgeOutputError("JSON reply has no list under 'verdicts'")
        if len(values) != self.n:
            raise JudgeOutputError(f"expected {self.n} verdicts, got {len(values)}")
        if any(isinstance(v, bool) or v not in (0, 1) for v in values):
            raise JudgeOutputError(f"verdicts must be 0 or 1, got {values[:10]}")
        return [int(v) for v in values]
