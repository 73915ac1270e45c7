"""GRAMMAR on real servers: schema introspection, template validation in the server's sqlglot
dialect, filling with bound parameters and the read-only guarantees, on SQLite, PostgreSQL and
MariaDB alike, with the same quoted-identifier, NULL and apostrophe cases. Each server test works in
its own scratch schema and drops it afterwards; it skips with the reason when no server answers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from sql_servers import Scratch, copy_sqlite, mariadb_scratch, postgres_scratch, sqlite_oracle

from langrag_eval.errors import DataError
from langrag_eval.grammar import (
    SqlTemplate, TextTemplate, build_dataset, demo_database, introspect, readonly_engine, run_select,
    validate_template,
)
from langrag_eval.grammar.db import sqlglot_dialect

BACKENDS = ["sqlite", "postgresql", "mariadb"]

STAFF = [  # (id, full name, job title, "order")
    (1, "Ann O'Neil", "Chief 'Data' Officer", 1),
    (2, "Robert'); DROP TABLE \"Staff\"; --", "Intern", 2),
    (3, "x' OR '1'='1", "Auditor", 3),
    (4, "Zoë Ängström — 東京", "Engineer", 4),
    (5, "Zoë Ängström — 東京", "Engineer", 5),       # the same answer twice: one answer
    (6, "Dup", "Analyst", 6),
    (7, "Dup", "Architect", 7),                     # two answers
    (8, "Bob", None, None),                          # only NULL: a NULL answer
    (9, None, "Ghost", 9),                           # a NULL name is no placeholder value
    (10, "Eve", None, 10),
    (11, "Eve", "Spy", 11),                          # {NULL, 'Spy'}: two answers
    (12, "[Staff.FullName]", ":p0", 12),             # looks like a placeholder / a parameter
]


@contextmanager
def sqlite_scratch(tmp: Path) -> Iterator[Scratch]:
    path = tmp / f"lre_{uuid.uuid4().hex[:8]}.sqlite"
    admin = sa.create_engine(f"sqlite:///{path}")
    with admin.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE _init (x INTEGER)")
        conn.exec_driver_sql("DROP TABLE _init")
    yield Scratch("sqlite", str(path), admin, sqlite_oracle(path), path.stem)
    admin.dispose()


@pytest.fixture(params=BACKENDS)
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scratch]:
    make = {"sqlite": lambda: sqlite_scratch(tmp_path), "postgresql": postgres_scratch,
            "mariadb": mariadb_scratch}[request.param]
    with make() as s:
        yield s


def make_staff(admin: sa.Engine) -> None:
    meta = sa.MetaData()
    staff = sa.Table("Staff", meta,
                     sa.Column("StaffId", sa.Integer, primary_key=True, autoincrement=False),
                     sa.Column("FullName", sa.String(100)),
                     sa.Column("Job Title", sa.String(100)),
                     sa.Column("order", sa.Integer))
    meta.create_all(admin)
    with admin.begin() as conn:
        conn.execute(staff.insert(), [{"StaffId": i, "FullName": n, "Job Title": j, "order": o}
                                      for i, n, j, o in STAFF])


def quoted(sql: str, kind: str) -> str:
    """Templates are written in the server's own quoting: backticks on MariaDB, double quotes elsewhere."""
    return sql.replace('"', "`") if kind == "mariadb" else sql


def staff_templates(kind: str) -> list[SqlTemplate]:
    return [
        SqlTemplate(id="title", sql=quoted('SELECT "Job Title" FROM "Staff" WHERE "FullName" = \'[Staff.FullName]\'', kind),
                    texts=(TextTemplate(id="s", style="short", text="What does [Staff.FullName] do?"),)),
        SqlTemplate(id="order", sql=quoted('SELECT "order" FROM "Staff" WHERE "FullName" = \'[Staff.FullName]\'', kind),
                    texts=(TextTemplate(id="s", style="short", text="Which number is [Staff.FullName]?"),)),
    ]


