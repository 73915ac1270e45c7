"""The run store: one SQLite file holding runs, judgments, model calls, the reply cache and artifacts.

Every finished judgment is committed as it arrives (WAL journal), together with every model reply
and call-log row written before it, so a run killed with ``kill -9`` and started again with the same
arguments resumes: finished judgments are read back, and their replies come from the cache, not the
model. Replies and call-log rows on their own are committed in groups, at most ``commit_interval``
seconds after they are written (a commit costs far more than an insert, and there are two per call).

>>> store = RunStore(":memory:")
>>> run = store.open_run("grade", {"file": "qa.csv"})
>>> store.put_judgment(run, "q1", "vrag", {"score": 4}, scored=True)
>>> store.get_judgment(run, "q1", "vrag")
{'score': 4}
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Iterator

from ..errors import ConfigError
from ..model import Reply, TokenUsage

__all__ = ["RunStore", "run_id_for", "DEFAULT_STORE"]

DEFAULT_STORE = Path(".langrag") / "runs.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, config TEXT NOT NULL, judge TEXT,
    created REAL NOT NULL, finished REAL, summary TEXT);
CREATE TABLE IF NOT EXISTS judgments (
    run_id TEXT NOT NULL, item TEXT NOT NULL, task TEXT NOT NULL, scored INTEGER NOT NULL,
    result TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (run_id, item, task));
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, model TEXT NOT NULL, key TEXT NOT NULL,
    cached INTEGER NOT NULL, ok INTEGER NOT NULL, attempts INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost REAL,
    error TEXT, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS artifacts (
    run_id TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (run_id, name));
"""


def run_id_for(kind: str, config: dict[str, Any]) -> str:
    """The deterministic id of a run: the same command with the same settings resumes the same run."""
    digest = hashlib.sha256(json.dumps({"kind": kind, **config}, sort_keys=True,
                                       default=str).encode()).hexdigest()
    return f"{kind}-{digest[:12]}"


