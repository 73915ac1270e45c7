"""The guard allows, it does not block: every function each real engine offers (read from the
engine's own catalog: SQLite's ``PRAGMA function_list``, PostgreSQL's ``pg_proc``, MariaDB's
``information_schema.SQL_FUNCTIONS``, its help topics and stored routines) that is not on GRAMMAR's
list is refused before any connection is taken from the engine, in every spelling the server
would read as that function: as written, upper-case, quoted, ``pg_catalog.``-qualified and
``U&``-escaped. What is on the list is a real function of that engine and still runs.

Also the attacks of the last red-team round one by one (SQL given as text, catalog writes that a
read-only transaction lets through, replication slots, advisory locks, statistics resets, waits,
huge values), and hypothesis-drawn spellings of refused calls in every place a call can stand.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sql_servers import Scratch, mariadb_scratch, postgres_scratch
from test_sql_servers import STAFF, make_staff, quoted, sqlite_scratch

from langrag_eval.errors import DataError
from langrag_eval.grammar import guard_select, readonly_engine, run_select
from langrag_eval.grammar.allowlist import FUNCTIONS
from langrag_eval.grammar.db import sqlglot_dialect

# Where the counts of the catalog run are written when asked (for the record of a release).
COUNTS_FILE = os.environ.get("LANGRAG_ALLOWLIST_COUNTS")
ARGS = ["", "1", "'a'", "'a', 1", "\"FullName\"", "1, 2, 3", "'a' AS CHAR(3)", "'2024-01-01', INTERVAL 1 DAY",
        "'a' USING utf8mb4"]


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scratch]:
    make = {"sqlite": lambda: sqlite_scratch(tmp_path), "postgresql": postgres_scratch,
            "mariadb": mariadb_scratch}[request.param]
    with make() as s:
        make_staff(s.admin)
        yield s


def catalog_functions(s: Scratch) -> set[str]:
    """Every function name the engine itself lists, lower-cased where the engine ignores case."""
    with s.admin.connect() as conn:
        if s.kind == "sqlite":
            raw = conn.connection.dbapi_connection
            return {r[0] for r in raw.execute("PRAGMA function_list")}
        if s.kind == "postgresql":
            return {r[0] for r in conn.exec_driver_sql("SELECT DISTINCT proname FROM pg_catalog.pg_proc")}
        names = {r[0].lower() for r in conn.exec_driver_sql("SELECT FUNCTION FROM information_schema.SQL_FUNCTIONS")}
        names |= {r[0].lower() for r in conn.exec_driver_sql("SELECT ROUTINE_NAME FROM information_schema.ROUTINES")}
        names |= {r[0].replace("\\_", "_").lower() for r in conn.exec_driver_sql("SELECT name FROM mysql.help_topic")
                  if re.fullmatch(r"[A-Za-z0-9_\\]+", r[0])}
        return names


def spellings(name: str, kind: str) -> list[str]:
    """The ways the server reads as a call of ``name``."""
    q = "`" if kind == "mariadb" else '"'
    out = [name, name.upper(), f"{q}{name}{q}"]
    if kind == "postgresql":
        escaped = "".join(f"\\{ord(c):04x}" if i % 2 else c for i, c in enumerate(name))
        out += [f"pg_catalog.{name}", f'pg_catalog."{name}"', f'U&"{escaped}"']
    return out


class Spy:
    """Counts every connection taken from the engine and every statement sent on one."""

    def __init__(self, engine: sa.Engine) -> None:
        self.checkouts = 0
        self.sent: list[str] = []
        sa.event.listen(engine, "checkout", self._checkout)
        sa.event.listen(engine, "before_cursor_execute", lambda c, cur, statement, *a: self.sent.append(statement))

    def _checkout(self, *_: object) -> None:
        self.checkouts += 1


def test_every_catalog_function_off_the_list_is_refused_before_any_connection(scratch: Scratch) -> None:
    dialect = {"sqlite": "sqlite", "postgresql": "postgres", "mariadb": "mysql"}[scratch.kind]
    allowed = FUNCTIONS[dialect]
    names = sorted(n for n in catalog_functions(scratch) if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9$]*", n))
    engine = readonly_engine(scratch.url)
    spy = Spy(engine)
    refused, passed = set(), set()
    for i, name in enumerate(names):
        folded = name.lower()
        forms = spellings(name, scratch.kind)
        # Each name as written with each argument list, and one other spelling in rotation.
        cases = [f"SELECT {name}({a}) FROM \"Staff\"" for a in ARGS]
        cases.append(f"SELECT \"FullName\" FROM \"Staff\" WHERE {forms[i % len(forms)]}({ARGS[i % len(ARGS)]}) = 1")
        for sql in cases:
            sql = quoted(sql, scratch.kind)
            try:
                guard_select(sql, dialect)
            except DataError as exc:
                assert "\n" not in str(exc)
                continue
            passed.add(folded)
            assert folded in allowed, (name, sql)
        if folded not in allowed:
            refused.add(folded)
            with pytest.raises(DataError):
                run_select(engine, quoted(f"SELECT {name}('a') FROM \"Staff\"", scratch.kind))
    assert spy.checkouts == 0 and spy.sent == []        # nothing reached the server
    on_list_in_catalog = {n.lower() for n in names} & allowed
    assert passed == on_list_in_catalog                 # every listed function the engine has is usable
    assert len(refused) > {"sqlite": 60, "postgresql": 2000, "mariadb": 400}[scratch.kind]
    if COUNTS_FILE:
        counts = json.loads(Path(COUNTS_FILE).read_text()) if Path(COUNTS_FILE).exists() else {}
        counts[scratch.kind] = {"catalog_functions": len({n.lower() for n in names}), "refused": len(refused),
                                "allowed": len(passed), "statements_tried": len(names) * (len(ARGS) + 1)}
        Path(COUNTS_FILE).write_text(json.dumps(counts, indent=1))


# The listed functions at work: each query runs on the engine and matches the bare driver.
USEFUL = {
    "sqlite": ["SELECT upper(\"FullName\"), length(\"FullName\"), substr(\"FullName\", 1, 3) FROM \"Staff\"",
               "SELECT coalesce(\"Job Title\", 'none'), ifnull(\"order\", 0) * 2 FROM \"Staff\"",
               "SELECT count(*), sum(\"order\"), round(avg(\"order\"), 2), max(\"StaffId\") FROM \"Staff\"",
               "SELECT strftime('%Y', '2024-03-01'), date('2024-03-01', '+1 day'), julianday('2024-03-02') - julianday('2024-03-01')",
               "SELECT CASE WHEN \"order\" > 5 THEN 'late' ELSE 'early' END, CAST(\"order\" AS TEXT) FROM \"Staff\"",
               "SELECT \"FullName\", rank() OVER (ORDER BY \"order\") FROM \"Staff\" WHERE \"FullName\" LIKE 'E%'",
               "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) SELECT sum(x) FROM c"],
    "postgresql": ["SELECT upper(\"FullName\"), char_length(\"FullName\"), pg_catalog.lower(\"FullName\") FROM \"Staff\"",
                   "SELECT coalesce(\"Job Title\", 'none'), nullif(\"order\", 1), \"order\"::text FROM \"Staff\"",
                   "SELECT count(*), sum(\"order\"), round(avg(\"order\"), 2), string_agg(\"FullName\", ',' ORDER BY \"StaffId\") FROM \"Staff\"",
                   "SELECT to_char(DATE '2024-03-01', 'YYYY-MM'), extract(year FROM DATE '2024-03-01'), date_trunc('month', TIMESTAMP '2024-03-05')",
                   "SELECT CASE WHEN \"order\" > 5 THEN 'late' ELSE 'early' END, CAST(\"order\" AS numeric(6, 2)) FROM \"Staff\"",
                   "SELECT \"FullName\", dense_rank() OVER (PARTITION BY \"Job Title\" ORDER BY \"order\") FROM \"Staff\" WHERE \"FullName\" ILIKE 'e%'",
                   "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY \"order\"), count(*) FILTER (WHERE \"order\" > 3) FROM \"Staff\""],
    "mariadb": ["SELECT upper(`FullName`), char_length(`FullName`), substring_index(`FullName`, ' ', 1) FROM `Staff`",
                "SELECT coalesce(`Job Title`, 'none'), ifnull(`order`, 0), if(`order` > 5, 'late', 'early') FROM `Staff`",
                "SELECT count(*), sum(`order`), round(avg(`order`), 2), group_concat(`FullName` ORDER BY `StaffId` SEPARATOR ',') FROM `Staff`",
                "SELECT date_format('2024-03-01', '%Y-%m'), year('2024-03-01'), datediff('2024-03-02', '2024-03-01'), date_add('2024-03-01', INTERVAL 1 DAY)",
                "SELECT CASE WHEN `order` > 5 THEN 'late' ELSE 'early' END, CAST(`order` AS CHAR(10)) FROM `Staff`",
                "SELECT `FullName`, row_number() OVER (ORDER BY `order`) FROM `Staff` WHERE `FullName` LIKE 'E%'"],
}


def test_the_listed_functions_still_answer_questions(scratch: Scratch) -> None:
    engine = readonly_engine(scratch.url)
    for sql in USEFUL[scratch.kind]:
        got = run_select(engine, sql)
        assert [tuple(map(str, r)) for r in got] == [tuple(map(str, r)) for r in scratch.oracle(sql, {})], sql


# The last round's attacks, each as the red team wrote it (the server would run every one).
ATTACKS = {
    "postgresql": [
        "SELECT * FROM ts_stat('SELECT to_tsvector(pg_read_file(''/etc/hostname''))')",
        "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery')",
        "SELECT U&\"pg_read_fil\\0065\"('/etc/hostname')",
        "SELECT U&\"pg_read_fil!0065\" UESCAPE '!' ('/etc/hostname')",
        "SELECT pg_import_system_collations('pg_catalog')",
        "SELECT pg_replication_origin_create('lre_attack')",
        "SELECT pg_create_physical_replication_slot('lre_attack')",
        "SELECT pg_create_logical_replication_slot('lre_attack', 'test_decoding')",
        "SELECT pg_drop_replication_slot('lre_attack')",
        "SELECT pg_try_advisory_lock(1)", "SELECT pg_advisory_lock_shared(1)",
        "SELECT pg_try_advisory_xact_lock(1)", "SELECT pg_advisory_unlock_all()",
        "SELECT pg_stat_reset()", "SELECT pg_stat_reset_shared('bgwriter')",
        "SELECT pg_stat_reset_single_table_counters(1)", "SELECT pg_stat_reset_slru(NULL)",
        "SELECT count(*) FROM generate_series(1, 1e10)",
        "SELECT database_to_xml(true, true, '')",
        "SELECT 1 WHERE 'x' = ANY(xpath('/a', query_to_xml('SELECT 1', true, true, '')))",
        "SELECT pg_catalog.pg_sleep(30)", "SELECT public.upper('x')",
        "SELECT \"FullName\"::regclass FROM \"Staff\"", "SELECT $$x$$ || pg_read_file('/etc/hostname')",
        "SELECT OPERATOR(pg_catalog.+)(1, 2)", "SELECT 1 @@ 2",
    ],
    "mariadb": [
        "SELECT MASTER_GTID_WAIT('0-1-100000', 30)", "SELECT MASTER_POS_WAIT('x', 4, 30)",
        "SELECT GET_LOCK('x', 30)", "SELECT RELEASE_ALL_LOCKS()", "SELECT BENCHMARK(1e10, md5('x'))",
        "SELECT `sleep`(30)", "SELECT test.sleep(30)", "SELECT REPEAT('x', 1e9)",
        "SELECT '\\' , LOAD_FILE('/etc/hostname') -- '", "SELECT @@version", "SELECT @x := 1",
        "SELECT JSON_SET('{}', '$.a', 1)", "SELECT UPDATEXML('<a/>', '/a', '<b/>')",
    ],
    "sqlite": [
        "SELECT randomblob(900000000)", "SELECT zeroblob(900000000)", "SELECT printf('%.*c', 900000000, 'x')",
        "SELECT length(replace(hex(zeroblob(100000000)), '0', 'xx'))", "SELECT like('a', 'a')",
        "SELECT \"randomblob\"(9)", "SELECT RandomBlob(9)", "SELECT fts3_tokenizer('simple')",
        "SELECT sqlite_compileoption_get(0)", "SELECT load_extension('/tmp/x')",
    ],
}


def test_the_last_rounds_attacks_are_refused_before_any_connection(scratch: Scratch) -> None:
    engine = readonly_engine(scratch.url)
    spy = Spy(engine)
    for sql in ATTACKS[scratch.kind]:
        with pytest.raises(DataError) as caught:
            run_select(engine, sql)
        assert "\n" not in str(caught.value), sql
    assert spy.checkouts == 0 and spy.sent == []


def test_postgresql_itself_would_write_its_catalog_in_a_read_only_transaction() -> None:
    """Why the list matters: the read-only transaction lets this catalog write through."""
    with postgres_scratch() as s:
        engine = readonly_engine(s.url)
        name = f"lre_{uuid.uuid4().hex[:8]}"
        try:
            with engine.connect() as conn:
                assert conn.exec_driver_sql("SHOW transaction_read_only").scalar() == "on"
                conn.exec_driver_sql(f"SELECT pg_replication_origin_create('{name}')")
                conn.commit()
            with s.admin.connect() as conn:
                assert conn.exec_driver_sql(f"SELECT count(*) FROM pg_replication_origin WHERE roname = '{name}'").scalar() == 1
            with pytest.raises(DataError, match="pg_replication_origin_drop"):
                run_select(engine, f"SELECT pg_replication_origin_drop('{name}')")
        finally:
            with s.admin.begin() as conn:
                conn.exec_driver_sql(f"SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin "
                                     f"WHERE roname = '{name}'")


REFUSED = ["pg_read_file", "ts_stat", "pg_sleep", "pg_advisory_lock", "pg_stat_reset", "database_to_xml",
           "generate_series", "randomblob", "zeroblob", "load_file", "master_gtid_wait", "sleep", "get_lock",
           "benchmark", "query_to_xml", "set_config", "repeat", "lpad", "printf", "version"]


@st.composite
def bypass(draw: st.DrawFn, dialect: str) -> str:
    """A refused function written the ways engines accept, placed where a call may stand."""
    name = draw(st.sampled_from(REFUSED))
    name = "".join(c.upper() if draw(st.booleans()) else c for c in name)
    form = draw(st.sampled_from(["plain", "quoted", "schema", "unicode", "backtick"]))
    if form == "quoted":
        name = f'"{name}"'
    elif form == "backtick":
        name = f"`{name}`"
    elif form == "schema":
        name = f"{draw(st.sampled_from(['pg_catalog', 'public', 'main', 'test', 'information_schema', 'sys']))}.{name}"
    elif form == "unicode":
        name = 'U&"' + "".join(f"\\{ord(c):04x}" if draw(st.booleans()) else c for c in name) + '"'
    gap = draw(st.sampled_from(["", " ", "\n", "/* x */", "\t"]))
    args = draw(st.sampled_from(["", "1", "'a'", "name, 1"]))
    call = f"{name}{gap}({args})"
    place = draw(st.sampled_from([
        "SELECT {c}", "SELECT name FROM t WHERE {c} = 1", "SELECT name FROM t ORDER BY {c}",
        "SELECT CASE WHEN {c} THEN 1 ELSE 0 END FROM t", "WITH x AS (SELECT {c} AS v) SELECT v FROM x",
        "SELECT name FROM t WHERE id IN (SELECT {c})", "SELECT count(*) FROM t GROUP BY name HAVING {c} > 0",
        "SELECT upper(coalesce({c}, name)) FROM t", "SELECT * FROM {c}", "SELECT 1 UNION SELECT {c}",
        "SELECT sum(x) OVER (PARTITION BY {c}) FROM t"]))
    return place.format(c=call)


@pytest.mark.parametrize("dialect", ["sqlite", "postgres", "mysql"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_drawn_spellings_of_refused_calls_are_refused(dialect: str, data: st.DataObject) -> None:
    sql = data.draw(bypass(dialect))
    with pytest.raises(DataError):
        guard_select(sql, dialect)


def test_sqlite_builds_no_value_longer_than_its_limit_even_past_the_guard(tmp_path: Path) -> None:
    import resource

    with sqlite_scratch(tmp_path) as s:
        make_staff(s.admin)
        engine = readonly_engine(s.url)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match="too big"):
            conn.exec_driver_sql("SELECT randomblob(900000000)").all()
        grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert grown_mib < 200, grown_mib
        # The bare engine, without the limit, does build it (so the limit is what stops it).
        raw = sqlite3.connect(s.url)
        assert raw.execute("SELECT length(randomblob(40000000))").fetchone() == (40000000,)
        with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match="too big"):
            conn.exec_driver_sql("SELECT length(randomblob(40000000))").all()
        assert run_select(engine, 'SELECT count(*) FROM "Staff"') == [(len(STAFF),)]
        assert sqlglot_dialect(engine) == "sqlite"


# The operators of a question's query, as PostgreSQL spells them (~~ is LIKE, |/ square root).
PG_OPERATORS = {"+", "-", "*", "/", "%", "^", "<", ">", "<=", ">=", "=", "<>", "||", "~", "~~", "~~*", "|/", "||/"}


def test_every_postgresql_operator_off_the_list_is_refused() -> None:
    """Each operator of ``pg_operator``, infix and prefix, spaced and touching its operands."""
    with postgres_scratch() as s:
        make_staff(s.admin)
        with s.admin.connect() as conn:
            operators = sorted({r[0] for r in conn.exec_driver_sql("SELECT oprname FROM pg_catalog.pg_operator")})
        engine = readonly_engine(s.url)
        spy = Spy(engine)
        accepted = set()
        for op in operators:
            for sql in (f'SELECT "order" {op} "order" FROM "Staff"', f'SELECT {op} "order" FROM "Staff"',
                        f'SELECT "order"{op}"order" FROM "Staff"', f'SELECT "order"{op}-1 FROM "Staff"',
                        f'SELECT "FullName" FROM "Staff" WHERE "order"{op}:p0'):
                try:
                    guard_select(sql, "postgres")
                except DataError:
                    continue
                accepted.add(op)
        assert accepted <= PG_OPERATORS, accepted - PG_OPERATORS
        assert len(operators) > 60 and {"@@", "&&", "<->", "?", "@>", "#", "!!"} <= set(operators) - accepted
        for op in ("@@", "<->", "?|", "#-"):
            with pytest.raises(DataError):
                run_select(engine, f'SELECT "order" {op} "order" FROM "Staff"')
        assert spy.checkouts == 0
        assert run_select(engine, 'SELECT "order" * 2 + 1 FROM "Staff" WHERE "order"=-1 OR "StaffId" = 1') == [(3,)]


def _number(depth: int) -> st.SearchStrategy[str]:
    leaf = st.sampled_from(['"order"', '"StaffId"', "3", "-2", 'length("FullName")'])
    if depth == 0:
        return leaf
    sub, text = _number(depth - 1), _text(depth - 1)
    return st.one_of(leaf, st.builds("abs({})".format, sub), st.builds("({} + {})".format, sub, sub),
                     st.builds("({} * {})".format, sub, sub), st.builds("coalesce({}, {})".format, sub, sub),
                     st.builds("length({})".format, text), st.builds("round({})".format, sub),
                     st.builds("CASE WHEN {} > {} THEN {} ELSE {} END".format, sub, sub, sub, sub),
                     st.builds("nullif({}, {})".format, sub, sub))


def _text(depth: int) -> st.SearchStrategy[str]:
    leaf = st.sampled_from(['"FullName"', '"Job Title"', "'x'", "''"])
    if depth == 0:
        return leaf
    sub = _text(depth - 1)
    return st.one_of(leaf, st.builds("upper({})".format, sub), st.builds("lower({})".format, sub),
                     st.builds("coalesce({}, {})".format, sub, sub), st.builds("substr({}, 1, 3)".format, sub),
                     st.builds("replace({}, 'a', 'b')".format, sub), st.builds("trim({})".format, sub))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_drawn_queries_of_listed_functions_run_and_match_the_engine(scratch: Scratch, data: st.DataObject) -> None:
    """Compositions of listed functions pass the guard and give the engine's own answer."""
    expr = data.draw(st.one_of(_number(2), _text(2)))
    sql = quoted(f'SELECT {expr} FROM "Staff" ORDER BY "StaffId"', scratch.kind)
    got = run_select(readonly_engine(scratch.url), sql)
    assert [tuple(map(str, r)) for r in got] == [tuple(map(str, r)) for r in scratch.oracle(sql, {})], sql
