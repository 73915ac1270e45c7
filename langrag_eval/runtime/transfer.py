"""Moving runs between stores (``langrag-eval store copy``): a SQLite file into a shared
PostgreSQL database, or back.

>>> from langrag_eval.runtime import RunStore
>>> a, b = RunStore(":memory:"), RunStore(":memory:")
>>> run = a.open_run("demo", {})
>>> a.put_judgment(run, "q1", "vrag", {"score": 5}, scored=True)
>>> a.finish_run(run, {})
>>> copy_runs(a, b)["judgments"], copy_runs(a, b)["judgments"]   # the second time: already there
(1, 0)
"""

from __future__ import annotations

import time
from typing import Any

from ..errors import ConfigError
from .lease import _count
from .store_base import StoreBase

__all__ = ["copy_runs"]

# What ``copy_runs`` carries from one store to another, column by column (calls without their id).
_COPY = {
    "runs": ("id", "kind", "config", "judge", "created", "finished", "summary", "inputs"),
    "judgments": ("run_id", "item", "task", "scored", "result", "created", "fingerprint"),
    "calls": ("run_id", "model", "key", "cached", "ok", "attempts", "prompt_tokens", "completion_tokens",
              "cost", "error", "created"),
    "artifacts": ("run_id", "name", "data", "created"),
}
_KEYS = {"runs": "(id)", "judgments": "(run_id, item, task)", "artifacts": "(run_id, name)"}


def copy_runs(source: StoreBase, target: StoreBase, run_ids: list[str] | None = None) -> dict[str, int]:
    """Copy runs (default: all) with their judgments, call log and artifacts, and the whole reply
    cache, into ``target``; rows the target already has are kept. Returns the rows written per
    table (rows the target had already are not counted). A run the target holds under the same
    id but made otherwise (another kind or creation time) is refused before anything
    is written: merging them would mix two runs' judgments."""
    ids = run_ids if run_ids is not None else [r["id"] for r in source.runs()]
    for run_id in ids:
        mine = source._rows("SELECT kind, config, created FROM runs WHERE id=?", (run_id,))
        theirs = target._rows("SELECT kind, config, created FROM runs WHERE id=?", (run_id,))
        if mine and theirs and (mine[0][0], mine[0][2]) != (theirs[0][0], theirs[0][2]):
            raise ConfigError(f"{target.path} already holds another run with the id {run_id} (made "
                              f"{_when(theirs[0][2])}, this one {_when(mine[0][2])}); nothing was copied; "
                              "copy into another store, or give --run for the other runs only")
    copied = {name: 0 for name in (*_COPY, "cache")}
    for run_id in ids:
        for table, columns in _COPY.items():
            column = "id" if table == "runs" else "run_id"
            rows = source._rows(f"SELECT {', '.join(columns)} FROM {table} WHERE {column}=?", (run_id,))
            if table == "calls" and target._rows("SELECT 1 FROM calls WHERE run_id=? LIMIT 1", (run_id,)):
                continue  # the call log has no key of its own: copied once, never twice
            marks = ", ".join("?" * len(columns))
            conflict = f" ON CONFLICT {_KEYS[table]} DO NOTHING" if table in _KEYS else ""
            for row in rows:
                copied[table] += max(0, _count(target._exec(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){conflict}", tuple(row))))
    before = target._rows("SELECT COUNT(*) FROM cache")[0][0]
    for row in source._rows("SELECT key, model, text, prompt_tokens, completion_tokens, created FROM cache"):
        target._exec_grouped("INSERT INTO cache (key, model, text, prompt_tokens, completion_tokens, created) "
                             "VALUES (?,?,?,?,?,?) ON CONFLICT (key) DO NOTHING", tuple(row))
    target.flush()
    copied["cache"] = target._rows("SELECT COUNT(*) FROM cache")[0][0] - before
    return copied


def _when(created: Any) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(created)))
    except (TypeError, ValueError, OverflowError):
        return "at an unknown time"
