"""Read-only database access for GRAMMAR: every connection refuses writes, and every SQL text is
checked to be one plain SELECT before it runs.

Two independent locks, so a mistake in one does not open the database to writes:

* the connection is read-only: SQLite files open through a ``mode=ro`` URI with
  ``PRAGMA query_only = ON``; PostgreSQL and MySQL/MariaDB sessions are set (and committed) to
  read-only transactions; PostgreSQL and any other backend also get the SQL-standard
  ``SET TRANSACTION READ ONLY`` at the start of each transaction, and MySQL/MariaDB transactions
  start with ``START TRANSACTION READ ONLY``;
* :func:`guard_select` reads the statement with sqlglot in the engine's own dialect and accepts
  exactly one ``SELECT`` (with ``WITH``/``UNION`` allowed) that contains no data-changing,
  locking or ``SELECT ... INTO`` node, calls only the functions, operators and casts on the
  dialect's allowlist (:mod:`~langrag_eval.grammar.allowlist`; anything sqlglot cannot read whole
  is refused too), and holds no comment the server would run: MySQL/MariaDB execute ``/*! ... */``
  and ``/*M! ... */`` and read ``/*+ ... */`` as optimizer hints, so a comment starting with ``!``,
  ``M!`` or ``+``, or holding another comment's delimiters (engines disagree on nesting), is
  refused rather than trusted to be inert.

Every statement is also bounded by the engine's own clock, and rows are streamed so that a cap
on rows bounds memory (:mod:`~langrag_eval.grammar.limits`).

Values always travel as bound parameters, never inside SQL text.

A session may switch itself back to read-write (no statement that does so passes the guard). The
strongest lock is outside this package: connect as a database role that may only ``SELECT``
(the README shows how on PostgreSQL and MariaDB).

>>> from langrag_eval.grammar.demo import demo_database
>>> engine = readonly_engine(demo_database())
>>> run_select(engine, "SELECT city FROM office WHERE country = :c ORDER BY city", {"c": "Brazil"})
[('São Paulo',)]
>>> guard_select("DELETE FROM office")
Traceback (most recent call last):
...
langrag_eval.errors.DataError: only SELECT statements may run; got DELETE
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from ..errors import ConfigError, DataError, redact
from .allowlist import check_allowed
from .limits import (
    DEFAULT_MAX_VALUE_BYTES,
    DEFAULT_STATEMENT_TIMEOUT,
    QueryTimeoutError,
    bound_engine,
    check_limits,
    sqlite_connection,
    timeout_error,
)

__all__ = ["AnswerRows", "QueryTimeoutError", "database_error", "distinct_rows", "guard_select", "normalise_url", "readonly_engine", "run_many",
           "run_select", "sqlglot_dialect", "write_access"]

_DIALECTS = {"sqlite": "sqlite", "postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql",
             "mssql": "tsql", "oracle": "oracle", "duckdb": "duckdb", "snowflake": "snowflake",
             "bigquery": "bigquery"}
# Nodes that change data or schema, or leave the SELECT world (PRAGMA, ATTACH, raw commands).
_FORBIDDEN = (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter, exp.Merge,
              exp.Command, exp.Pragma, exp.Attach, exp.Detach, exp.Into, exp.TruncateTable,
              exp.Transaction, exp.Commit, exp.Rollback, exp.Set, exp.Use, exp.Copy)
_FORBIDDEN += (exp.Lock,)  # SELECT ... FOR UPDATE / LOCK IN SHARE MODE: row locks, not reads
_QUERY_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery)
# The set-up statements run on a connection a caller may have switched to streaming results,
# which on PostgreSQL would wrap them in a server-side cursor (only a query may be one).
_PLAIN = {"stream_results": False}
_EXECUTABLE_COMMENT = ("!", "M!", "m!", "+")


def normalise_url(db: str | Path) -> str:
    """A plain file path means a SQLite file; anything with ``://`` is a SQLAlchemy URL."""
    text = str(db)
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def sqlglot_dialect(engine: sa.Engine | str) -> str | None:
    """The sqlglot dialect for an engine or a SQLAlchemy dialect name (None: sqlglot's generic SQL)."""
    return _DIALECTS.get(engine if isinstance(engine, str) else engine.dialect.name)


