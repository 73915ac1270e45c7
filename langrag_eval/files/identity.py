"""Content identity: a stable digest of what a judgment or a run is made from.

A stored judgment is reused only while the content that produced it is the same; digests of files
key runs by what they hold, not by where they lie.

>>> content_hash({"q": "Who?", "a": ["x", 1]}) == content_hash({"a": ["x", 1], "q": "Who?"})
True
>>> content_hash("a") == content_hash("b")
False
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from .reading import digest_of_read, read_bytes


__all__ = ["content_hash", "file_digest", "canonical"]


def canonical(obj: Any) -> Any:
    """Plain JSON data for ``obj``: pydantic models, dataclasses, tuples, sets and mappings."""
    kind = type(obj)
    if kind in _PLAIN:  # the leaves of a model's dump, looked at first: nothing else to ask of them
        return obj
    if kind is dict:
        return {str(k): canonical(v) for k, v in obj.items()}
    if hasattr(obj, "model_dump") and callable(obj.model_dump):
        return canonical(obj.model_dump(mode="json"))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): canonical(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((canonical(v) for v in obj), key=repr)
    if isinstance(obj, float) and obj != obj:  # NaN never equals itself; keep it stable
        return "NaN"
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    # Anything else by its repr, less the memory address some reprs carry (which would make the
    # same content look new in every process).
    return _ADDRESS.sub("", repr(obj))


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_PLAIN = frozenset({str, int, bool, type(None)})


def content_hash(obj: Any) -> str:
    """A sha256 over the canonical JSON of ``obj`` (key order does not matter; values do)."""
    text = json.dumps(canonical(obj), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_digest(path: str | Path, *, what: str = "file") -> str:
    """sha256 of a file's bytes; a file that cannot be read is a one-line error naming it. A file
    this process has read already, unchanged since, is not read again: its digest was taken from
    the bytes read then (a pipe or a file being rewritten would give other bytes a second time)."""
    return digest_of_read(path) or hashlib.sha256(read_bytes(path, what=what)).hexdigest()
