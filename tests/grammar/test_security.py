"""Only SELECT runs, on a read-only connection; hostile values inject nothing; bad schemas and bad
templates give clear messages while the rest still generates."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from langrag_eval.errors import ConfigError, DataError
from langrag_eval.grammar import (
    SqlTemplate, TextTemplate, build_dataset, demo_database, guard_select, introspect, readonly_engine,
    run_select, validate_template,
)

HOSTILE = [
    "Robert'); DROP TABLE people; --",
    "x' OR '1'='1",
    'semi;colon "double" quotes',
    "Zoë Ängström — 東京",
    "[people.name]",          # looks like a placeholder
    ":p0",                    # looks like a bound parameter
]


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    db = tmp_path / "hostile.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE people (person_id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
    conn.executemany("INSERT INTO people (name, city) VALUES (?, ?)",
                     [(v, f"city {i}") for i, v in enumerate(HOSTILE)] + [(None, "nowhere"), ("Ann", None)])
    conn.execute("CREATE TABLE award (award_id INTEGER PRIMARY KEY, title TEXT, year INTEGER)")  # empty
    conn.execute("CREATE TABLE misc (c1 TEXT, c2 TEXT, x INTEGER)")
    conn.execute("INSERT INTO misc VALUES ('a', 'b', 1)")
    conn.commit()
    conn.close()
    return db


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def city_template() -> SqlTemplate:
    return SqlTemplate(id="city", sql="SELECT city FROM people WHERE name = '[people.name]'",
                       texts=(TextTemplate(id="s", style="short", text="Where does [people.name] live?"),))


def test_hostile_values_are_bound_and_inject_nothing(hostile_db: Path) -> None:
    before = digest(hostile_db)
    data = build_dataset(hostile_db, [city_template()])
    answers = {q.params["p0"]: q.answer for q in data.queries}
    # Every hostile name found exactly its own row; the NULL name was never a value; Ann's NULL city
    # is a NULL-only answer, dropped by default and counted.
    assert {v: answers[v] for v in HOSTILE} == {v: f"city {i}" for i, v in enumerate(HOSTILE)}
    assert "Ann" not in answers and None not in answers
    assert data.reports[0].null_answer == 1 and data.reports[0].no_answer == 0
    q = next(q for q in data.queries if q.params["p0"] == HOSTILE[0])
    assert q.question == "Where does Robert'); DROP TABLE people; -- live?"
    assert q.sql == "SELECT city FROM people WHERE name = :p0"
    assert digest(hostile_db) == before
    conn = sqlite3.connect(hostile_db)
    assert conn.execute("SELECT count(*) FROM people").fetchone() == (len(HOSTILE) + 2,)


def test_null_answers_kept_as_unknown_when_asked(hostile_db: Path) -> None:
    data = build_dataset(hostile_db, [city_template()], on_no_answer="flag", on_null="unknown")
    ann = next(q for q in data.queries if q.params["p0"] == "Ann")
    assert ann.flag == "null_answer" and ann.answer == "unknown" and ann.answer_rows == [[None]]
    assert data.reports[0].null_answer == 1


@pytest.mark.parametrize("sql", [
    "DELETE FROM people",
    "DROP TABLE people",
    "UPDATE people SET name = 'x'",
    "INSERT INTO people (name) VALUES ('x')",
    "PRAGMA query_only = OFF",
    "ATTACH DATABASE '/tmp/evil.sqlite' AS evil",
    "SELECT 1; DROP TABLE people",
    "SELECT name INTO backup FROM people",
    "VACUUM",
    "CREATE TABLE t AS SELECT * FROM people",
])
def test_guard_accepts_only_one_select(sql: str) -> None:
    with pytest.raises(DataError):
        guard_select(sql)


def test_guard_accepts_read_only_queries() -> None:
    guard_select("WITH a AS (SELECT name FROM people) SELECT name FROM a WHERE name = :p0")
    guard_select("SELECT name FROM people UNION SELECT title FROM award")


def test_connection_refuses_writes_even_past_the_guard(hostile_db: Path) -> None:
    engine = readonly_engine(hostile_db)
    with engine.connect() as conn:
        with pytest.raises(sa.exc.OperationalError, match="readonly|read-only|query_only|attempt to write"):
            conn.exec_driver_sql("DELETE FROM people")
    with engine.connect() as conn, pytest.raises(sa.exc.OperationalError):
        conn.exec_driver_sql("PRAGMA query_only = OFF; ")
        conn.exec_driver_sql("DELETE FROM people")  # mode=ro still refuses
    assert run_select(engine, "SELECT count(*) FROM people") == [(len(HOSTILE) + 2,)]


def test_template_with_write_statement_never_runs(hostile_db: Path) -> None:
    before = digest(hostile_db)
    evil = SqlTemplate(id="evil", sql="DELETE FROM people WHERE name = '[people.name]'",
                       texts=(TextTemplate(id="s", style="short", text="Remove [people.name]"),))
    data = build_dataset(hostile_db, [evil, city_template()])
    reports = {r.template_id: r for r in data.reports}
    assert reports["evil"].errors == ["only SELECT statements may run; got DELETE"]
    assert reports["city"].logics == len(HOSTILE)
    assert digest(hostile_db) == before


def test_missing_column_and_empty_table_reported_rest_generates(hostile_db: Path) -> None:
    templates = [
        SqlTemplate(id="missing", sql="SELECT nickname FROM people WHERE name = '[people.name]'",
                    texts=(TextTemplate(id="s", style="short", text="Nickname of [people.name]?"),)),
        SqlTemplate(id="bad-placeholder", sql="SELECT city FROM people WHERE name = '[people.full_name]'",
                    texts=(TextTemplate(id="s", style="short", text="City of [people.full_name]?"),)),
        SqlTemplate(id="empty", sql="SELECT year FROM award WHERE title = '[award.title]'",
                    texts=(TextTemplate(id="s", style="short", text="When was [award.title] won?"),)),
        city_template(),
    ]
    data = build_dataset(hostile_db, templates)
    reports = {r.template_id: r for r in data.reports}
    assert reports["missing"].errors == ["no table in the query has a column nickname"]
    assert reports["bad-placeholder"].errors[0] == (
        "placeholder [people.full_name]: table people has no column full_name (columns: person_id, name, city)")
    assert reports["empty"].errors == [
        "placeholder [award.title] has no non-NULL values (table award is empty or the column is all NULL)"]
    assert reports["city"].logics == len(HOSTILE) and not reports["city"].errors


def test_schema_warnings_for_empty_table_and_meaningless_columns(hostile_db: Path) -> None:
    schema = introspect(hostile_db)
    assert "table award is empty: templates on it yield no queries" in schema.warnings
    assert any(w.startswith("table misc: column name(s) c1, c2, x say nothing") for w in schema.warnings)
    assert not any("people" in w for w in schema.warnings)


def test_validation_flags_criteria(hostile_db: Path) -> None:
    schema = introspect(hostile_db)
    v = validate_template("SELECT * FROM people WHERE name = '[people.name]'", schema)
    assert v.ok and "selects *: name the column(s) that hold the answer" in v.warnings
    v = validate_template("SELECT city FROM people", schema)
    assert v.errors == ["has no [Table.Column] placeholder: every template needs one in its WHERE clause"]
    v = validate_template("SELECT a.city FROM people a JOIN award w ON a.person_id = w.award_id "
                          "WHERE a.name = '[people.name]'", schema)
    assert v.ok and any("follows no declared foreign key" in w for w in v.warnings)


def test_missing_database_and_memory_urls_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        readonly_engine(tmp_path / "nope.sqlite")
    with pytest.raises(ConfigError, match="in-memory"):
        readonly_engine("sqlite://")


def test_demo_database_has_quotes_semicolons_nulls_and_non_ascii() -> None:
    engine = readonly_engine(demo_database())
    names = {r[0] for r in run_select(engine, "SELECT name FROM client")}
    assert {"O'Brien & Sons Ltd", "Companhia Verde; Energia", "Städtische Werke Basel"} <= names
    assert run_select(engine, "SELECT count(*) FROM employee WHERE email IS NULL") == [(2,)]
