"""Length limits on a constrained reply: none for a model the user chose, and for the tiny default only
what its size needs, with every reply that reached a limit known as cut.

A grammar that stops a string at ``maxLength`` characters or a list at ``maxItems`` items does not
shorten the judge's thought, it cuts its words: THELMA's claims and sub-questions, RAGElo's reasons
and a synthetic query set lose their tail, and the metrics computed on them change. So a model of the
user's choosing gets the schema without any length limit on free text and without a bound on a list
whose size the format leaves open (a list of a stated size, ``minItems == maxItems``, is the format
and stays). The 270M default, left unbounded, can repeat itself until its token budget runs out, so
its strings stop at ``MAX_FIELD_CHARS`` and its open lists at ``MAX_LIST_ITEMS``; a reply in which a
value reached such a limit may have been cut there, and :func:`cut_at` says where (the local judge
then returns it as cut: ``Unscored`` with cause ``truncated``). The default is not asked for the free
text written beside a verdict (a score's reason): at its size that text says nothing, it ran to the
cap nearly every time, and a verdict must not be lost over it (:func:`without_explanations`).

The other way round, a user's model asked for a bare verdict object (RAGElo's pairwise letter, its
pointwise scores, a 0/1 match) would lose the reasoning the papers' prompts ask for before the
verdict (explain then compare; step by step): a grammar allows nothing outside the JSON. So such an
object gets a ``reasoning`` string as its first property (:func:`with_reasoning`); parsers read the
verdict and ignore it, and the raw reply keeps it.

>>> schema = {"type": "object", "properties": {"claims": {"type": "array", "maxItems": 3,
...           "items": {"type": "string", "maxLength": 400}}}}
>>> uncapped(schema)["properties"]["claims"]
{'type': 'array', 'items': {'type': 'string'}}
>>> capped(schema)["properties"]["claims"]["items"]["maxLength"]
32
>>> cut_at({"claims": ["a" * 32]}, schema)
'claims[0]'
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_FIELD_CHARS", "MAX_LIST_ITEMS", "uncapped", "capped", "cut_at", "without_explanations",
           "with_reasoning"]

MAX_FIELD_CHARS = 32
MAX_LIST_ITEMS = 6


def _fixed_size(node: dict[str, Any]) -> bool:
    return "maxItems" in node and node.get("minItems") == node["maxItems"]


def _free_text(node: dict[str, Any]) -> bool:
    return node.get("type") == "string" and "enum" not in node and "const" not in node


def _map(schema: Any, change: Any) -> Any:
    if isinstance(schema, list):
        return [_map(s, change) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return change({k: _map(v, change) for k, v in schema.items()})


def uncapped(schema: Any) -> Any:
    """A copy of a JSON schema without length limits on strings or on lists of open size."""

    def change(node: dict[str, Any]) -> dict[str, Any]:
        if node.get("type") == "string":
            node.pop("maxLength", None)
        if node.get("type") == "array" and not _fixed_size(node):
            node.pop("maxItems", None)
        return node

    return _map(schema, change)


def capped(schema: Any) -> Any:
    """A copy with every string at most MAX_FIELD_CHARS characters and every list of open size at most
    MAX_LIST_ITEMS items (or its minItems, when that is more)."""

    def change(node: dict[str, Any]) -> dict[str, Any]:
        if _free_text(node):
            node["maxLength"] = min(int(node.get("maxLength", MAX_FIELD_CHARS)), MAX_FIELD_CHARS)
        if node.get("type") == "array" and not _fixed_size(node):
            node["maxItems"] = max(MAX_LIST_ITEMS, int(node.get("minItems", 0)))
        return node

    return _map(uncapped(schema), change)


def cut_at(value: Any, schema: dict[str, Any]) -> str | None:
    """Where a reply under ``capped(schema)`` reached one of the caps :func:`capped` set (a path such
    as ``claims[5]``), or None. A value that reaches a cap may have been cut there: the grammar would
    have closed it whether the model meant to stop or not."""
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    return _cut(value, schema, defs, "", 0)


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    return node


def _cut(value: Any, node: Any, defs: dict[str, Any], path: str, depth: int) -> str | None:
    node = _resolve(node, defs)
    if not isinstance(node, dict) or depth > 32:
        return None
    for key in ("anyOf", "oneOf", "allOf"):
        for alt in node.get(key) or []:
            found = _cut(value, alt, defs, path, depth + 1)
            if found is not None:
                return found
    if isinstance(value, str):
        # a string under a stated limit below the cap never reaches the cap
        return (path or "reply") if _free_text(node) and len(value) >= MAX_FIELD_CHARS else None
    if isinstance(value, list):
        if node.get("type") == "array" and not _fixed_size(node) and len(value) >= max(
                MAX_LIST_ITEMS, int(node.get("minItems", 0))):
            return path or "reply"
        items = node.get("items")
        for i, item in enumerate(value):
            found = _cut(item, items, defs, f"{path}[{i}]", depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for name, item in value.items():
            sub = props.get(name, extra if isinstance(extra, dict) else None)
            found = _cut(item, sub, defs, f"{path}.{name}" if path else name, depth + 1)
            if found is not None:
                return found
    return None


def without_explanations(schema: Any) -> Any:
    """A copy without the free-text properties of objects that also hold a value of another kind (the
    reason beside a score or a verdict); an object of free text alone keeps it (it is the reply)."""

    def change(node: dict[str, Any]) -> dict[str, Any]:
        props = node.get("properties")
        if not isinstance(props, dict):
            return node
        text = [k for k, v in props.items() if isinstance(v, dict) and _free_text(v)]
        if text and len(text) < len(props):
            node["properties"] = {k: v for k, v in props.items() if k not in text}
            if isinstance(node.get("required"), list):
                node["required"] = [k for k in node["required"] if k not in text]
        return node

    return _map(schema, change)


def with_reasoning(schema: Any) -> Any:
    """A top-level object of verdicts only (no free text) with a ``reasoning`` string first. An object
    that holds text of its own, directly or as a list of texts (THELMA's claims and sub-questions,
    synthetic queries), is the judge's words already: the papers ask for those lists as they are."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return schema
    props = schema.get("properties")
    if not isinstance(props, dict) or not props or "reasoning" in props or any(
            isinstance(v, dict) and (_free_text(v) or _free_text(v.get("items") or {})) for v in props.values()):
        return schema
    out = dict(schema)
    out["properties"] = {"reasoning": {"type": "string"}, **props}
    out["required"] = ["reasoning", *[k for k in schema.get("required", []) if k != "reasoning"]]
    return out
