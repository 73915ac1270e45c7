"""The packaged quickstart database: an invented engineering consultancy, built from
``data/demo.sql`` into a SQLite file the first time it is asked for, and its hand-checked templates.

>>> path = demo_database()
>>> path.suffix
'.sqlite'
>>> demo_templates_path().name
'demo_templates.json'
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import sqlite3
import tempfile
from pathlib import Path

__all__ = ["demo_database", "demo_sql", "demo_templates_path"]


def _data(name: str) -> Path:
    return Path(str(importlib.resources.files("langrag_eval.grammar") / "data" / name))


def demo_sql() -> str:
    """The SQL script the demo database is built from."""
    return _data("demo.sql").read_text(encoding="utf-8")


def demo_templates_path() -> Path:
    """The demo's SQL and text templates, in the same editable JSON the generator writes."""
    return _data("demo_templates.json")


def demo_database(path: str | Path | None = None) -> Path:
    """Build the demo SQLite database at ``path`` (default: a per-version file in the temp folder,
    reused while the script is unchanged) and return its path. The package folder may be read-only,
    so the database is never written inside it."""
    script = demo_sql()
    if path is None:
        digest = hashlib.sha256(script.encode("utf-8")).hexdigest()[:12]
        path = Path(tempfile.gettempdir()) / f"langrag-grammar-demo-{digest}.sqlite"
        if path.is_file():
            return path
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the target and rename, so a concurrent reader never sees a half-built file.
    fd, tmp = tempfile.mkstemp(suffix=".sqlite", dir=target.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(script)
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
