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
import os
import socket
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import ConfigError
from ..model import Reply, TokenUsage
from .lease import DEFAULT_TTL, OWNER, LeaseKeeper, wait_message
from .schema import check_readable, prepare

__all__ = ["RunStore", "run_id_for", "DEFAULT_STORE", "RunBusyError", "StaleRunError"]


class RunBusyError(ConfigError):
    """Another process holds the run's lease and the caller chose not to wait."""


class StaleRunError(ConfigError):
    """A named run was made from other inputs than the ones given now."""

DEFAULT_STORE = Path(".langrag") / "runs.sqlite"

def run_id_for(kind: str, config: dict[str, Any]) -> str:
    """The deterministic id of a run: the same command with the same settings resumes the same run."""
    digest = hashlib.sha256(json.dumps({"kind": kind, **config}, sort_keys=True,
                                       default=str).encode()).hexdigest()
    return f"{kind}-{digest[:12]}"


class RunStore:
    """Thread-safe access to one SQLite run store file (``:memory:`` for a throwaway store)."""

    def __init__(self, path: str | Path = DEFAULT_STORE, *, commit_interval: float = 0.05,
                 read_only: bool = False, lease_ttl: float = DEFAULT_TTL) -> None:
        self.path = str(path)
        self.commit_interval = commit_interval
        self.read_only = read_only
        self.lease_ttl = lease_ttl
        self._db = _connect(self.path, read_only)
        self._lock = threading.Lock()
        self._timer_pending = [False]  # shared with the timer thread, which must not hold the store
        self._leases: set[str] = set()
        self._counts: dict[str, Any] = {}
        ref = weakref.ref(self)
        self._keeper = LeaseKeeper(lambda: (ref() or _Gone()).renew_leases(), ttl=lease_ttl)
        # Pending grouped writes are committed, and leases given back, on close, on garbage
        # collection and at exit.
        self._finalizer = weakref.finalize(self, _shutdown, self._db, self._lock, self._leases,
                                           self._keeper)

    def close(self) -> None:
        self._finalizer()

    def flush(self) -> None:
        """Commit grouped writes (replies, call log) now."""
        _commit(self._db, self._lock)

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """A durable write: committed now, with any grouped writes made before it."""
        with self._lock, self._damage():
            cursor = self._db.execute(sql, args)
            if self._db.in_transaction:
                self._db.commit()
            return cursor

    def _damage(self) -> "_StoreErrors":
        return _StoreErrors(self.path)

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
            with self._damage():
                self._db.execute(sql, args)

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._damage():
            return self._db.execute(sql, args).fetchall()

    def _json(self, text: str, what: str) -> Any:
        try:
            return json.loads(text)
        except (ValueError, TypeError):
            raise ConfigError(f"{self.path}: {what} is not valid JSON; the store is damaged or was "
                              "written by something else; use another --store") from None

    # ---- runs
    def open_run(self, kind: str, config: dict[str, Any], run_id: str | None = None,
                 judge: str | None = None, *, inputs: dict[str, str] | None = None,
                 allow_changed: bool = False, wait: bool = True,
                 on_wait: Callable[[str], None] | None = None) -> str:
        """Create the run, or find it again when it exists (that is how a run resumes), and take its
        lease: one writer per run. ``inputs`` are digests of what the run is made from (file
        contents); a run found again with other inputs is refused unless ``allow_changed``, since its
        finished judgments would describe other content. Without ``wait``, a run held by another
        process is refused at once; with it, ``on_wait`` is told once and the call waits."""
        run_id = run_id or run_id_for(kind, {**config, **({"inputs": inputs} if inputs else {})})
        if self.read_only:
            raise ConfigError(f"{self.path}: the store was opened read-only")
        self._exec("INSERT OR IGNORE INTO runs (id, kind, config, judge, created, inputs) "
                   "VALUES (?,?,?,?,?,?)", (run_id, kind, json.dumps(config, default=str), judge,
                                            time.time(), json.dumps(inputs, sort_keys=True) if inputs else None))
        told = False
        while (holder := self._take_lease(run_id)) is not None:
            if not wait:
                raise RunBusyError(wait_message(run_id, holder) + "; wait for it, or give another --run")
            if on_wait is not None and not told:
                on_wait(wait_message(run_id, holder) + "; waiting for it")
                told = True
            time.sleep(min(1.0, self.lease_ttl / 10))
        try:  # under the lease: no other process changes the run while it is checked
            self._check_same_run(run_id, config, inputs, allow_changed)
        except BaseException:
            self.release(run_id)
            raise
        return run_id

    def count_batch(self, run_id: str, counts: Any) -> None:
        """Add one batch's reuse counts to the run's tally for this process (see ``batch_counts``)."""
        mine = self._counts.setdefault(run_id, type(counts)())
        mine.add(counts)

    def batch_counts(self, run_id: str) -> Any | None:
        """Reused / judged / changed counts of the batches this process ran in the run."""
        return self._counts.get(run_id)

    def _check_same_run(self, run_id: str, config: dict[str, Any], inputs: dict[str, str] | None,
                        allow_changed: bool) -> None:
        """A run found again must be the same work: same settings, same input contents. Changed
        inputs keep the run (per-item fingerprints decide what is judged again); changed settings
        drop its judgments, since every one of them may depend on the settings."""
        row = self._rows("SELECT config, inputs FROM runs WHERE id=?", (run_id,))[0]
        before_config = self._json(row[0], f"run {run_id}'s settings")
        before_inputs = self._json(row[1], f"run {run_id}'s inputs") if row[1] else None
        now_config = json.loads(json.dumps(config, default=str))
        changed = sorted(k for k in set(before_config) | set(now_config)
                         if before_config.get(k) != now_config.get(k))
        changed_inputs = sorted(k for k in set(before_inputs or {}) | set(inputs or {})
                                if inputs is not None and (before_inputs or {}).get(k) != inputs.get(k))
        if before_inputs is None and inputs is not None:
            changed_inputs = []  # a run stored before input digests existed: fingerprints decide
        if (changed or changed_inputs) and not allow_changed:
            what = ([f"other contents of {', '.join(changed_inputs)}"] if changed_inputs else []) + \
                   ([f"other settings ({', '.join(changed)})"] if changed else [])
            raise StaleRunError(f"run {run_id} was made from {' and '.join(what)}; give another --run "
                                "name, or --continue to keep the run (changed items are judged again, "
                                "unchanged ones reused)")
        if changed:
            self._exec("DELETE FROM judgments WHERE run_id=?", (run_id,))
            self._exec("DELETE FROM artifacts WHERE run_id=?", (run_id,))
        if changed or (inputs is not None and before_inputs != inputs):
            self._exec("UPDATE runs SET config=?, inputs=?, finished=NULL, summary=NULL WHERE id=?",
                       (json.dumps(config, default=str),
                        json.dumps(inputs, sort_keys=True) if inputs else None, run_id))

    # ---- leases: one writer per run
    def _take_lease(self, run_id: str) -> dict[str, Any] | None:
        """Take or renew the lease; the holder's row when another live process has it."""
        now = time.time()
        with self._lock, self._damage():
            if self._db.in_transaction:
                self._db.commit()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT owner, pid, host, expires FROM leases WHERE run_id=?",
                                       (run_id,)).fetchone()
                if row is not None and row[0] != OWNER and row[3] > now:
                    return {"owner": row[0], "pid": row[1], "host": row[2], "expires": row[3]}
                self._db.execute("INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?,?)",
                                 (run_id, OWNER, os.getpid(), socket.gethostname(), now,
                                  now + self.lease_ttl))
            finally:
                self._db.execute("COMMIT")
        self._leases.add(run_id)
        self._keeper.start()
        return None

    def renew_leases(self) -> None:
        for run_id in list(self._leases):
            self._exec("UPDATE leases SET expires=? WHERE run_id=? AND owner=?",
                       (time.time() + self.lease_ttl, run_id, OWNER))

    def release(self, run_id: str) -> None:
        """Give the run's lease back (done by ``finish_run`` and ``close``)."""
        self._leases.discard(run_id)
        if not self.read_only:
            self._exec("DELETE FROM leases WHERE run_id=? AND owner=?", (run_id, OWNER))

    def lease_holder(self, run_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT owner, pid, host, expires FROM leases WHERE run_id=? AND expires>?",
                          (run_id, time.time()))
        return {"owner": rows[0][0], "pid": rows[0][1], "host": rows[0][2], "expires": rows[0][3]} if rows else None

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self._exec("UPDATE runs SET finished=?, summary=? WHERE id=?",
                   (time.time(), json.dumps(summary, default=str), run_id))
        self.release(run_id)

    def run(self, run_id: str) -> dict[str, Any]:
        # A prefix, matched literally: '%' or '_' in what the user typed must not act as a wildcard.
        prefix = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._rows("SELECT id, kind, config, judge, created, finished, summary, inputs FROM runs "
                          "WHERE id=? OR id LIKE ? ESCAPE '\\' ORDER BY created DESC", (run_id, prefix + "%"))
        if not rows:
            raise ConfigError(f"{self.path}: no run {run_id!r}; known runs: "
                              f"{', '.join(r['id'] for r in self.runs()[:10]) or 'none'}")
        exact = [r for r in rows if r[0] == run_id]
        if not exact and len(rows) > 1:
            raise ConfigError(f"{self.path}: run prefix {run_id!r} matches {len(rows)} runs "
                              f"({', '.join(r[0] for r in rows[:5])}); give more of the id")
        r = exact[0] if exact else rows[0]
        return {"id": r[0], "kind": r[1], "config": self._json(r[2], f"run {r[0]}'s settings"),
                "judge": r[3], "created": r[4], "finished": r[5],
                "summary": self._json(r[6], f"run {r[0]}'s summary") if r[6] else None,
                "inputs": self._json(r[7], f"run {r[0]}'s inputs") if r[7] else None}

    def runs(self) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, kind, judge, created, finished FROM runs ORDER BY created DESC")
        return [{"id": r[0], "kind": r[1], "judge": r[2], "created": r[3], "finished": r[4]} for r in rows]

    # ---- judgments
    def get_judgment(self, run_id: str, item: str, task: str) -> Any | None:
        record = self.get_judgment_record(run_id, item, task)
        return None if record is None else record[0]

    def get_judgment_record(self, run_id: str, item: str, task: str) -> tuple[Any, str | None] | None:
        """The stored result with the fingerprint of the content it was made from."""
        rows = self._rows("SELECT result, fingerprint FROM judgments WHERE run_id=? AND item=? AND task=?",
                          (run_id, item, task))
        if not rows:
            return None
        return self._json(rows[0][0], f"run {run_id}'s judgment {item!r} ({task})"), rows[0][1]

    def put_judgment(self, run_id: str, item: str, task: str, result: Any, *, scored: bool,
                     fingerprint: str | None = None) -> None:
        self._exec("INSERT OR REPLACE INTO judgments (run_id, item, task, scored, result, created, "
                   "fingerprint) VALUES (?,?,?,?,?,?,?)",
                   (run_id, item, task, int(scored), json.dumps(result, default=str), time.time(),
                    fingerprint))

    def judgments(self, run_id: str, task: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT item, task, scored, result FROM judgments WHERE run_id=?"
        args: tuple[Any, ...] = (run_id,)
        if task is not None:
            sql, args = sql + " AND task=?", (run_id, task)
        return [{"item": r[0], "task": r[1], "scored": bool(r[2]),
                 "result": self._json(r[3], f"run {run_id}'s judgment {r[0]!r} ({r[1]})")}
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
        return self._json(rows[0][0], f"run {run_id}'s artifact {name!r}") if rows else None

    def artifacts(self, run_id: str) -> dict[str, Any]:
        return {r[0]: self._json(r[1], f"run {run_id}'s artifact {r[0]!r}") for r in
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


def _shutdown(db: sqlite3.Connection, lock: threading.Lock, leases: set[str], keeper: LeaseKeeper) -> None:
    keeper.stop()
    with lock:
        try:
            for run_id in list(leases):
                db.execute("DELETE FROM leases WHERE run_id=? AND owner=?", (run_id, OWNER))
            leases.clear()
            if db.in_transaction:
                db.commit()
            db.close()
        except sqlite3.Error:  # closed already, or a read-only store
            pass


class _Gone:
    def renew_leases(self) -> None:
        raise RuntimeError("store collected")


class _StoreErrors:
    """SQLite's own errors (a damaged file, a read-only folder, a full disk) as one line naming
    the store, instead of a traceback from deep inside a batch."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.ProgrammingError):
            raise ConfigError(f"{self.path}: the run store cannot be used: {exc}") from None
        return False


def _connect(path: str, read_only: bool) -> sqlite3.Connection:
    """Open (and for writing, create or migrate) the store; every failure is one line naming it."""
    if path != ":memory:":
        p = Path(path)
        if p.is_dir():
            raise ConfigError(f"{path}: is a folder; --store names the run store file")
        if read_only and not p.exists():
            raise ConfigError(f"{path}: no run store here; run a judging command first, or give --store")
        if not read_only:
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"{path}: cannot create the store's folder ({exc.strerror})") from None
            if p.exists() and not os.access(p, os.W_OK):
                raise ConfigError(f"{path}: the run store is read-only; make it writable or use another --store")
            if not os.access(p.parent, os.W_OK):
                raise ConfigError(f"{path}: its folder is not writable (the store keeps a journal "
                                  "beside it); use another --store")
        if p.exists() and not os.access(p, os.R_OK):
            raise ConfigError(f"{path}: the run store cannot be read (permission denied)")
    try:
        if read_only and path != ":memory:":
            db = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True,
                                 check_same_thread=False, isolation_level=None, timeout=30)
            check_readable(db, path)
            return db
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        prepare(db, path)
        return db
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{path}: cannot open the run store: {exc}") from None