def count_rows(admin: sa.Engine, table: str) -> int:
    with admin.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(sa.table(table))).scalar_one()


def test_introspection_matches_the_sqlite_original(scratch: Scratch) -> None:
    copy_sqlite(demo_database(), scratch.admin)
    here, original = introspect(scratch.url), introspect(demo_database())

    def shape(schema):
        return {t.name: (t.rows, [(c.name, c.primary_key) for c in t.columns],
                         sorted((fk.columns, fk.ref_table, fk.ref_columns) for fk in t.foreign_keys))
                for t in schema.tables}

    assert shape(here) == shape(original)
    assert here.dialect == {"sqlite": "sqlite", "postgresql": "postgresql", "mariadb": "mysql"}[scratch.kind]
    assert here.foreign_key_pairs() == original.foreign_key_pairs()


def test_quoted_identifiers_nulls_and_apostrophes_fill_with_bound_values(scratch: Scratch) -> None:
    make_staff(scratch.admin)
    engine = readonly_engine(scratch.url)
    schema = introspect(engine)
    dialect = sqlglot_dialect(engine)
    assert [c.name for c in schema.table("Staff").columns] == ["StaffId", "FullName", "Job Title", "order"]
    templates = staff_templates(scratch.kind)
    for t in templates:
        check = validate_template(t.sql, schema, dialect=dialect)
        assert check.ok, check.errors
    data = build_dataset(engine, templates, on_no_answer="flag", on_multiple="flag", on_null="unknown")
    title = {q.params["p0"]: q for q in data.queries if q.template_id == "title"}
    names = {n for _, n, _, _ in STAFF if n is not None}
    assert set(title) == names                        # every non-NULL name, each once, hostile ones too
    assert title["Ann O'Neil"].answer == "Chief 'Data' Officer" and title["Ann O'Neil"].flag is None
    assert title["Ann O'Neil"].question == "What does Ann O'Neil do?"
    assert title["Robert'); DROP TABLE \"Staff\"; --"].answer == "Intern"
    assert title["x' OR '1'='1"].answer == "Auditor"
    assert title["Zoë Ängström — 東京"].answer_rows == [["Engineer"]] and title["Zoë Ängström — 東京"].flag is None
    assert title["[Staff.FullName]"].answer == ":p0"
    assert title["Dup"].flag == "multiple_answers"
    assert title["Bob"].flag == "null_answer" and title["Bob"].answer == "unknown"
    assert title["Eve"].flag == "multiple_answers" and sorted(map(repr, title["Eve"].answer_rows)) == ["['Spy']", "[None]"]
    assert {q.params["p0"]: q.answer for q in data.queries if q.template_id == "order"}["Ann O'Neil"] == "1"
    for q in data.queries:                            # the engine's own full answer set, every time
        truth = {tuple(r) for r in scratch.oracle(q.sql, q.params)}
        assert {tuple(r) for r in q.answer_rows} == truth
    assert all(":p0" in q.sql and "'" not in q.sql for q in data.queries)   # values never in SQL text
    assert count_rows(scratch.admin, "Staff") == len(STAFF)


def test_the_validation_dialect_is_the_servers(scratch: Scratch) -> None:
    make_staff(scratch.admin)
    schema = introspect(scratch.url)
    double = 'SELECT "Job Title" FROM "Staff" WHERE "FullName" = \'[Staff.FullName]\''
    backtick = double.replace('"', "`")
    if scratch.kind == "mariadb":
        # Double quotes make strings in MySQL: the template would compare two strings and match nothing.
        errors = validate_template(double, schema, dialect="mysql").errors
        assert any("compared with the string 'FullName'" in e for e in errors), errors
        assert validate_template(backtick, schema, dialect="mysql").ok
    else:
        assert validate_template(double, schema, dialect=sqlglot_dialect(readonly_engine(scratch.url))).ok
        assert not validate_template(backtick, schema, dialect="postgres").ok


WRITES = ['DELETE FROM "Staff"', 'UPDATE "Staff" SET "order" = 0', "CREATE TABLE evil (x INTEGER)",
          'DROP TABLE "Staff"', "INSERT INTO \"Staff\" (\"StaffId\") VALUES (99)"]


