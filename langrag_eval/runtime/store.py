"""The run store: one SQLite file holding runs, judgments, model calls, the reply cache and artifacts.

Every finished judgment is committed before its batch goes on (WAL journal), together with every
model reply and call-log row written before it, so a run killed with ``kill -9`` and started again
with the same arguments resumes: finished judgments are read back, and their replies come from the
cache, not the model. A batch on an event loop commits the judgments its items finished in one step
of the loop together (:meth:`RunStore.aput_judgment`), each item's worker waiting for that commit
before it takes its next item: a kill still loses at most the items in flight. Replies and call-log
rows on their own are committed in groups, at most ``commit_interval`` seconds after they are
written (a commit costs far more than an insert, and there are two per call).

>>> store = RunStore(":memory:")
>>> run = store.open_run("grade", {"file": "qa.csv"})
>>> store.put_judgment(run, "q1", "vrag", {"score": 4}, scored=True)
>>> store.get_judgment(run, "q1", "vrag")
{'score': 4}
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import ConfigError, redact
from .lease import DEFAULT_TTL, LeaseKeeper, RunBusyError, owner_id
from .schema import check_openable, check_readable, prepare
from .store_base import _PUT_JUDGMENT, StaleRunError, StoreBase, _stored, run_id_for

__all__ = ["RunStore", "open_store", "run_id_for", "DEFAULT_STORE", "RunBusyError", "StaleRunError"]

DEFAULT_STORE = Path(".langrag") / "runs.sqlite"


class RunStore(StoreBase):
    """Thread-safe access to one SQLite run store file (``:memory:`` for a throwaway store)."""

    def __init__(self, path: str | Path = DEFAULT_STORE, *, commit_interval: float = 0.05,
                 read_only: bool = False, lease_ttl: float = DEFAULT_TTL) -> None:
        self.path = str(path)
        self.commit_interval = commit_interval
        self.read_only = read_only
        self.lease_ttl = lease_ttl
        self._db = _connect(self.path, read_only)
        self._lock = threading.Lock()
        self._committer = _Committer(self._db, self._lock, commit_interval)  # must not hold the store
        # per event loop, the judgments written in its current step, waiting for its end's commit
        self._step: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
        self._start()
        # Pending grouped writes are committed, and leases given back, on close, on garbage
        # collection and at exit.
        self._finalizer = weakref.finalize(self, _shutdown, self._db, self._lock, self._leases,
                                           self._keeper, self._committer)

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

    async def aput_judgment(self, run_id: str, item: str, task: str, result: Any, *, scored: bool,
                            fingerprint: str | None = None) -> None:
        """:meth:`put_judgment`, committed at the end of the event loop's step together with every
        judgment written in that step (a burst of judgments finished together, as a judge that
        answers at once gives, costs one commit instead of one each); returns once committed."""
        loop = asyncio.get_running_loop()
        self._fenced(run_id, _PUT_JUDGMENT, (run_id, item, task, int(scored), _stored(result), time.time(),
                                             fingerprint), write=self._exec_uncommitted)
        done = loop.create_future()
        with self._lock:
            waiting = self._step.setdefault(loop, [])
            waiting.append(done)
            if len(waiting) == 1:
                loop.call_soon(self._end_step, loop)
        await done

    def _exec_uncommitted(self, sql: str, args: tuple[Any, ...]) -> sqlite3.Cursor:
        """A write left in the open transaction, for :meth:`_end_step` (or any earlier commit)."""
        with self._lock, self._damage():
            if not self._db.in_transaction:
                self._db.execute("BEGIN")
            return self._db.execute(sql, args)

    def _end_step(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            waiting = self._step.pop(loop, [])
            try:
                with self._damage():
                    if self._db.in_transaction:
                        self._db.commit()
            except Exception as exc:  # noqa: BLE001 - each waiting batch raises it
                for done in waiting:
                    if not done.done():
                        done.set_exception(exc)
                return
        for done in waiting:
            if not done.done():
                done.set_result(None)

    def _damage(self) -> "_StoreErrors":
        return _StoreErrors(self.path)

    def _exec_grouped(self, sql: str, args: tuple[Any, ...]) -> None:
        """A write that may wait up to ``commit_interval`` seconds for its commit."""
        with self._lock:
            if not self._db.in_transaction:
                self._db.execute("BEGIN")
            self._committer.request()
            with self._damage():
                self._db.execute(sql, args)

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._damage():
            return self._db.execute(sql, args).fetchall()

class _Committer:
    """Commits grouped writes ``interval`` seconds after the first of them, on one thread for the
    store's life. (A timer per commit started a thread twenty times a second, and each start held
    the event loop for about a millisecond on a busy machine.)"""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock, interval: float) -> None:
        self.db, self.lock, self.interval = db, lock, interval
        self.wanted = threading.Event()
        self.stopped = False
        self.thread: threading.Thread | None = None

    def request(self) -> None:
        """A grouped write was made: commit it within ``interval`` seconds."""
        if not self.wanted.is_set():
            self.wanted.set()
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="langrag-commit", daemon=True)
                self.thread.start()

    def stop(self) -> None:
        self.stopped = True
        self.wanted.set()

    def _run(self) -> None:
        while True:
            self.wanted.wait()
            if self.stopped:
                return
            time.sleep(self.interval)
            self.wanted.clear()  # before the commit: a write made after it asks again
            _commit(self.db, self.lock)


def _commit(db: sqlite3.Connection, lock: threading.Lock) -> None:
    with lock:
        try:
            if db.in_transaction:
                db.commit()
        except sqlite3.ProgrammingError:  # closed already
            pass


def _shutdown(db: sqlite3.Connection, lock: threading.Lock, leases: set[str], keeper: LeaseKeeper,
              committer: _Committer) -> None:
    keeper.stop()
    committer.stop()
    with lock:
        try:
            for run_id in list(leases):
                db.execute("DELETE FROM leases WHERE run_id=? AND owner=?", (run_id, owner_id()))
            leases.clear()
            if db.in_transaction:
                db.commit()
            db.close()
        except sqlite3.Error:  # closed already, or a read-only store
            pass


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
            made = not p.parent.exists()
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
                if made:  # a folder the store makes is kept out of version control, as the quickstart's is
                    (p.parent / ".gitignore").write_text(
                        "# made by langrag-eval for its run store: keep it out of version control\n*\n",
                        encoding="utf-8")
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
            db = sqlite3.connect(_read_only_uri(path), uri=True,
                                 check_same_thread=False, isolation_level=None, timeout=30)
            check_openable(db, path)  # damaged, newer or another program's: the same words as a writer's
            check_readable(db, path)
            return db
        if path != ":memory:" and Path(path).is_file() and Path(path).stat().st_size > 0:
            _refuse_unusable(path)
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=_BUSY_TIMEOUT)
        _use_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")
        prepare(db, path)
        return db
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{path}: cannot open the run store: {exc}") from None


_BUSY_TIMEOUT = 30.0


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch the store to its write-ahead log. The switch needs the file to itself, and SQLite
    answers "database is locked" at once, without its busy timeout, while another process holds
    it (two commands creating one store at the same moment): retried here within the same timeout."""
    deadline, pause = time.monotonic() + _BUSY_TIMEOUT, 0.001
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


