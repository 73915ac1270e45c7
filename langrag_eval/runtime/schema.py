"""The run store's tables, its schema version, and the migration of older stores.

The version lives in SQLite's ``user_version`` header field. Version 1 stores (no version written)
gain the per-judgment content fingerprint, the run's input digests and the run leases. A store whose
version is newer than this package knows, or whose tables do not have the columns this package
expects, is refused with one line naming the file: reading it could only give wrong answers.

>>> import sqlite3
>>> db = sqlite3.connect(":memory:", isolation_level=None)
>>> prepare(db, ":memory:")
>>> db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
True
"""

from __future__ import annotations

import sqlite3

from ..errors import ConfigError

__all__ = ["SCHEMA_VERSION", "prepare", "check_openable", "check_readable"]

SCHEMA_VERSION = 2

# Version 1, as stores written before versioning hold it.
_V1 = """
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

# Version 1 -> 2: what each judgment was made from, what each run was made from, one writer per run.
_V2 = """
ALTER TABLE judgments ADD COLUMN fingerprint TEXT;
ALTER TABLE runs ADD COLUMN inputs TEXT;
CREATE TABLE IF NOT EXISTS leases (
    run_id TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    acquired REAL NOT NULL, expires REAL NOT NULL);
"""

_COLUMNS = {
    "runs": {"id", "kind", "config", "judge", "created", "finished", "summary", "inputs"},
    "judgments": {"run_id", "item", "task", "scored", "result", "created", "fingerprint"},
    "calls": {"id", "run_id", "model", "key", "cached", "ok", "attempts", "prompt_tokens",
              "completion_tokens", "cost", "error", "created"},
    "cache": {"key", "model", "text", "prompt_tokens", "completion_tokens", "created"},
    "artifacts": {"run_id", "name", "data", "created"},
    "leases": {"run_id", "owner", "pid", "host", "acquired", "expires"},
}


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


# What version 1 stores hold: the tables and columns before version 2 added its own.
_V1_COLUMNS = {t: c - {"fingerprint", "inputs"} for t, c in _COLUMNS.items() if t != "leases"}


def _check_columns(db: sqlite3.Connection, path: str, columns: dict[str, set[str]] = _COLUMNS) -> None:
    tables = _tables(db)
    for table, expected in columns.items():
        if table not in tables:
            raise ConfigError(f"{path}: not a langrag-eval run store of schema version {SCHEMA_VERSION} "
                              f"(table {table} is missing); use another --store")
        found = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if found != expected:
            extra, missing = sorted(found - expected), sorted(expected - found)
            detail = "; ".join(filter(None, [f"unexpected column(s) {', '.join(extra)}" if extra else "",
                                             f"missing column(s) {', '.join(missing)}" if missing else ""]))
            raise ConfigError(f"{path}: table {table} does not match run store schema version "
                              f"{SCHEMA_VERSION} ({detail}); it was written by another version of "
                              "langrag-eval or changed by hand; use another --store")


def _run(db: sqlite3.Connection, script: str) -> None:
    # Statement by statement: executescript would commit the surrounding transaction.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _refuse_newer(db: sqlite3.Connection, path: str) -> int:
    version = _version(db)
    if version > SCHEMA_VERSION:
        raise ConfigError(f"{path}: run store schema version {version} is newer than this langrag-eval "
                          f"reads ({SCHEMA_VERSION}); upgrade langrag-eval or use another --store")
    return version


def prepare(db: sqlite3.Connection, path: str) -> None:
    """Create a new store, migrate an older one, or refuse one this version cannot read.

    Runs in one immediate transaction, so two processes opening an old store migrate it once.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        version = _refuse_newer(db, path)
        if version < SCHEMA_VERSION:
            if not (_tables(db) & set(_COLUMNS)):  # a new file: version 1's tables first
                _run(db, _V1)
            _run(db, _V2)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        _check_columns(db, path)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def check_readable(db: sqlite3.Connection, path: str) -> None:
    """For read-only use: the store must already be at this version (nothing can be migrated)."""
    version = _refuse_newer(db, path)
    if version < SCHEMA_VERSION:
        raise ConfigError(f"{path}: run store schema version {version or 1} needs migrating to "
                          f"{SCHEMA_VERSION}; open it once with write access (any judging command)")
    _check_columns(db, path)


def check_openable(db: sqlite3.Connection, path: str) -> None:
    """On a read-only connection, before a store is opened for writing: refuse a newer schema, a
    file that is not a SQLite database, and a current-version store whose tables do not match
    (an older one is left to :func:`prepare`, which migrates it in one transaction or rolls back)."""
    db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # not a database: raises here
    version = _refuse_newer(db, path)
    if version < 0:
        raise ConfigError(f"{path}: run store schema version {version} is not one langrag-eval writes; "
                          "the store is damaged or was written by something else; use another --store")
    if version == SCHEMA_VERSION:
        _check_columns(db, path)
        return
    tables = _tables(db) - {"sqlite_sequence"}
    foreign = sorted(tables - set(_COLUMNS))
    if foreign:
        raise ConfigError(f"{path}: holds tables that are not a run store's ({', '.join(foreign[:5])}); "
                          "give --store a file of its own")
    if tables:
        _check_columns(db, path, _V1_COLUMNS)
