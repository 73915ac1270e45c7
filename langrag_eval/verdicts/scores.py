"""The ``Score: [[n]], Reason: [[...]]`` verdict (vRAG-Eval, Table 3): :class:`ScoreFormat` reads it,
optionally with ``Confidence: [[c]]``, into a :class:`ScoreVerdict`.

The judge's own fields are read at the top level only: text nested inside its ``Reason: [[...]]``
(an echoed ``Score: [[5]]``) is skipped, and a ``Reason`` left unbalanced stops at the next line that
opens with a ``Score`` field. A bare ``[[n]]`` outside every field counts as a score too, and every
score read outside quoted text must agree (see :mod:`langrag_eval.verdicts` for the rules every
format shares).

>>> ScoreFormat(confidence=True).parse("Score: [[4]], Confidence: [[80]], Reason: [[Grounded.]]")
ScoreVerdict(score=4, reason='Grounded.', confidence=80)
>>> ScoreFormat().parse("Reason: [[The answer says [[5]] twice.]] Score: [[ 3 /5 ]]").score
3
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ..errors import JudgeOutputError, redact
from ..prompting.quoting import mask_quoted, single_verdict

__all__ = ["ScoreFormat", "ScoreVerdict"]

_FIELD = re.compile(r"(?P<label>score|rating|grade|confidence|reason|justification)"
                    r"[ \t]*\**[ \t]*:[ \t]*\**[ \t]*\[\[", re.I)
# A Score field opening a line is the judge's own position: a Reason that has not closed by then is
# unbalanced (an echoed "[[" inside it), and must not swallow the verdict that follows.
_LINE_SCORE = re.compile(r"^[ \t*_#-]*(?:score|rating|grade)[ \t]*\**[ \t]*:[ \t]*\**[ \t]*\[\[", re.I | re.M)
_PAIRS = re.compile(r"\[\[|\]\]")
_BARE = re.compile(r"\[\[\s*(\d{1,3})\s*\]\]")
_INT = re.compile(r"^\s*(\d{1,3})(?:\.0+)?\s*(?:%|/\s*\d+)?\s*$")


@dataclass(frozen=True)
class _Field:
    label: str
    value: str
    start: int
    end: int


def _bracket_fields(original: str, masked: str) -> list[_Field]:
    """Top-level ``Label: [[...]]`` fields in reading order; text nested inside one is skipped."""
    out: list[_Field] = []
    pos = 0
    while (m := _FIELD.search(masked, pos)) is not None:
        nxt = _LINE_SCORE.search(masked, m.end())
        limit = nxt.start() if nxt else len(masked)
        depth, close = 1, -1
        for pair in _PAIRS.finditer(masked, m.end(), limit):
            depth += 1 if pair.group() == "[[" else -1
            if depth == 0:
                close = pair.start()
                break
        if close < 0:  # unbalanced: end at the first "]]" rather than swallow the rest
            first = masked.find("]]", m.end(), limit)
            close = first if first >= 0 else limit
            end = close + 2 if first >= 0 else limit
        else:
            end = close + 2
        label = m["label"].lower()
        label = {"rating": "score", "grade": "score", "justification": "reason"}.get(label, label)
        out.append(_Field(label, original[m.end():close], m.start(), end))
        pos = max(end, m.end())
    return out


def _norm(value: str) -> str:
    """A verdict's value for comparison: ``4``, `` 4.0 `` and ``4/5`` agree."""
    m = _INT.match(value)
    return str(int(m.group(1))) if m else " ".join(value.split()).lower()


def _score_candidates(original: str, view: str) -> tuple[list[_Field], list[re.Match[str]]]:
    """Fields, and bare ``[[n]]`` verdicts outside every field, in ``view``."""
    fields = _bracket_fields(original, view)
    outside = list(view)
    for f in fields:
        outside[f.start:f.end] = " " * (f.end - f.start)
    return fields, list(_BARE.finditer("".join(outside)))


