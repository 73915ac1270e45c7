"""Every engine stops a GRAMMAR statement at its timeout, and ``max_rows`` bounds memory.

Queries the allowlist lets through can still run for ever (an unbounded ``WITH RECURSIVE``, a cross
join); the engines' own clocks (PostgreSQL ``statement_timeout``, MariaDB ``max_statement_time``,
a SQLite progress handler) stop them, and the package reports one line naming the limit. The same
clocks stop what only a guard bypass could send (``generate_series(1, 1e10)``, ``database_to_xml``,
``MASTER_GTID_WAIT``). The servers themselves report the defaults.
"""

from __future__ import annotations

import contextlib
import json
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sql_servers import Scratch, mariadb_scratch, postgres_scratch
from test_sql_servers import STAFF, make_staff, quoted, sqlite_scratch

from langrag_eval.cli import main
from langrag_eval.errors import ConfigError
from langrag_eval.grammar import SqlTemplate, TextTemplate, build_dataset, readonly_engine, run_select
from langrag_eval.grammar.db import QueryTimeoutError, guard_select, sqlglot_dialect
from langrag_eval.grammar.limits import DEFAULT_STATEMENT_TIMEOUT

# Generous bounds: the machines running the suite are shared and slow at times.
SLACK = 15.0
FOREVER = {  # allowed by the guard, and unbounded
    "recursive": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "cross-join": 'SELECT count(*) FROM "Staff" a, "Staff" b, "Staff" c, "Staff" d, "Staff" e, "Staff" f, '
                  '"Staff" g, "Staff" h, "Staff" i, "Staff" j',
}


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scratch]:
    make = {"sqlite": lambda: sqlite_scratch(tmp_path), "postgresql": postgres_scratch,
            "mariadb": mariadb_scratch}[request.param]
    with make() as s:
        make_staff(s.admin)
        yield s


def test_an_endless_query_the_guard_allows_is_stopped_at_the_timeout(scratch: Scratch) -> None:
    engine = readonly_engine(scratch.url, statement_timeout=1)
    for name, sql in FOREVER.items():
        sql = quoted(sql, scratch.kind)
        if scratch.kind == "mariadb" and name == "recursive":  # MariaDB stops at 1000 iterations itself
            continue
        guard_select(sql, sqlglot_dialect(engine))
        started = time.monotonic()
        with pytest.raises(QueryTimeoutError) as caught:
            run_select(engine, sql)
        took = time.monotonic() - started
        assert 0.9 <= took < 1 + SLACK, (name, took)
        assert str(caught.value) == ("the query ran past the statement timeout of 1 s and was stopped; raise it "
                                     "with statement_timeout= or --statement-timeout if it is meant to run longer")
    # The connection and the engine serve the next query as before.
    assert run_select(engine, quoted('SELECT count(*) FROM "Staff"', scratch.kind)) == [(len(STAFF),)]


def test_the_servers_report_the_default_timeout(scratch: Scratch) -> None:
    assert DEFAULT_STATEMENT_TIMEOUT == 5
    engine = readonly_engine(scratch.url)
    with engine.connect() as conn:
        if scratch.kind == "postgresql":
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "5s"
        elif scratch.kind == "mariadb":
            assert float(conn.exec_driver_sql("SELECT @@max_statement_time").scalar()) == 5.0
    with readonly_engine(scratch.url, statement_timeout=2.5).connect() as conn:
        if scratch.kind == "postgresql":
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "2500ms"
        elif scratch.kind == "mariadb":
            assert float(conn.exec_driver_sql("SELECT @@max_statement_time").scalar()) == 2.5
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="statement_timeout"):
            readonly_engine(scratch.url, statement_timeout=bad)


# What only a guard bypass could send: the engine's clock stops it all the same.
PAST_THE_GUARD = {
    "postgresql": ["SELECT count(*) FROM generate_series(1, 1e10)",
                   "SELECT length(database_to_xml(true, true, '')::text) FROM generate_series(1, 1e9)",
                   "SELECT pg_sleep(30)"],
    "mariadb": ["SELECT MASTER_GTID_WAIT('0-1-100000000', 30)", "SELECT GET_LOCK('lre', 1) + SLEEP(30)",
                "SELECT BENCHMARK(10000000000, md5('x'))"],
    "sqlite": ["WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"],
}