def readonly_engine(db: str | Path, *, statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT,
                    max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES) -> sa.Engine:
    """An engine whose connections cannot write, and whose every statement the engine stops after
    ``statement_timeout`` seconds (see :mod:`~langrag_eval.grammar.limits`; ``max_value_bytes``
    bounds SQLite's strings and blobs). ``db`` is a SQLAlchemy URL or a SQLite file path."""
    check_limits(statement_timeout, max_value_bytes)
    url_text = normalise_url(db)
    try:
        url = sa.make_url(url_text)
    except sa.exc.ArgumentError as exc:
        raise ConfigError(f"{url_text!r} is not a database URL or file path: {exc}") from None
    if url.get_backend_name() == "sqlite":
        return bound_engine(_sqlite_readonly(url, statement_timeout, max_value_bytes), statement_timeout)
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise ConfigError(redact(f"cannot open {url.render_as_string(hide_password=True)}: {exc}")) from None
    name = engine.dialect.name

    @sa.event.listens_for(engine, "connect")
    def _session_readonly(dbapi_conn: Any, _record: Any) -> None:
        statement = {"postgresql": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
                     "mysql": "SET SESSION TRANSACTION READ ONLY",
                     "mariadb": "SET SESSION TRANSACTION READ ONLY"}.get(name)
        if statement:
            cursor = dbapi_conn.cursor()
            cursor.execute(statement)
            cursor.close()
            # PostgreSQL's SET is transactional: left uncommitted, the pool's rollback when the
            # connection is first handed out undoes it and the session writes again.
            dbapi_conn.commit()

    # A second lock on every transaction, in case a session ever left read-only mode. MySQL
    # refuses SET TRANSACTION inside its implicit transaction, so there the transaction is
    # started explicitly, read-only, before the first statement would start it implicitly.
    begin = "START TRANSACTION READ ONLY" if name in ("mysql", "mariadb") else "SET TRANSACTION READ ONLY"

    @sa.event.listens_for(engine, "begin")
    def _transaction_readonly(conn: sa.Connection) -> None:
        conn.exec_driver_sql(begin, execution_options=_PLAIN)

    return bound_engine(engine, statement_timeout)


def write_access(engine: sa.Engine) -> str | None:
    """A warning when the server says the connecting user could do more than read (a PostgreSQL
    superuser or member of the server-file roles; a MySQL/MariaDB user with the FILE privilege or
    all privileges); None when it cannot, or when the server does not say."""
    name = engine.dialect.name
    user = engine.url.username or "the connecting user"
    try:
        with engine.connect() as conn:
            if name == "postgresql":
                row = conn.exec_driver_sql(
                    "SELECT rolsuper OR pg_has_role(current_user, 'pg_write_server_files', 'MEMBER') "
                    "OR pg_has_role(current_user, 'pg_read_server_files', 'MEMBER') "
                    "OR pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER') "
                    "FROM pg_roles WHERE rolname = current_user").first()
                risky = bool(row and row[0])
            elif name in ("mysql", "mariadb"):
                grants = " ".join(str(r[0]) for r in conn.exec_driver_sql("SHOW GRANTS").fetchall()).upper()
                risky = "ALL PRIVILEGES ON *.*" in grants or bool(re.search(r"\bFILE\b", grants))
            else:
                return None
    except sa.exc.SQLAlchemyError:
        return None
    if not risky:
        return None
    return (f"database user {user} may read or write the server's files (a superuser, or the FILE "
            "privilege): GRAMMAR refuses every statement that could, but connect as a user that may "
            "only SELECT to be sure (README: GRAMMAR on PostgreSQL or MariaDB)")


def _sqlite_readonly(url: sa.URL, statement_timeout: float, max_value_bytes: int) -> sa.Engine:
    database = url.database
    if not database or database == ":memory:":
        raise ConfigError("GRAMMAR reads an existing database; an in-memory SQLite URL has no data")
    path = Path(database).expanduser()
    if not path.is_file():
        raise ConfigError(f"{path}: SQLite database file not found")
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"

    def connect() -> sqlite3.Connection:
        conn = sqlite_connection(uri, statement_timeout, max_value_bytes)
        conn.execute("PRAGMA query_only = ON")
        return conn

    return sa.create_engine("sqlite://", creator=connect, poolclass=sa.pool.NullPool)


