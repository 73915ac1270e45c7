"""The run store on PostgreSQL: the same tables and operations as the SQLite file, shared by
several worker processes on one or many machines.

Give ``--store postgresql://user@host/db`` (or set ``LANGRAG_STORE``). Workers started with the same
command on the same store work on one run together: each claims a slice of the unfinished items
(:meth:`PostgresRunStore.claim`, a conditional upsert: a claim held by a live worker is never
taken, an expired one is), judges them, and renews its claims while it works. A worker killed with
``kill -9`` stops renewing; its items are taken over once their claims expire. The reply cache is
shared, so a prompt one worker paid for is served to the others.

Credentials come from the URL or the environment (``PGPASSWORD``, ``~/.pgpass``); they are never
stored, and every message shows the URL without them.
"""

from __future__ import annotations

import random
import threading
import time
import weakref
from typing import Any, Sequence

from ..errors import ConfigError, redact
from .lease import DEFAULT_TTL, owner_id
from .store_base import StoreBase, _stored

__all__ = ["PostgresRunStore", "SCHEMA_VERSION", "is_postgres_url"]

SCHEMA_VERSION = 2

_DDL = """
CREATE TABLE IF NOT EXISTS langrag_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, config TEXT NOT NULL, judge TEXT,
    created DOUBLE PRECISION NOT NULL, finished DOUBLE PRECISION, summary TEXT, inputs TEXT);
CREATE TABLE IF NOT EXISTS judgments (
    run_id TEXT NOT NULL, item TEXT NOT NULL, task TEXT NOT NULL, scored INTEGER NOT NULL,
    result TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, fingerprint TEXT,
    PRIMARY KEY (run_id, item, task));
CREATE TABLE IF NOT EXISTS calls (
    id BIGSERIAL PRIMARY KEY, run_id TEXT, model TEXT NOT NULL, key TEXT NOT NULL,
    cached INTEGER NOT NULL, ok INTEGER NOT NULL, attempts INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost DOUBLE PRECISION,
    error TEXT, created DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS calls_run ON calls (run_id);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS artifacts (
    run_id TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, name));
CREATE TABLE IF NOT EXISTS leases (
    run_id TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    acquired DOUBLE PRECISION NOT NULL, expires DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS claims (
    run_id TEXT NOT NULL, task TEXT NOT NULL, item TEXT NOT NULL, owner TEXT NOT NULL,
    host TEXT NOT NULL, pid INTEGER NOT NULL, expires DOUBLE PRECISION NOT NULL, done INTEGER NOT NULL,
    PRIMARY KEY (run_id, task, item));
CREATE INDEX IF NOT EXISTS claims_open ON claims (run_id, task, done)
"""

_TABLES = ("runs", "judgments", "calls", "cache", "artifacts", "leases", "claims")


def is_postgres_url(spec: object) -> bool:
    return isinstance(spec, str) and spec.split("://", 1)[0] in ("postgresql", "postgres", "postgresql+psycopg")


def _engine(url: str, read_only: bool = False) -> Any:
    try:
        import psycopg  # noqa: F401
        import sqlalchemy
    except ImportError as exc:
        raise ConfigError(f"a PostgreSQL store needs {exc.name}: pip install 'langrag-eval[postgres]'") from None
    driver_url = "postgresql+psycopg://" + url.split("://", 1)[1]
    try:
        # One round trip a statement (autocommit), and commits that do not wait for the disk: a
        # worker killed with kill -9 loses nothing (its commits are in the server); only a crash of
        # the server itself can drop the last fraction of a second, which is then judged again.
        # No ping before each statement (a round trip of its own): a connection the server dropped
        # fails its statement, which _run then runs again on a fresh one.
        return sqlalchemy.create_engine(driver_url, pool_size=8, max_overflow=8,
                                        isolation_level="AUTOCOMMIT",
                                        connect_args={"options": _with_async_commit(url, read_only)})
    except Exception as exc:  # a malformed URL: SQLAlchemy's ArgumentError and friends
        raise ConfigError(f"{redact(url)}: not a usable PostgreSQL URL ({exc})") from None


def _with_async_commit(url: str, read_only: bool = False) -> str:
    from urllib.parse import parse_qs, urlsplit
    given = parse_qs(urlsplit(url).query).get("options", [""])[0]
    # A store opened to be read (a copy's source, a report's) cannot be written by any statement:
    # the server itself refuses, in every transaction of the session.
    return (given + " -csynchronous_commit=off" + (" -cdefault_transaction_read_only=on" if read_only else "")).strip()