def test_what_the_guard_refuses_would_be_stopped_by_the_engine_too(scratch: Scratch) -> None:
    engine = readonly_engine(scratch.url, statement_timeout=1)
    for sql in PAST_THE_GUARD[scratch.kind]:
        started = time.monotonic()
        with engine.connect() as conn:
            try:
                conn.exec_driver_sql(sql).all()
            except sa.exc.DBAPIError as exc:
                assert any(m in str(exc.orig).lower() for m in ("timeout", "max_statement_time", "interrupted")), exc
        assert time.monotonic() - started < 1 + SLACK, sql


def test_streaming_keeps_memory_bounded_by_max_rows(scratch: Scratch) -> None:
    """Three million rows, five read: the rest never reach the client's memory, which a buffered
    read through the same engine fills (the contrast shows the measure can fail). A MySQL streaming
    cursor reads and drops the rest on close, until the server's clock stops the statement."""
    engine = readonly_engine(scratch.url, statement_timeout=5)
    sql = quoted('SELECT a."FullName", b."StaffId" FROM "Staff" a, "Staff" b, "Staff" c, "Staff" d, "Staff" e, '
                 '"Staff" f', scratch.kind)
    tracemalloc.start()
    try:
        started = time.monotonic()
        rows = run_select(engine, sql, max_rows=5)
        took = time.monotonic() - started
        _, streamed = tracemalloc.get_traced_memory()
        if scratch.kind == "mariadb":
            tracemalloc.reset_peak()
            with engine.connect() as conn, contextlib.suppress(sa.exc.DBAPIError):
                conn.exec_driver_sql(sql).fetchmany(5)  # a buffered cursor reads every row first
            _, buffered = tracemalloc.get_traced_memory()
            assert buffered > 32 * 2**20, buffered
    finally:
        tracemalloc.stop()
    assert len(rows) == 5
    assert streamed < 8 * 2**20, streamed
    assert took < 5 + SLACK, took


def test_cli_reports_the_timeout_in_one_line(scratch: Scratch, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    templates = tmp_path / "templates.json"
    slow = FOREVER["cross-join"]
    templates.write_text(json.dumps({"templates": [
        {"id": "slow", "texts": ["How many for [Staff.FullName]?"],
         "sql": quoted(slow + " WHERE a.\"FullName\" = '[Staff.FullName]'", scratch.kind)},
        {"id": "title", "texts": ["What does [Staff.FullName] do?"],
         "sql": quoted("SELECT \"Job Title\" FROM \"Staff\" WHERE \"FullName\" = '[Staff.FullName]'", scratch.kind)},
    ]}), encoding="utf-8")
    out = tmp_path / "ds.jsonl"
    code = main(["grammar", "generate", "--db", scratch.url, "--templates", str(templates), "--out", str(out),
                 "--statement-timeout", "1"])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    assert ("  error: running template slow failed: the query ran past the statement timeout of 1 s and was "
            "stopped; raise it with statement_timeout= or --statement-timeout if it is meant to run longer") in err
    assert out.exists()


def test_build_dataset_reports_the_timeout_and_runs_the_other_templates(scratch: Scratch) -> None:
    text = (TextTemplate(id="s", style="short", text="How many for [Staff.FullName]?"),)
    slow = SqlTemplate(id="slow", sql=quoted(FOREVER["cross-join"] + " WHERE a.\"FullName\" = '[Staff.FullName]'",
                                             scratch.kind), texts=text)
    fast = SqlTemplate(id="fast", sql=quoted("SELECT \"Job Title\" FROM \"Staff\" WHERE \"FullName\" = "
                                             "'[Staff.FullName]'", scratch.kind), texts=text)
    data = build_dataset(readonly_engine(scratch.url, statement_timeout=1), [slow, fast])
    reports = {r.template_id: r for r in data.reports}
    assert reports["slow"].errors == ["running template slow failed: the query ran past the statement timeout of "
                                      "1 s and was stopped; raise it with statement_timeout= or "
                                      "--statement-timeout if it is meant to run longer"]
    assert reports["fast"].combinations > 0 and not reports["fast"].errors