def _read_only_uri(path: str) -> str:
    """A URI that reads the store without writing a byte beside it: without a write-ahead log
    beside it the file holds everything, and ``immutable`` reads it without creating one; with a log
    (a store in use), read-only mode reads through it."""
    resolved = Path(path).resolve()
    mode = "mode=ro" if Path(f"{resolved}-wal").exists() else "mode=ro&immutable=1"
    return f"file:{quote(str(resolved))}?{mode}"


def _refuse_unusable(path: str) -> None:
    """Look at an existing store read-only before opening it for writing: a file that is not a
    store, is damaged or has a newer schema is refused untouched (opening it for writing would
    already switch its journal mode, and closing it would checkpoint into it)."""
    db = sqlite3.connect(_read_only_uri(path), uri=True, check_same_thread=False, isolation_level=None,
                         timeout=30)
    try:
        check_openable(db, path)
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{path}: cannot open the run store: {exc}") from None
    finally:
        db.close()


def open_store(spec: str | Path | None = None, *, read_only: bool = False) -> StoreBase:
    """The run store ``spec`` names: a ``postgresql://`` URL, or a SQLite file path. Without one,
    ``$LANGRAG_STORE``, else the default SQLite file.

    >>> open_store(":memory:").path
    ':memory:'
    """
    spec = spec if spec is not None else os.environ.get("LANGRAG_STORE") or DEFAULT_STORE
    from .pgstore import PostgresRunStore, is_postgres_url
    if is_postgres_url(str(spec)):
        return PostgresRunStore(str(spec), read_only=read_only)
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", str(spec)):  # mongodb://..., never a file of that name
        raise ConfigError(f"{redact(str(spec))}: unknown store scheme; use a postgresql:// URL or a SQLite file path")
    return RunStore(spec, read_only=read_only)
