"""Scratch schemas on the real PostgreSQL and MariaDB servers for GRAMMAR tests.

Each fixture creates its own uniquely named schema (PostgreSQL) or database (MariaDB), fills it
through an ordinary read-write connection, hands the test a URL that points into it, and drops it
afterwards. A test that needs a server skips with the reason when none answers (fails, where
``LANGRAG_REQUIRE_SERVERS=1``, as in CI). The servers are
found at ``LANGRAG_TEST_POSTGRES_URL`` / ``LANGRAG_TEST_MARIADB_URL`` (defaults: the local servers
of the project's machines, PostgreSQL 127.0.0.1:5432 database test with trust auth, MariaDB
127.0.0.1:3306 as root without a password).

The answer oracle runs each query through the bare driver (psycopg, pymysql, sqlite3), without
SQLAlchemy and without any limit, so it shares no code with the package under test.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
import sqlalchemy as sa

POSTGRES_URLS = [os.environ.get("LANGRAG_TEST_POSTGRES_URL", ""),
                 "postgresql+psycopg://postgres@127.0.0.1:5432/test",
                 "postgresql+psycopg://root@127.0.0.1:5432/test"]
MARIADB_URLS = [os.environ.get("LANGRAG_TEST_MARIADB_URL", ""), "mysql+pymysql://root@127.0.0.1:3306/test"]

Oracle = Callable[[str, Mapping[str, Any]], list[tuple[Any, ...]]]


def server_missing(reason: str) -> NoReturn:
    """Skip the test, saying why; with ``LANGRAG_REQUIRE_SERVERS=1`` (CI sets it) fail instead, so a
    run whose servers went missing cannot pass by skipping what it was meant to test."""
    if os.environ.get("LANGRAG_REQUIRE_SERVERS") == "1":
        pytest.fail(f"{reason}; LANGRAG_REQUIRE_SERVERS=1 says the servers must be there", pytrace=False)
    pytest.skip(reason)


@dataclass
class Scratch:
    """A fresh schema: ``url`` opens it (for the package), ``admin`` writes to it (for set-up and
    for checking that nothing changed), ``oracle`` runs SQL through the bare driver."""

    kind: str
    url: str
    admin: sa.Engine
    oracle: Oracle
    name: str


def _reachable(urls: list[str], kind: str, driver: str) -> sa.URL:
    if importlib.util.find_spec(driver) is None:
        server_missing(f"the {driver} driver (extra 'grammar') is not installed")
    errors = []
    for text in filter(None, urls):
        url = sa.make_url(text)
        engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
            return url
        except sa.exc.DBAPIError as exc:
            errors.append(f"{url.render_as_string(hide_password=True)}: {str(exc.orig).strip().splitlines()[0]}")
        finally:
            engine.dispose()
    server_missing(f"no {kind} server reachable ({'; '.join(errors)})")


def _pyformat(sql: str) -> str:
    """``:p0`` parameters as the drivers' ``%(p0)s`` (a literal % doubled first)."""
    return re.sub(r"(?<!:):(p\d+)\b", r"%(\1)s", sql.replace("%", "%%"))


@contextmanager
def postgres_scratch() -> Iterator[Scratch]:
    import psycopg

    base = _reachable(POSTGRES_URLS, "PostgreSQL", "psycopg")
    name = f"lre_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base, connect_args={"options": f"-csearch_path={name}"})
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
    raw = psycopg.connect(host=base.host, port=base.port, user=base.username, dbname=base.database,
                          options=f"-csearch_path={name}", autocommit=True)

    def oracle(sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        with raw.cursor() as cur:
            cur.execute(_pyformat(sql), dict(params))
            return [tuple(r) for r in cur.fetchall()]

    url = base.update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(hide_password=False)
    try:
        yield Scratch("postgresql", url, admin, oracle, name)
    finally:
        raw.close()
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{name}" CASCADE')
        admin.dispose()


@contextmanager
def mariadb_scratch() -> Iterator[Scratch]:
    import pymysql

    base = _reachable(MARIADB_URLS, "MariaDB", "pymysql")
    name = f"lre_{uuid.uuid4().hex[:12]}"
    root = sa.create_engine(base)
    with root.begin() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    target = base.set(database=name, query={"charset": "utf8mb4"})
    admin = sa.create_engine(target)
    raw = pymysql.connect(host=base.host, port=base.port or 3306, user=base.username,
                          password=base.password or "", database=name, charset="utf8mb4", autocommit=True)

    def oracle(sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        with raw.cursor() as cur:
            cur.execute(_pyformat(sql), dict(params))
            return [tuple(r) for r in cur.fetchall()]

    try:
        yield Scratch("mariadb", target.render_as_string(hide_password=False), admin, oracle, name)
    finally:
        raw.close()
        admin.dispose()
        with root.begin() as conn:
            conn.exec_driver_sql(f"DROP DATABASE `{name}`")
        root.dispose()


def sqlite_oracle(path: Path) -> Oracle:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def oracle(sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in conn.execute(sql, dict(params)).fetchall()]   # sqlite3 binds :name

    return oracle


def copy_sqlite(source: Path, target: sa.Engine) -> None:
    """Copy every table of a SQLite file (columns, keys, rows) into ``target``. Floating columns
    become double precision, as SQLite's REAL is (PostgreSQL's REAL is single)."""
    src = sa.create_engine(f"sqlite:///{source}")
    meta = sa.MetaData()
    meta.reflect(src)
    for table in meta.tables.values():
        for column in table.columns:
            if isinstance(column.type, sa.Float):
                column.type = sa.Double()
            elif isinstance(column.type, sa.Integer) and column.primary_key:
                column.autoincrement = False
    meta.create_all(target)
    with src.connect() as read, target.begin() as write:
        for table in meta.sorted_tables:
            rows = [dict(r._mapping) for r in read.execute(table.select())]
            if rows:
                write.execute(table.insert(), rows)
    src.dispose()
