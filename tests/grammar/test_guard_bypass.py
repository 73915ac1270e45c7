"""Every way a template was found to reach past GRAMMAR's read-only guard, on the real SQLite,
PostgreSQL and MariaDB servers: executable and optimizer comments, comments inside comments,
``INTO OUTFILE/DUMPFILE``, ``COPY ... TO``, ``LOAD``, ``ATTACH``, ``PRAGMA``, functions that read or
write server files or run SQL given as text, row locks and several statements.

Each case is refused before anything reaches the server (every statement the engine sends is
recorded) and no file appears where the template asked for one. Separately, the server itself is
shown to run the same bypass when handed the SQL directly (MariaDB writes the file), so the guard
is what stops it, and the read-only transaction refuses a data write that skips the guard.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sql_servers import Scratch, mariadb_scratch, postgres_scratch, server_missing
from test_sql_servers import count_rows, make_staff, quoted, sqlite_scratch

from langrag_eval import grammar
from langrag_eval.cli import main
from langrag_eval.errors import DataError
from langrag_eval.grammar import (
    SqlTemplate, TextTemplate, build_dataset, read_dataset, readonly_engine, run_select,
)

OUTFILE = "/tmp/lre_guard_{}.txt"

# (name, SQL with {path} where a file would be written, engines it targets)
BYPASSES = [
    ("executable-comment", "SELECT \"FullName\" FROM \"Staff\" WHERE \"StaffId\" = 1 /*! INTO OUTFILE '{path}' */"),
    ("versioned-executable-comment", "SELECT \"FullName\" FROM \"Staff\" /*!50000 INTO OUTFILE '{path}' */"),
    ("mariadb-executable-comment", "SELECT \"FullName\" FROM \"Staff\" /*M! INTO DUMPFILE '{path}' */"),
    ("mariadb-versioned-comment", "SELECT \"FullName\" FROM \"Staff\" /*M!100000 INTO DUMPFILE '{path}' */"),
    ("optimizer-hint", "SELECT /*+ SET_VAR(sql_mode='') */ \"FullName\" FROM \"Staff\""),
    ("nested-comment", "SELECT \"FullName\" FROM \"Staff\" /* /* */ INTO OUTFILE '{path}' -- */"),
    ("into-outfile", "SELECT \"FullName\" FROM \"Staff\" INTO OUTFILE '{path}'"),
    ("into-dumpfile", "SELECT \"FullName\" INTO DUMPFILE '{path}' FROM \"Staff\""),
    ("select-into-table", "SELECT \"FullName\" INTO evil FROM \"Staff\""),
    ("copy-to", "COPY (SELECT \"FullName\" FROM \"Staff\") TO '{path}'"),
    ("copy-program", "COPY (SELECT 1) TO PROGRAM 'touch {path}'"),
    ("load-data", "LOAD DATA INFILE '/etc/hostname' INTO TABLE \"Staff\""),
    ("attach", "ATTACH DATABASE '{path}' AS evil"),
    ("pragma", "PRAGMA query_only = OFF"),
    ("several-statements", "SELECT 1; DELETE FROM \"Staff\""),
    ("pg-read-file", "SELECT pg_read_file('/etc/hostname')"),
    ("pg-read-file-quoted", "SELECT \"pg_read_file\"('/etc/hostname')"),
    ("pg-ls-dir", "SELECT * FROM pg_catalog.pg_ls_dir('.')"),
    ("lo-export", "SELECT lo_export(lo_from_bytea(0, 'x'), '{path}')"),
    ("lo-import", "SELECT lo_import('/etc/hostname')"),
    ("query-to-xml", "SELECT query_to_xml('DELETE FROM \"Staff\"', true, true, '')"),
    ("set-config", "SELECT set_config('default_transaction_read_only', 'off', false)"),
    ("load-file", "SELECT LOAD_FILE('/etc/hostname')"),
    ("sqlite-writefile", "SELECT writefile('{path}', 'x')"),
    ("sqlite-readfile", "SELECT readfile('/etc/hostname')"),
    ("load-extension", "SELECT load_extension('/tmp/evil')"),
    ("for-update", "SELECT \"FullName\" FROM \"Staff\" FOR UPDATE"),
    ("sleep", "SELECT sleep(30)"),
]


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scratch]:
    make = {"sqlite": lambda: sqlite_scratch(tmp_path), "postgresql": postgres_scratch,
            "mariadb": mariadb_scratch}[request.param]
    with make() as s:
        make_staff(s.admin)
        yield s


def _recorded(engine: sa.Engine) -> list[str]:
    sent: list[str] = []
    sa.event.listen(engine, "before_cursor_execute",
                    lambda conn, cursor, statement, *rest: sent.append(statement))
    return sent


def test_every_bypass_is_refused_before_the_server_sees_it(scratch: Scratch) -> None:
    engine = readonly_engine(scratch.url)
    sent = _recorded(engine)
    for name, template in BYPASSES:
        path = OUTFILE.format(uuid.uuid4().hex)
        sql = quoted(template.format(path=path), scratch.kind)
        with pytest.raises(DataError) as caught:
            run_select(engine, sql)
        assert "\n" not in str(caught.value), name
        assert sent == [], (name, sent)          # refused before execution, not by the server
        assert not os.path.exists(path), name
    assert count_rows(scratch.admin, "Staff") == 12


def test_a_template_with_a_bypass_is_reported_and_the_others_still_run(scratch: Scratch) -> None:
    path = OUTFILE.format(uuid.uuid4().hex)
    text = (TextTemplate(id="s", style="short", text="Job of [Staff.FullName]?"),)
    evil = SqlTemplate(id="evil", sql=quoted("SELECT \"Job Title\" FROM \"Staff\" WHERE \"FullName\" = "
                                             f"'[Staff.FullName]' /*! INTO OUTFILE '{path}' */", scratch.kind),
                       texts=text)
    good = SqlTemplate(id="good", sql=quoted("SELECT \"Job Title\" FROM \"Staff\" WHERE \"FullName\" = "
                                             "'[Staff.FullName]'", scratch.kind), texts=text)
    data = build_dataset(scratch.url, [evil, good])
    reports = {r.template_id: r for r in data.reports}
    assert reports["evil"].errors == ["the SQL holds a comment the server may run (/*! ... */); remove it"]
    assert reports["good"].queries > 0
    assert not os.path.exists(path)


def test_mariadb_itself_would_run_the_executable_comment() -> None:
    """The guard is what stops it: a read-only transaction on MariaDB does not refuse a file
    write, and the server reads ``/*! ... */`` as code (skips when the server may not write files)."""
    with mariadb_scratch() as s:
        make_staff(s.admin)
        path = OUTFILE.format(uuid.uuid4().hex)
        engine = readonly_engine(s.url)
        with engine.connect() as conn:
            try:
                conn.exec_driver_sql(f"SELECT `FullName` FROM `Staff` /*! INTO OUTFILE '{path}' */")
            except sa.exc.DBAPIError as exc:
                server_missing(f"this MariaDB user may not write files: {exc.orig}")
        try:
            assert os.path.exists(path)
            with pytest.raises(DataError):
                run_select(engine, f"SELECT `FullName` FROM `Staff` /*! INTO OUTFILE '{path}.2' */")
            assert not os.path.exists(path + ".2")
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)


def test_every_transaction_is_read_only_even_when_the_guard_is_skipped(scratch: Scratch) -> None:
    engine = readonly_engine(scratch.url)
    for statement in ('DELETE FROM "Staff"', 'UPDATE "Staff" SET "order" = 0',
                      "INSERT INTO \"Staff\" (\"StaffId\") VALUES (99)"):
        with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError) as caught:
            conn.exec_driver_sql(quoted(statement, scratch.kind))
            conn.commit()
        assert any(m in str(caught.value.orig).lower() for m in
                   ("read-only", "read only", "readonly", "attempt to write")), caught.value.orig
    if scratch.kind == "mariadb":  # the transaction itself, not only the session, is read-only
        with engine.connect() as conn:
            conn.exec_driver_sql("SET SESSION TRANSACTION READ WRITE")
            conn.commit()
        with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match="READ ONLY"):
            conn.exec_driver_sql("DELETE FROM `Staff`")
    assert count_rows(scratch.admin, "Staff") == 12


def test_cli_refuses_the_bypass_in_one_line_and_writes_nothing(scratch: Scratch, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = OUTFILE.format(uuid.uuid4().hex)
    templates = tmp_path / "templates.json"
    comment = f"/*M! INTO DUMPFILE '{path}' */"
    templates.write_text(json.dumps({"templates": [{
        "id": "evil", "texts": ["Job of [Staff.FullName]?"],
        "sql": quoted(f"SELECT \"Job Title\" FROM \"Staff\" WHERE \"FullName\" = '[Staff.FullName]' {comment}",
                      scratch.kind)}]}), encoding="utf-8")
    out = tmp_path / "ds.jsonl"
    code = main(["grammar", "generate", "--db", scratch.url, "--templates", str(templates), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err
    assert "  error: the SQL holds a comment the server may run (/*M! ... */); remove it" in captured.err
    assert captured.err.strip().splitlines()[-1].startswith("langrag-eval grammar generate: error: no query could be")
    assert not out.exists() and not os.path.exists(path)


def test_model_written_templates_wait_for_review(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with sqlite_scratch(tmp_path) as s:
        make_staff(s.admin)
        replies = tmp_path / "judge.json"
        replies.write_text(json.dumps({
            "SQL query templates": "<templates>\nSELECT \"Job Title\" FROM \"Staff\" WHERE \"FullName\" = "
                                   "'[Staff.FullName]'\n</templates>",
            "natural questions": json.dumps({"short": ["What does [Staff.FullName] do?"]})}), encoding="utf-8")
        templates, out = tmp_path / "templates.json", tmp_path / "ds.jsonl"
        common = ["grammar", "generate", "--db", s.url, "--templates", str(templates), "--out", str(out),
                  "--judge", f"scripted:{replies}", "--store", str(tmp_path / "runs.sqlite"),
                  "--styles", "short", "--texts-per-style", "1"]
        ran: list[object] = []
        monkeypatch.setattr(grammar, "build_dataset", lambda *a, **k: ran.append(a))
        assert main(common) == 0
        assert ran == []                             # no template reached the database
        monkeypatch.undo()
        said = capsys.readouterr().out
        assert "nothing was run against the database; --run-unreviewed runs them now" in said
        assert templates.exists() and not out.exists()
        # The dataset appears once the reviewer runs the command again, or at once when asked.
        templates.unlink()
        assert main([*common, "--run-unreviewed"]) == 0
        assert out.exists() and len(read_dataset(out)) == 5


def test_a_user_that_may_touch_server_files_is_warned_about(scratch: Scratch) -> None:
    """The servers' own account of the connecting user: the test servers' root/postgres accounts
    are superusers (PostgreSQL) or hold every privilege (MariaDB); a SQLite file has no users."""
    from langrag_eval.grammar import introspect

    warned = [w for w in introspect(scratch.url).warnings if "may read or write the server's files" in w]
    assert len(warned) == (0 if scratch.kind == "sqlite" else 1), warned


def test_a_select_only_mariadb_user_is_not_warned_about() -> None:
    from langrag_eval.grammar import introspect

    with mariadb_scratch() as s:
        make_staff(s.admin)
        role = f"lre_ro_{uuid.uuid4().hex[:8]}"
        hosts = ("localhost", "127.0.0.1")
        with s.admin.begin() as conn:
            for h in hosts:
                conn.exec_driver_sql(f"CREATE USER '{role}'@'{h}'")
                conn.exec_driver_sql(f"GRANT SELECT ON `{s.name}`.* TO '{role}'@'{h}'")
        try:
            schema = introspect(sa.make_url(s.url).set(username=role))
            assert not any("server's files" in w for w in schema.warnings), schema.warnings
        finally:
            with s.admin.begin() as conn:
                for h in hosts:
                    conn.exec_driver_sql(f"DROP USER '{role}'@'{h}'")
