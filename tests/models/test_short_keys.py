"""One-letter property names for the tiny local judge: a reply written under the renamed schema
reads, once the names are put back, exactly as the same reply under the schema's own names."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from langrag_eval.models._short_keys import renamed, restore_keys, short_names
from langrag_eval.thelma.formats import BinaryListFormat, ListFormat
from langrag_eval.tournament.evaluators import RelevanceJudgment
from langrag_eval.verdicts.formats import JsonFormat, PairwiseFormat, ScoreFormat

NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=2, max_size=12)
# String values are where a confusion would hide: quotes, backslashes and colons inside them.
VALUES = st.one_of(st.integers(), st.booleans(), st.none(),
                   st.text(st.sampled_from('v":\\{}[],ab \n'), max_size=20),
                   st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20))


def _schema_of(value: Any) -> dict[str, Any]:
    """A schema ``value`` conforms to: objects list their keys as properties (all required), a
    scalar is the one option of an enum (closed), a list of scalars an enum of theirs."""
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _schema_of(v) for k, v in value.items()},
                "required": list(value)}
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return {"type": "array", "items": {"enum": value}}
        return {"type": "array", "items": {"anyOf": [_schema_of(v) for v in value]}}
    return {"enum": [value]}


def _rename_value(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {names.get(k, k): _rename_value(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_value(v, names) for v in value]
    return value


def _named_values(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [(k, v) for k, v in value.items()] + [p for v in value.values() for p in _named_values(v)]
    if isinstance(value, list):
        return [p for v in value for p in _named_values(v)]
    return []


objects = st.recursive(
    st.dictionaries(NAMES, VALUES, min_size=1, max_size=4),
    lambda inner: st.dictionaries(NAMES, st.one_of(VALUES, inner, st.lists(inner, min_size=1, max_size=2)),
                                  min_size=1, max_size=4),
    max_leaves=12)


@given(obj=objects, ascii_only=st.booleans())
def test_a_reply_under_short_names_reads_as_the_original(obj: dict, ascii_only: bool) -> None:
    schema = _schema_of(obj)
    names = short_names(schema)
    compact = {"separators": (",", ":"), "ensure_ascii": ascii_only}
    assert len(set(names.values())) == len(names)  # distinct letters: the way back is unambiguous
    assert all(len(short) == 1 for short in names.values())
    # only names of closed values, wherever they are used
    assert all(isinstance(v, (bool, int, float, str, type(None))) or
               (isinstance(v, list) and not any(isinstance(x, (dict, list)) for x in v))
               for k, v in _named_values(obj) if k in names)
    assert set(renamed(schema, names)["properties"]) == {names.get(k, k) for k in obj}
    reply = json.dumps(_rename_value(obj, names), **compact)
    restored = restore_keys(reply, names)
    assert json.loads(restored) == obj
    # Names go back as the grammar spells them (JSON escapes for what is not printable ASCII), so
    # where that is also how the reply spelled them, the text is the same byte for byte.
    if all(json.dumps(k) == json.dumps(k, ensure_ascii=ascii_only) for k in names):
        assert restored == json.dumps(obj, **compact)


def test_the_tiny_judge_shortens_the_names_of_closed_values_only() -> None:
    for fmt, expected in [(ScoreFormat(), {"score": "s"}), (ScoreFormat(confidence=True), {"score": "s"}),
                          (PairwiseFormat(), {"verdict": "v"}), (ListFormat(), {}),
                          (BinaryListFormat(3), {"verdicts": "v"}), (JsonFormat(RelevanceJudgment), {})]:
        schema = fmt.json_schema()
        assert short_names(schema) == expected, fmt
        assert renamed(schema, expected)["required"] == [expected.get(k, k) for k in schema["required"]]
    # a name the vocabulary holds as one token keeps it (Gemma 3 has "score", not "verdict")
    one_token = {"score"}.__contains__
    assert short_names(ScoreFormat().json_schema(), lambda n: 1 if one_token(n) else 2) == {}
    assert short_names(PairwiseFormat().json_schema(), lambda n: 1 if one_token(n) else 2) == {"verdict": "v"}


def test_objects_that_take_names_of_their_own_keep_every_name() -> None:
    open_object = {"type": "object", "properties": {"verdict": {"enum": ["A", "B"]}},
                   "additionalProperties": {"type": "string"}}
    assert short_names(open_object) == {}
    one_letter = {"type": "object", "properties": {"v": {"enum": [1]}, "verdict": {"enum": [1]}}}
    assert short_names(one_letter) == {}