class RunStore:
    """Thread-safe access to one SQLite run store file (``:memory:`` for a throwaway store)."""

    def __init__(self, path: str | Path = DEFAULT_STORE, *, commit_interval: float = 0.05) -> None:
        self.path = str(path)
        self.commit_interval = commit_interval
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path}: cannot open the run store: {exc}") from None
        self._lock = threading.Lock()
        self._timer_pending = [False]  # shared with the timer thread, which must not hold the store
        # Pending grouped writes are committed on close, on garbage collection and at exit.
        self._finalizer = weakref.finalize(self, _commit, self._db, self._lock)

    def close(self) -> None:
        with self._lock:
            if self._db.in_transaction:
                self._db.commit()
            self._db.close()

    def flush(self) -> None:
        """Commit grouped writes (replies, call log) now."""
        _commit(self._db, self._lock)

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """A durable write: committed now, with any grouped writes made before it."""
        with self._lock:
            cursor = self._db.execute(sql, args)
            if self._db.in_transaction:
                self._db.commit()
            return cursor

    def _exec_grouped(self, sql: str, args: tuple[Any, ...]) -> None:
        """A write that may wait up to ``commit_interval`` seconds for its commit."""
        with self._lock:
            if not self._db.in_transaction:
                self._db.execute("BEGIN")
            # One timer serves every write made before it fires. A timer per transaction started a
            # thread for almost every judged item (each durable write ends the transaction), and
            # each start held the event loop for about a millisecond.
            if not self._timer_pending[0]:
                self._timer_pending[0] = True
                timer = threading.Timer(self.commit_interval, _commit_pending,
                                        (self._db, self._lock, self._timer_pending))
                timer.daemon = True
                timer.start()
            self._db.execute(sql, args)

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # ---- runs
    def open_run(self, kind: str, config: dict[str, Any], run_id: str | None = None,
                 judge: str | None = None) -> str:
        """Create the run, or find it again when it exists (that is how a run resumes)."""
        run_id = run_id or run_id_for(kind, config)
        self._exec("INSERT OR IGNORE INTO runs (id, kind, config, judge, created) VALUES (?,?,?,?,?)",
                   (run_id, kind, json.dumps(config, default=str), judge, time.time()))
        return run_id

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self._exec("UPDATE runs SET finished=?, summary=? WHERE id=?",
                   (time.time(), json.dumps(summary, default=str), run_id))

    def run(self, run_id: str) -> dict[str, Any]:
        # A prefix, matched literally: '%' or '_' in what the user typed must not act as a wildcard.
        prefix = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._rows("SELECT id, kind, config, judge, created, finished, summary FROM runs "
                          "WHERE id=? OR id LIKE ? ESCAPE '\\' ORDER BY created DESC", (run_id, prefix + "%"))
        if not rows:
            raise ConfigError(f"{self.path}: no run {run_id!r}; known runs: "
                              f"{', '.join(r['id'] for r in self.runs()[:10]) or 'none'}")
        exact = [r for r in rows if r[0] == run_id]
        if not exact and len(rows) > 1:
            raise ConfigError(f"{self.path}: run prefix {run_id!r} matches {len(rows)} runs "
                              f"({', '.join(r[0] for r in rows[:5])}); give more of the id")
        r = exact[0] if exact else rows[0]
        return {"id": r[0], "kind": r[1], "config": json.loads(r[2]), "judge": r[3], "created": r[4],
                "finished": r[5], "summary": json.loads(r[6]) if r[6] else None}

    def runs(self) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, kind, judge, created, finished FROM runs ORDER BY created DESC")
        return [{"id": r[0], "kind": r[1], "judge": r[2], "created": r[3], "finished": r[4]} for r in rows]

    # ---- judgments
    def get_judgment(self, run_id: str, item: str, task: str) -> Any | None:
        rows = self._rows("SELECT result FROM judgments WHERE run_id=? AND item=? AND task=?",
                          (run_id, item, task))
        return json.loads(rows[0][0]) if rows else None

    def put_judgment(self, run_id: str, item: str, task: str, result: Any, *, scored: bool) -> None:
        self._exec("INSERT OR REPLACE INTO judgments (run_id, item, task, scored, result, created) "
                   "VALUES (?,?,?,?,?,?)", (run_id, item, task, int(scored),
                                            json.dumps(result, default=str), time.time()))

    def judgments(self, run_id: str, task: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT item, task, scored, result FROM judgments WHERE run_id=?"
        args: tuple[Any, ...] = (run_id,)
        if task is not None:
            sql, args = sql + " AND task=?", (run_id, task)
        return [{"item": r[0], "task": r[1], "scored": bool(r[2]), "result": json.loads(r[3])}
                for r in self._rows(sql + " ORDER BY created, item", args)]

    # ---- cache and calls
    def cache_get(self, key: str) -> Reply | None:
        rows = self._rows("SELECT text, prompt_tokens, completion_tokens FROM cache WHERE key=?", (key,))
        if not rows:
            return None
        text, pt, ct = rows[0]
        return Reply(text=text, usage=TokenUsage(prompt_tokens=pt, completion_tokens=ct))

    def cache_put(self, key: str, model: str, reply: Reply) -> None:
        self._exec_grouped("INSERT OR REPLACE INTO cache VALUES (?,?,?,?,?,?)",
                   (key, model, reply.text, reply.usage.prompt_tokens, reply.usage.completion_tokens,
                    time.time()))

    def log_call(self, run_id: str | None, model: str, key: str, *, cached: bool, ok: bool,
                 attempts: int, usage: TokenUsage, cost: float | None, error: str | None) -> None:
        self._exec_grouped("INSERT INTO calls (run_id, model, key, cached, ok, attempts, prompt_tokens, "
                   "completion_tokens, cost, error, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (run_id, model, key, int(cached), int(ok), attempts, usage.prompt_tokens,
                    usage.completion_tokens, cost, error, time.time()))

    def usage(self, run_id: str) -> dict[str, Any]:
        """Calls and tokens of one run: ``calls`` reached a model, ``cached`` were answered locally."""
        rows = self._rows(
            "SELECT model, SUM(1-cached), SUM(cached), SUM(1-ok), SUM(attempts*(1-cached)), "
            "SUM(CASE WHEN cached=0 THEN prompt_tokens ELSE 0 END), "
            "SUM(CASE WHEN cached=0 THEN completion_tokens ELSE 0 END), SUM(cost) "
            "FROM calls WHERE run_id=? GROUP BY model", (run_id,))
        per_model = {r[0]: {"calls": r[1] or 0, "cached": r[2] or 0, "failed": r[3] or 0,
                            "attempts": r[4] or 0, "prompt_tokens": r[5] or 0,
                            "completion_tokens": r[6] or 0, "cost": r[7]} for r in rows}
        total = {k: sum(m[k] for m in per_model.values())
                 for k in ("calls", "cached", "failed", "attempts", "prompt_tokens", "completion_tokens")}
        costs = [m["cost"] for m in per_model.values() if m["cost"] is not None]
        total["cost"] = sum(costs) if costs else None
        return {"total": total, "models": per_model}

    def call_keys(self, run_id: str | None = None, *, cached: bool = False) -> Iterator[str]:
        sql = "SELECT key FROM calls WHERE cached=?" + (" AND run_id=?" if run_id else "")
        args = (int(cached), run_id) if run_id else (int(cached),)
        return (r[0] for r in self._rows(sql + " ORDER BY id", args))

    # ---- artifacts: summaries a capability computes for the report
    def put_artifact(self, run_id: str, name: str, data: Any) -> None:
        self._exec("INSERT OR REPLACE INTO artifacts VALUES (?,?,?,?)",
                   (run_id, name, json.dumps(data, default=str), time.time()))

    def get_artifact(self, run_id: str, name: str) -> Any | None:
        rows = self._rows("SELECT data FROM artifacts WHERE run_id=? AND name=?", (run_id, name))
        return json.loads(rows[0][0]) if rows else None

    def artifacts(self, run_id: str) -> dict[str, Any]:
        return {r[0]: json.loads(r[1]) for r in
                self._rows("SELECT name, data FROM artifacts WHERE run_id=? ORDER BY created", (run_id,))}


def _commit_pending(db: sqlite3.Connection, lock: threading.Lock, pending: list[bool]) -> None:
    with lock:
        pending[0] = False
        try:
            if db.in_transaction:
                db.commit()
        except sqlite3.ProgrammingError:  # closed already
            pass


def _commit(db: sqlite3.Connection, lock: threading.Lock) -> None:
    with lock:
        try:
            if db.in_transaction:
                db.commit()
        except sqlite3.ProgrammingError:  # closed already
            pass