def guard_select(sql: str, dialect: str | None = "sqlite") -> exp.Expression:
    """Parse ``sql`` and return its tree when it is exactly one read-only query; else DataError.

    >>> guard_select("SELECT a FROM t /*! INTO OUTFILE '/tmp/x' */", "mysql")
    Traceback (most recent call last):
    ...
    langrag_eval.errors.DataError: the SQL holds a comment the server may run (/*! ... */); remove it
    """
    try:
        tokens = sqlglot.tokenize(sql, read=dialect)
        _check_tokens(tokens, sql, dialect)
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise DataError(f"SQL does not parse: {_first_error(exc)}") from None
    except (RecursionError, AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        # sqlglot itself failing on odd input: what it cannot read whole is refused, not run
        raise DataError(f"SQL does not parse: sqlglot could not read it ({type(exc).__name__})") from None
    if len(statements) != 1:
        raise DataError(f"exactly one SQL statement may run; got {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, _QUERY_ROOTS):
        kind = tree.key.upper() if not isinstance(tree, exp.Command) else str(tree.this).upper()
        raise DataError(f"only SELECT statements may run; got {kind}")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN):
            raise DataError(f"only read-only SELECT statements may run; found {node.key.upper()} "
                            "inside the query")
    try:
        check_allowed(tree, tokens, dialect)
    except (RecursionError, AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise DataError(f"SQL does not parse: sqlglot could not read it ({type(exc).__name__})") from None
    return tree


def _check_tokens(tokens: list[Any], sql: str, dialect: str | None) -> None:
    """What the parse tree does not show: comments (kept aside by the tokenizer), and on MySQL a
    backslash in a quoted text: under the NO_BACKSLASH_ESCAPES mode the server ends the string
    where sqlglot reads an escaped quote, and runs what sqlglot took for text."""
    from sqlglot.tokens import TokenType
    for token in tokens:
        if (dialect == "mysql" and token.token_type in (TokenType.STRING, TokenType.IDENTIFIER)
                and "\\" in sql[token.start:token.end + 1]):
            raise DataError("the SQL holds a backslash inside quotes, which MySQL reads two ways "
                            "(NO_BACKSLASH_ESCAPES); values are bound as parameters, so remove it")
        if token.token_type == TokenType.HINT:
            raise DataError("the SQL holds an optimizer hint (/*+ ... */); remove it")
        for comment in token.comments:
            if comment.startswith(_EXECUTABLE_COMMENT):
                opener = "/*" + comment[:2 if comment[:1] in "Mm" else 1]
                raise DataError(f"the SQL holds a comment the server may run ({opener} ... */); remove it")
            if "/*" in comment or "*/" in comment:
                raise DataError("the SQL holds a comment inside a comment, which engines read "
                                "differently; remove it")


def _first_error(exc: sqlglot.errors.SqlglotError) -> str:
    errors = getattr(exc, "errors", None) or []
    return errors[0].get("description", str(exc)) if errors else str(exc).splitlines()[0]


def run_select(engine: sa.Engine, sql: str, params: Mapping[str, Any] | None = None, *,
               max_rows: int | None = None) -> list[tuple[Any, ...]]:
    """Run one guarded SELECT with bound ``:name`` parameters on a read-only connection. Rows are
    streamed (server-side cursors on PostgreSQL and MySQL/MariaDB), so ``max_rows`` bounds memory."""
    guard_select(sql, sqlglot_dialect(engine))
    try:
        with engine.connect() as conn:
            result = conn.execution_options(stream_results=True).execute(sa.text(sql), dict(params or {}))
            try:
                rows = result.fetchmany(max_rows) if max_rows else result.fetchall()
                return [tuple(r) for r in rows]
            finally:
                _close(result)
    except sa.exc.SQLAlchemyError as exc:
        raise timeout_error(engine, exc) or DataError(database_error(exc)) from None


def _close(result: sa.CursorResult[Any]) -> None:
    """Close a result read only in part. A MySQL streaming cursor reads and drops the rest of the
    rows on close; the server's statement timeout bounds that, and its error then is no failure of
    the rows already read."""
    try:
        result.close()
    except sa.exc.SQLAlchemyError:
        pass


def database_error(exc: BaseException) -> str:
    """One line for a database failure: the driver's first line, secrets masked."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return redact(text.splitlines()[0] if text else type(exc).__name__)


@dataclass(frozen=True)
class AnswerRows:
    """The distinct rows of one query, in first-seen order. ``complete`` is False when reading stopped
    because there were more than the cap: ``rows`` is then only the first ``cap`` of them."""

    rows: list[tuple[Any, ...]]
    complete: bool = True


def _key(row: tuple[Any, ...]) -> Any:
    try:
        hash(row)
        return row
    except TypeError:  # a driver's list or dict value (PostgreSQL arrays, JSON)
        return repr(row)


def distinct_rows(rows: Iterable[Iterable[Any]], cap: int | None = None) -> AnswerRows:
    """De-duplicate *every* row before any cap: a cap never hides a second distinct value behind
    repeats of the first. Rows compare by Python value (NULL is ``None``, a value like any other);
    reading stops at the first distinct row past ``cap``.

    >>> distinct_rows([("a",), ("a",), (None,), ("a",)])
    AnswerRows(rows=[('a',), (None,)], complete=True)
    >>> distinct_rows([("a",), ("a",), ("b",), ("c",)], cap=1)
    AnswerRows(rows=[('a',)], complete=False)
    """
    seen: dict[Any, tuple[Any, ...]] = {}
    for raw in rows:
        row = tuple(raw)
        seen.setdefault(_key(row), row)
        if cap is not None and len(seen) > cap:
            return AnswerRows(list(seen.values())[:cap], complete=False)
    return AnswerRows(list(seen.values()))


def run_many(engine: sa.Engine, sql: str, param_sets: Iterable[Mapping[str, Any]], *,
             max_distinct: int | None = None) -> Iterator[AnswerRows]:
    """Guard ``sql`` once, then run it for each parameter set on one read-only connection (a
    template's thousands of combinations should not each pay for a parse and a connect), yielding
    each result's distinct rows (see :func:`distinct_rows`)."""
    guard_select(sql, sqlglot_dialect(engine))
    statement = sa.text(sql)
    try:
        with engine.connect() as conn:
            streaming = conn.execution_options(stream_results=True)
            for params in param_sets:
                result = streaming.execute(statement, dict(params))
                try:
                    found = distinct_rows(result, max_distinct)
                finally:
                    _close(result)  # stopping early at the cap leaves rows unread
                yield found
    except sa.exc.SQLAlchemyError as exc:  # a query returning no rows, a refused write, a lost server
        raise timeout_error(engine, exc) or DataError(database_error(exc)) from None
