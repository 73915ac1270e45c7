"""The content digest of a model file, so that a judge is named by what it runs, not where it lies.

A different GGUF file copied to the same path is a different judge: its replies must never be taken
from the cache of the old one. Hashing a model file takes a second or more per gigabyte, so the
digest is kept in a small JSON file beside the other caches, under the file's real path, size,
modification time and inode; any change of those hashes the file again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from ..errors import ConfigError
from ..files.writing import write_text_atomic

__all__ = ["file_digest", "digest_cache_path"]

_LOCK = threading.Lock()


def digest_cache_path() -> Path:
    cache = Path(os.environ.get("LANGRAG_CACHE", Path.home() / ".cache" / "langrag-eval"))
    return cache / "file-digests.json"


def _signature(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"


def file_digest(path: str | Path, *, cache: Path | None = None) -> str:
    """The SHA-256 of the file's bytes, hex; read from the digest cache while the file is unchanged."""
    path = Path(path)
    cache = cache or digest_cache_path()
    key = _signature(path)
    with _LOCK:
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
            if not isinstance(known, dict):
                known = {}
        except (OSError, ValueError):
            known = {}  # no cache yet, or an unreadable one: hash, and write a fresh one
        digest = known.get(key)
        if isinstance(digest, str) and len(digest) == 64:
            return digest
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        digest = h.hexdigest()
        if _signature(path) != key:  # the file changed while it was read: do not remember it
            return digest
        known = {k: v for k, v in known.items() if not k.startswith(f"{path.resolve()}|")}
        known[key] = digest
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(cache, json.dumps(known, indent=0, sort_keys=True))
        except (OSError, ConfigError):
            pass  # a read-only cache folder costs a hash per run, nothing else
        return digest
