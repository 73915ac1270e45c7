"""Bounds on what one GRAMMAR statement may cost: time on every engine, value size on SQLite.

A query that passes the allowlist can still run for ever (an unbounded ``WITH RECURSIVE``, a cross
join of large tables) or, on SQLite, build a huge value. Every connection of
:func:`~langrag_eval.grammar.db.readonly_engine` is therefore bounded by the engine itself:

* PostgreSQL: ``SET LOCAL statement_timeout`` at the start of every transaction;
* MariaDB: the session's ``max_statement_time`` (MySQL: ``max_execution_time``), set on connect;
* SQLite: a progress handler that stops the statement once its deadline (set when it starts)
  has passed, and ``SQLITE_LIMIT_LENGTH``, so that no string or blob longer than
  ``max_value_bytes`` is ever allocated (``randomblob(900000000)`` fails at once).

A statement stopped by its timeout is :class:`QueryTimeoutError`, one line naming the limit.
"""

from __future__ import annotations

import math
import sqlite3
import time
import weakref
from typing import Any

import sqlalchemy as sa

from ..errors import ConfigError, DataError

__all__ = ["DEFAULT_MAX_VALUE_BYTES", "DEFAULT_STATEMENT_TIMEOUT", "QueryTimeoutError", "bound_engine",
           "check_limits", "sqlite_connection", "timeout_error"]

DEFAULT_STATEMENT_TIMEOUT = 5.0           # seconds, per statement
DEFAULT_MAX_VALUE_BYTES = 32 * 1024 * 1024  # SQLite: the longest string or blob a query may build
_PROGRESS_STEPS = 1000                    # SQLite VM instructions between deadline checks

_TIMEOUTS: weakref.WeakKeyDictionary[sa.Engine, float] = weakref.WeakKeyDictionary()


class QueryTimeoutError(DataError):
    """A statement ran past the engine's statement timeout and was stopped by the engine."""


def check_limits(statement_timeout: float, max_value_bytes: int) -> None:
    if not (isinstance(statement_timeout, (int, float)) and math.isfinite(statement_timeout)
            and statement_timeout > 0):
        raise ConfigError("statement_timeout must be a positive number of seconds; "
                          f"got {statement_timeout!r}")
    if not (isinstance(max_value_bytes, int) and max_value_bytes >= 1024):
        raise ConfigError(f"max_value_bytes must be an integer of at least 1024; got {max_value_bytes!r}")


class _Connection(sqlite3.Connection):
    """A sqlite3 connection that carries the deadline of the statement it is running."""

    deadline = math.inf


def sqlite_connection(uri: str, statement_timeout: float, max_value_bytes: int) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=_Connection)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_value_bytes)
    ref = weakref.ref(conn)

    def past_deadline() -> bool:
        c = ref()
        return c is not None and time.monotonic() > c.deadline  # type: ignore[attr-defined]

    conn.set_progress_handler(past_deadline, _PROGRESS_STEPS)
    return conn


def bound_engine(engine: sa.Engine, statement_timeout: float) -> sa.Engine:
    """Install the engine's own statement timeout on every connection of ``engine``."""
    _TIMEOUTS[engine] = statement_timeout
    name = engine.dialect.name
    if name == "sqlite":
        @sa.event.listens_for(engine, "before_cursor_execute")
        def _start_clock(conn: sa.Connection, *_: Any) -> None:
            # The deadline covers the statement and the reading of its rows, which SQLite steps
            # through lazily; the next statement on the connection starts a new clock.
            raw = conn.connection.dbapi_connection
            if isinstance(raw, _Connection):
                raw.deadline = time.monotonic() + statement_timeout
    elif name == "postgresql":
        @sa.event.listens_for(engine, "begin")
        def _timeout(conn: sa.Connection) -> None:
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, round(statement_timeout * 1000))}",
                                 execution_options={"stream_results": False})
    elif name in ("mysql", "mariadb"):
        @sa.event.listens_for(engine, "connect")
        def _timeout(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("SELECT VERSION()")
            mariadb = "mariadb" in str(cursor.fetchone()[0]).lower()
            # MariaDB counts seconds for every statement; MySQL counts milliseconds for SELECTs.
            cursor.execute(f"SET SESSION max_statement_time = {statement_timeout:.3f}" if mariadb else
                           f"SET SESSION max_execution_time = {max(1, round(statement_timeout * 1000))}")
            cursor.close()
    return engine


def timeout_error(engine: sa.Engine, exc: BaseException) -> QueryTimeoutError | None:
    """The one-line error for a statement the engine stopped at its timeout; None for any other."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).lower()
    code = getattr(orig, "args", (None,))[0] if getattr(orig, "args", None) else None
    stopped = (getattr(orig, "sqlstate", None) == "57014" and "statement timeout" in text  # PostgreSQL
               or code in (1969, 3024)                                                  # MariaDB, MySQL
               or isinstance(orig, sqlite3.OperationalError) and text.strip() == "interrupted")
    if not stopped:
        return None
    limit = _TIMEOUTS.get(engine)
    said = f"statement timeout of {limit:g} s" if limit is not None else "server's statement timeout"
    return QueryTimeoutError(f"the query ran past the {said} and was stopped; raise it with "
                             "statement_timeout= or --statement-timeout if it is meant to run longer")
