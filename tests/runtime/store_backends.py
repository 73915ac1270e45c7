"""Run stores to test on: a SQLite file, and a scratch schema on a real PostgreSQL server.

The PostgreSQL schema is made for one test and dropped after it; the server is found at
``LANGRAG_TEST_POSTGRES_URL`` or the local server of the project's machines (127.0.0.1:5432,
database test, trust auth). Where none answers, the PostgreSQL cases skip, saying why (fail, where
``LANGRAG_REQUIRE_SERVERS=1``, as in CI).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

POSTGRES_URLS = [os.environ.get("LANGRAG_TEST_POSTGRES_URL", ""), "postgresql://postgres@127.0.0.1:5432/test",
                 "postgresql://root@127.0.0.1:5432/test"]


def server_missing(reason: str) -> NoReturn:
    """Skip the test, saying why; with ``LANGRAG_REQUIRE_SERVERS=1`` (CI sets it) fail instead, so a
    run whose servers went missing cannot pass by skipping what it was meant to test."""
    if os.environ.get("LANGRAG_REQUIRE_SERVERS") == "1":
        pytest.fail(f"{reason}; LANGRAG_REQUIRE_SERVERS=1 says the servers must be there", pytrace=False)
    pytest.skip(reason)


def postgres_base() -> str:
    try:
        import psycopg
    except ImportError:
        server_missing("psycopg (extra 'postgres') is not installed")
    errors = []
    for url in filter(None, POSTGRES_URLS):
        try:
            with psycopg.connect(url, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            return url
        except psycopg.Error as exc:
            errors.append(f"{url}: {str(exc).strip().splitlines()[0]}")
    server_missing(f"no PostgreSQL server reachable ({'; '.join(errors)})")


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A store URL pointing into a fresh schema, dropped afterwards."""
    import psycopg
    base = postgres_base()
    name = f"lre_store_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield f"{base}?options=-csearch_path%3D{name}"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')


@contextmanager
def store_spec(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield str(tmp_path / "runs.sqlite")
    else:
        with postgres_schema() as url:
            yield url