class PostgresRunStore(StoreBase):
    """A run store in a PostgreSQL database; several processes may use one run at once.

    ``cooperative=True`` (the default) lets workers share runs through item claims instead of the
    one-writer lease the SQLite store uses.
    """

    def __init__(self, url: str, *, read_only: bool = False, lease_ttl: float = DEFAULT_TTL,
                 claim_ttl: float = 30.0, cooperative: bool = True) -> None:
        self.url = url
        self.path = redact(url)  # what messages name: never the password
        self.read_only = read_only
        self.lease_ttl = lease_ttl
        self.claim_ttl = claim_ttl
        self.cooperative = cooperative
        self._engine = _engine(url, read_only)
        self._errors = _pg_errors()
        self._prepare()
        self._start()
        self._claimed: set[tuple[str, str, str]] = set()
        # when each claim of this worker's expires, as it last wrote it
        self._held_until: dict[tuple[str, str, str], float] = {}
        self._claim_lock = threading.Lock()
        self._log_rows: list[tuple[Any, ...]] = []
        self._log_lock = threading.Lock()
        self._log_timer: threading.Timer | None = None
        self._finalizer = weakref.finalize(self, _shutdown, self._engine, self._leases, self._keeper,
                                           self._log_rows, self._log_lock)

    # ---- connection
    def _run(self, sql: str, args: Sequence[Any] = (), *, fetch: bool = False) -> Any:
        driver_sql = sql.replace("?", "%s")
        attempt = 0
        while True:
            try:
                with self._engine.connect() as conn:
                    result = conn.exec_driver_sql(driver_sql, tuple(args))
                    return result.fetchall() if fetch else result.rowcount
            except self._errors as exc:
                # Two workers claiming or renewing overlapping items can deadlock; the server then
                # aborts one statement. Every statement here is one idempotent autocommit upsert or
                # update, so it is simply run again.
                attempt += 1
                if not (_retryable(exc) or getattr(exc, "connection_invalidated", False)) or attempt == 8:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise ConfigError(f"{self.path}: the run store cannot be used: {redact(first)}") from None
                time.sleep(random.uniform(0.005, 0.05) * attempt)

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        return self._run(sql, args)

    def _exec_grouped(self, sql: str, args: tuple[Any, ...]) -> None:
        self._run(sql, args)

    def put_judgment(self, run_id: str, item: str, task: str, result: Any, *, scored: bool,
                     fingerprint: str | None = None, claim: str | None = None) -> None:
        if claim is None:
            return super().put_judgment(run_id, item, task, result, scored=scored, fingerprint=fingerprint)
        # The end of the claim and the judgment in one statement (one round trip, one commit), the
        # judgment written only when the claim is still this worker's: a worker paused past its
        # claim never writes over the one that took the item over.
        self._exec("WITH mine AS (UPDATE claims SET done=1 WHERE run_id=? AND task=? AND item=? AND owner=? "
                   "AND done=0 RETURNING 1) "
                   "INSERT INTO judgments (run_id, item, task, scored, result, created, fingerprint) "
                   "SELECT ?,?,?,?,?,?,? WHERE EXISTS (SELECT 1 FROM mine) ON CONFLICT (run_id, item, task) "
                   "DO UPDATE SET scored=excluded.scored, result=excluded.result, created=excluded.created, "
                   "fingerprint=excluded.fingerprint",
                   (run_id, task, claim, owner_id(),
                    run_id, item, task, int(scored), _stored(result), time.time(), fingerprint))
        with self._claim_lock:
            self._claimed.discard((run_id, task, claim))
            self._held_until.pop((run_id, task, claim), None)

    def log_call(self, run_id: str | None, model: str, key: str, *, cached: bool, ok: bool,
                 attempts: int, usage: Any, cost: float | None, error: str | None) -> None:
        """The call log is written in groups from a background thread, at most 50 ms late: a row
        costs a round trip, and the log is a record, not a result (the reply itself is in the cache)."""
        row = (run_id, redact(model), key, int(cached), int(ok), attempts, usage.prompt_tokens,
               usage.completion_tokens, cost, error, time.time())
        with self._log_lock:
            self._log_rows.append(row)
            if self._log_timer is None:
                self._log_timer = threading.Timer(0.05, self.flush)
                self._log_timer.daemon = True
                self._log_timer.start()

    def flush(self) -> None:
        with self._log_lock:
            self._log_timer = None
        try:
            _flush_log(self._engine, self._log_rows, self._log_lock)
        except self._errors as exc:
            raise ConfigError(f"{self.path}: the run store cannot be used: "
                              f"{redact(str(exc).splitlines()[0])}") from None

    def usage(self, run_id: str) -> dict[str, Any]:
        self.flush()
        return super().usage(run_id)

    def call_keys(self, run_id: str | None = None, *, cached: bool = False) -> Any:
        self.flush()
        return super().call_keys(run_id, cached=cached)

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self._run(sql, args, fetch=True)]

    def close(self) -> None:
        self.flush()
        self._finalizer()

    def _prepare(self) -> None:
        rows = self._rows("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
        present = {r[0] for r in rows}
        if "langrag_meta" in present:
            version = self._rows("SELECT value FROM langrag_meta WHERE key='schema_version'")
            try:
                found = int(str(version[0][0]).strip()) if version else 0
            except ValueError:
                raise ConfigError(f"{self.path}: the run store's schema version is {str(version[0][0])[:40]!r}, "
                                  "not a number; the store is damaged or was written by something else; "
                                  "use another database or schema") from None
            if found < 0:
                raise ConfigError(f"{self.path}: the run store's schema version is {found}, which no "
                                  "langrag-eval writes; use another database or schema")
            if found > SCHEMA_VERSION:
                raise ConfigError(f"{self.path}: run store schema version {found} is newer than this "
                                  f"langrag-eval reads ({SCHEMA_VERSION}); upgrade langrag-eval")
        elif present & set(_TABLES):
            raise ConfigError(f"{self.path}: holds tables named like a run store's ({', '.join(sorted(present & set(_TABLES)))}) "
                              "but no langrag-eval schema version; use another database or schema")
        if self.read_only:
            return
        try:
            with self._engine.connect() as conn:
                # one process creates the tables; the others wait for it here
                conn.exec_driver_sql("SELECT pg_advisory_lock(727274)")
                try:
                    for statement in _DDL.split(";"):
                        if statement.strip():
                            conn.exec_driver_sql(statement)
                    conn.exec_driver_sql("INSERT INTO langrag_meta VALUES ('schema_version', %s) "
                                         "ON CONFLICT (key) DO NOTHING", (str(SCHEMA_VERSION),))
                finally:
                    conn.exec_driver_sql("SELECT pg_advisory_unlock(727274)")
        except self._errors as exc:
            raise ConfigError(f"{self.path}: cannot prepare the run store: {redact(str(exc).splitlines()[0])}") from None

    def _of_items(self, items: Sequence[str] | None) -> tuple[str | None, tuple[Any, ...]]:
        if items is None:
            return "", ()
        return (" AND item = ANY(?)", (list(items),)) if items else (None, ())

    def judged_since(self, run_id: str, task: str, since: float) -> int:
        """How many of a task's judgments in a run were written at or after ``since``, by any worker:
        one row comes back however many there are (what a progress bar polls)."""
        return int(self._rows("SELECT COUNT(*) FROM judgments WHERE run_id=? AND task=? AND created>=?",
                              (run_id, task, since))[0][0])

    # ---- cooperating workers: item claims
    def claim(self, run_id: str, task: str, items: Sequence[str]) -> list[str]:
        """Claim those of ``items`` no live worker holds and none has finished; returns the claimed.
        Callers name an item by its key and content fingerprint, so an item whose content changed
        is a new claim, not one finished before."""
        if not items:
            return []
        now = time.time()
        rows = self._rows(
            "INSERT INTO claims (run_id, task, item, owner, host, pid, expires, done) "
            "SELECT ?, ?, k, ?, ?, ?, ?, 0 FROM unnest(?::text[]) AS k ORDER BY k "
            "ON CONFLICT (run_id, task, item) DO UPDATE SET owner=excluded.owner, host=excluded.host, "
            "pid=excluded.pid, expires=excluded.expires "
            "WHERE claims.done=0 AND (claims.expires<? OR claims.owner=excluded.owner) RETURNING item",
            (run_id, task, owner_id(), _host(), _pid(), now + self.claim_ttl, list(items), now))
        got = [r[0] for r in rows]
        with self._claim_lock:
            self._claimed.update((run_id, task, k) for k in got)
            self._held_until.update(((run_id, task, k), now + self.claim_ttl) for k in got)
        if got:
            self._keeper.start()
        return got

    def hold_claim(self, run_id: str, task: str, item: str) -> bool:
        """Renew one claim before paying for its item: True while it is still this worker's and not
        done. A worker paused past the claim's lifetime finds here that another took it over (a
        conditional write on the claim's owner), and leaves the item to that one. A claim this worker
        wrote with over half its lifetime left is still its own without asking: no other worker
        takes a claim before it expires, and a pause long enough to matter leaves less than half."""
        key = (run_id, task, item)
        now = time.time()
        with self._claim_lock:
            if now < self._held_until.get(key, 0.0) - self.claim_ttl / 2:
                return True
        held = self._rows("UPDATE claims SET expires=? WHERE run_id=? AND task=? AND item=? AND owner=? "
                          "AND done=0 RETURNING item", (now + self.claim_ttl, run_id, task, item, owner_id()))
        with self._claim_lock:
            if held:
                self._held_until[key] = now + self.claim_ttl
            else:
                self._claimed.discard(key)
                self._held_until.pop(key, None)
        return bool(held)

    def finish_claims(self, run_id: str, task: str, items: Sequence[str]) -> None:
        """Mark items done (their judgments are stored): nobody claims them again."""
        items = list(items)
        if items:
            self._exec("UPDATE claims SET done=1 WHERE run_id=? AND task=? AND item = ANY(?) AND owner=?",
                       (run_id, task, list(items), owner_id()))
        with self._claim_lock:
            self._claimed.difference_update((run_id, task, k) for k in items)
            for k in items:
                self._held_until.pop((run_id, task, k), None)

    def open_claims(self, run_id: str, task: str) -> int:
        """Items other live workers hold and have not finished."""
        return self._rows("SELECT COUNT(*) FROM claims WHERE run_id=? AND task=? AND done=0 AND expires>?",
                          (run_id, task, time.time()))[0][0]

    def renew_leases(self) -> None:
        super().renew_leases()
        with self._claim_lock:
            held = list(self._claimed)
        by_task: dict[tuple[str, str], list[str]] = {}
        for run_id, task, item in held:
            by_task.setdefault((run_id, task), []).append(item)
        for (run_id, task), items in by_task.items():
            until = time.time() + self.claim_ttl
            # only the claims still this worker's are renewed: one taken over while it was paused is not
            renewed = self._rows("UPDATE claims SET expires=? WHERE run_id=? AND task=? AND item = ANY(?) "
                                 "AND owner=? AND done=0 RETURNING item", (until, run_id, task, items, owner_id()))
            with self._claim_lock:
                for (item,) in renewed:
                    if (run_id, task, item) in self._claimed:
                        self._held_until[run_id, task, item] = until

    def workers(self, run_id: str) -> list[dict[str, Any]]:
        """Each worker's progress on the run: items finished, items held now, and when it was last seen."""
        rows = self._rows(
            "SELECT host, pid, SUM(done), SUM(CASE WHEN done=0 AND expires>? THEN 1 ELSE 0 END), MAX(expires) "
            "FROM claims WHERE run_id=? GROUP BY host, pid ORDER BY host, pid", (time.time(), run_id))
        return [{"host": r[0], "pid": r[1], "finished": int(r[2] or 0), "holding": int(r[3] or 0),
                 "alive": (r[4] or 0) > time.time()} for r in rows]


def _retryable(exc: BaseException) -> bool:
    """A deadlock or serialization failure (SQLSTATE 40P01 / 40001): the server says try again."""
    return getattr(getattr(exc, "orig", None), "sqlstate", None) in ("40P01", "40001")


def _host() -> str:
    return owner_id().split(":", 1)[0]


def _pid() -> int:
    return int(owner_id().split(":")[1])


def _pg_errors() -> tuple[type[BaseException], ...]:
    import sqlalchemy.exc
    return (sqlalchemy.exc.SQLAlchemyError,)


def _flush_log(engine: Any, rows: list[tuple[Any, ...]], lock: threading.Lock) -> None:
    with lock:
        taken = list(rows)
        rows.clear()
    for attempt in range(3):
        if not taken:
            return
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("INSERT INTO calls (run_id, model, key, cached, ok, attempts, prompt_tokens, "
                                     "completion_tokens, cost, error, created) "
                                     "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", taken)
            return
        except Exception as exc:  # a pooled connection the server dropped: once more on a fresh one
            if not getattr(exc, "connection_invalidated", False) or attempt == 2:
                raise


def _shutdown(engine: Any, leases: set[str], keeper: Any, log_rows: list[tuple[Any, ...]],
              log_lock: threading.Lock) -> None:
    keeper.stop()
    try:
        _flush_log(engine, log_rows, log_lock)
        with engine.connect() as conn:
            for run_id in list(leases):
                conn.exec_driver_sql("DELETE FROM leases WHERE run_id=%s AND owner=%s", (run_id, owner_id()))
        leases.clear()
        engine.dispose()
    except Exception:  # the server went away first: leases expire on their own
        pass