def test_read_only_connection_refuses_writes_even_past_the_guard(scratch: Scratch) -> None:
    make_staff(scratch.admin)
    engine = readonly_engine(scratch.url)
    for _ in range(2):                                # a fresh and a pooled, reused connection
        for statement in WRITES:
            with pytest.raises(DataError):
                run_select(engine, quoted(statement, scratch.kind))
            with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError) as caught:
                conn.exec_driver_sql(quoted(statement, scratch.kind))
                conn.commit()
            assert any(m in str(caught.value.orig).lower() for m in
                       ("read-only", "read only", "readonly", "attempt to write")), caught.value.orig
    assert count_rows(scratch.admin, "Staff") == len(STAFF)
    assert run_select(engine, quoted('SELECT count(*) FROM "Staff"', scratch.kind)) == [(len(STAFF),)]
    assert "evil" not in sa.inspect(scratch.admin).get_table_names()


def test_postgresql_transactions_stay_read_only_after_the_session_leaves_read_only_mode() -> None:
    with postgres_scratch() as s:
        make_staff(s.admin)
        engine = readonly_engine(s.url)
        with engine.connect() as conn:
            conn.exec_driver_sql("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE")
            conn.commit()
            with pytest.raises(sa.exc.DBAPIError, match="read-only transaction"):
                conn.exec_driver_sql('DELETE FROM "Staff"')
        assert count_rows(s.admin, "Staff") == len(STAFF)


@pytest.mark.parametrize("make", [postgres_scratch, mariadb_scratch], ids=["postgresql", "mariadb"])
def test_a_select_only_role_cannot_write_even_after_leaving_read_only_mode(make) -> None:
    """The README's advice: a role that may only SELECT. Even a session switched back to read-write
    (which GRAMMAR's guard never lets through) cannot change the data."""
    with make() as s:
        make_staff(s.admin)
        role = f"lre_ro_{uuid.uuid4().hex[:8]}"
        url = sa.make_url(s.url)
        if s.kind == "postgresql":
            grants = [f"CREATE ROLE {role} LOGIN", f'GRANT USAGE ON SCHEMA "{s.name}" TO {role}',
                      f'GRANT SELECT ON ALL TABLES IN SCHEMA "{s.name}" TO {role}']
            revoke = [f'REVOKE ALL ON ALL TABLES IN SCHEMA "{s.name}" FROM {role}',
                      f'REVOKE ALL ON SCHEMA "{s.name}" FROM {role}', f"DROP ROLE {role}"]
            leave = "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE"
        else:
            hosts = ("localhost", "127.0.0.1")
            grants = ([f"CREATE USER '{role}'@'{h}'" for h in hosts]
                      + [f"GRANT SELECT ON `{s.name}`.* TO '{role}'@'{h}'" for h in hosts])
            revoke = [f"DROP USER '{role}'@'{h}'" for h in hosts]
            leave = "SET SESSION TRANSACTION READ WRITE"
        with s.admin.begin() as conn:
            for g in grants:
                conn.exec_driver_sql(g)
        try:
            assert run_select(readonly_engine(url.set(username=role)),
                              quoted('SELECT count(*) FROM "Staff"', s.kind)) == [(len(STAFF),)]
            # Without any of the package's locks: the role alone refuses the write.
            plain = sa.create_engine(url.set(username=role))
            with plain.connect() as conn:
                conn.exec_driver_sql(leave)
                with pytest.raises(sa.exc.DBAPIError) as caught:
                    conn.exec_driver_sql(quoted('DELETE FROM "Staff"', s.kind))
                    conn.commit()
            plain.dispose()
            assert any(m in str(caught.value.orig).lower() for m in ("permission denied", "command denied"))
        finally:
            with s.admin.begin() as conn:
                for r in revoke:
                    conn.exec_driver_sql(r)
        assert count_rows(s.admin, "Staff") == len(STAFF)