class ScoreVerdict(BaseModel):
    """A rubric score with the judge's reason and, when asked for, its verbalised confidence."""

    model_config = ConfigDict(frozen=True)

    score: int
    reason: str | None = None
    confidence: int | None = None

    @field_validator("reason")
    @classmethod
    def _masked(cls, text: str | None) -> str | None:
        # The judge's reason is stored and printed: a key or password it quoted is masked.
        return None if text is None else redact(text)


@dataclass(frozen=True)
class ScoreFormat:
    """``Score: [[n]], Reason: [[...]]`` (vRAG-Eval, Table 3), optionally with ``Confidence: [[c]]``."""

    low: int = 1
    high: int = 5
    confidence: bool = False

    @property
    def instructions(self) -> str:
        conf = "Confidence: [[c]], " if self.confidence else ""
        return (f"Score: [[n]], {conf}Reason: [[...]] where n is an integer from {self.low} to "
                f"{self.high}" + (" and c an integer from 0 to 100" if self.confidence else ""))

    def parse(self, text: str) -> ScoreVerdict:
        masked = mask_quoted(text)
        fields, bare = _score_candidates(text, masked)

        def values(fs: list[_Field], hits: list[re.Match[str]], label: str) -> list[str]:
            return [_norm(f.value) for f in fs if f.label == label] + (
                [_norm(h.group(1)) for h in hits] if label == "score" else [])

        scores = [(i, f) for i, f in enumerate(fields) if f.label == "score"]
        if self.confidence and not scores:
            raise JudgeOutputError(f"no verdict in the format {self.instructions}")
        single_verdict(values(fields, bare, "score"), self.instructions)
        if not scores:  # bare [[n]] only
            m = bare[0]
            score = self._int(m.group(1), self.low, self.high, "score")
            rest = (text[:m.start()] + text[m.end():]).strip(" \n,.*") or None
            return ScoreVerdict(score=score, reason=rest)
        index, chosen = scores[0]
        score = self._int(chosen.value, self.low, self.high, "score")
        confidence = None
        confidences = values(fields, [], "confidence")
        if confidences:
            single = single_verdict(confidences, "Confidence: [[c]]")
            confidence = self._int(single, 0, 100, "confidence")
        elif self.confidence:
            raise JudgeOutputError("no Confidence: [[c]] in the reply")
        reason = None
        for f in fields[index + 1:index + 3]:
            if f.label == "reason":
                reason = f.value.strip()
                break
            if f.label == "score":
                break
        if reason is None:
            rest = (text[:chosen.start] + " " + text[chosen.end:]).strip(" \n,.*")
            reason = rest or None
        return ScoreVerdict(score=score, reason=reason, confidence=confidence)

    @staticmethod
    def _int(value: str, low: int, high: int, what: str) -> int:
        m = _INT.match(value)
        if not m:
            raise JudgeOutputError(f"{what} [[{value.strip()[:40]}]] is not an integer")
        n = int(m.group(1))
        if not low <= n <= high:
            raise JudgeOutputError(f"{what} {n} is outside {low}..{high}")
        return n

    def json_schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {"score": {"type": "integer", "enum": list(range(self.low, self.high + 1))}}
        if self.confidence:
            props["confidence"] = {"type": "integer", "minimum": 0, "maximum": 100}
        props["reason"] = {"type": "string", "maxLength": 400}
        return {"type": "object", "properties": props, "required": list(props)}

    def from_json(self, obj: Any) -> ScoreVerdict:
        if not isinstance(obj, dict) or "score" not in obj:
            raise JudgeOutputError("JSON verdict has no score")
        score = self._int(str(obj["score"]), self.low, self.high, "score")
        conf = obj.get("confidence")
        conf = None if conf is None else self._int(str(conf), 0, 100, "confidence")
        if self.confidence and conf is None:
            raise JudgeOutputError("JSON verdict has no confidence")
        return ScoreVerdict(score=score, reason=obj.get("reason"), confidence=conf)
