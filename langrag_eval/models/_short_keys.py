"""One-letter property names for the tiny local judge's constrained replies, and the way back.

Under a JSON grammar, every character of a property name is generated, and a small model spells a
name it has no single token for in pieces: Gemma 3 270M writes ``"verdicts"`` as ``v``, ``erd``,
``ic``, ``ts``, four forward passes for text the grammar fixes anyway. Asking for ``"v"`` instead and
putting the schema's own names back into the reply gives the parsers the reply they expect at a
fraction of the passes. Only names of closed values are shortened (an enum, a constant, a boolean,
or a list of them: the model picks among the schema's own options). The name of an open value is
part of the instructions: renamed, the 270M model filled a 0-2 ``relevance`` with fifteen digits
and the claims of ``items`` with passage ids. Values and the order of fields never change.

>>> schema = {"type": "object", "properties": {"verdict": {"enum": ["A", "B"]},
...           "reason": {"type": "string"}}, "required": ["verdict", "reason"]}
>>> names = short_names(schema)  # Gemma's tokenizer counts, in the local judge
>>> names
{'verdict': 'v'}
>>> renamed(schema, names)["required"]
['v', 'reason']
>>> restore_keys('{"v":"A","reason":"says \\\\"v\\\\": no"}', names)
'{"verdict":"A","reason":"says \\\\"v\\\\": no"}'
"""

from __future__ import annotations

import json
import re
import string
from typing import Any, Callable

__all__ = ["short_names", "renamed", "restore_keys"]

_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not")
# A JSON string, and whether a colon follows it (then it is a property name: a value never is).
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"(:?)', re.S)


def _walk(node: Any, visit: Any) -> Any:
    """A copy of schema ``node`` whose every ``properties`` map went through ``visit``."""
    if not isinstance(node, dict):
        return node
    out = dict(node)
    if isinstance(node.get("properties"), dict):
        out["properties"] = {k: _walk(v, visit) for k, v in node["properties"].items()}
        out = visit(out)
    for key in _SUBSCHEMA_ONE:
        if isinstance(node.get(key), dict):
            out[key] = _walk(node[key], visit)
    for key in _SUBSCHEMA_LISTS:
        if isinstance(node.get(key), list):
            out[key] = [_walk(v, visit) for v in node[key]]
    for key in ("$defs", "definitions"):
        if isinstance(node.get(key), dict):
            out[key] = {k: _walk(v, visit) for k, v in node[key].items()}
    return out


def _closed(schema: Any) -> bool:
    """Whether a value of ``schema`` is one of options the schema lists (a list of such included)."""
    if not isinstance(schema, dict):
        return False
    if "enum" in schema or "const" in schema or schema.get("type") == "boolean":
        return True
    return schema.get("type") == "array" and _closed(schema.get("items"))


def short_names(schema: dict[str, Any], tokens: Callable[[str], int] = len) -> dict[str, str]:
    """Each name of a closed value in ``schema`` (closed wherever the name is used) that ``tokens``
    counts as more than one token -> a distinct lowercase letter, its own first letter when free
    (a one-token name costs one pass either way: renaming it would only take its meaning away).
    Empty when a name is already one letter or an object with named properties also takes others
    (a letter there could not be told from ours)."""
    closed: dict[str, bool] = {}
    open_objects: list[dict[str, Any]] = []  # objects taking names of the model's own choosing

    def collect(node: dict[str, Any]) -> dict[str, Any]:
        for name, sub in node["properties"].items():
            closed[name] = closed.get(name, True) and _closed(sub)
        if node.get("additionalProperties") not in (None, False):
            open_objects.append(node)
        return node

    _walk(schema, collect)
    letters = string.ascii_lowercase
    if open_objects or any(len(name) == 1 for name in closed):
        return {}
    names: dict[str, str] = {}
    for name in (n for n, shut in closed.items() if shut and tokens(n) > 1):
        pick = next((c for c in name.lower() + letters if c in letters and c not in names.values()), None)
        if pick is not None:  # past 26 names, the rest keep theirs
            names[name] = pick
    return names


def renamed(schema: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A copy of ``schema`` with its property names (and ``required`` lists) renamed by ``names``."""

    def rename(node: dict[str, Any]) -> dict[str, Any]:
        node["properties"] = {names.get(k, k): v for k, v in node["properties"].items()}
        if isinstance(node.get("required"), list):
            node["required"] = [names.get(k, k) for k in node["required"]]
        return node

    return _walk(schema, rename)


def restore_keys(text: str, names: dict[str, str]) -> str:
    """``text`` (a reply under the renamed schema, complete or not) with the original names back;
    everything else, string contents included, is left as generated."""
    back = {short: name for name, short in names.items()}
    return _STRING.sub(lambda m: json.dumps(back[m[1]]) + ":" if m[2] and m[1] in back else m[0], text)
