"""A store the package refuses is left exactly as it was, and every refusal is one line; ``store
copy`` never merges two different runs that share an id, and counts what it wrote.

Each SQLite case is made by the ``sqlite3`` module itself (a newer ``user_version``, a column added
by hand, another program's database, a text file, a cut-off file ...); the folder is compared file
by file, bytes and modification times, before and after the commands that refuse it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from store_backends import postgres_schema

from langrag_eval.cli import main
from langrag_eval.runtime import RunStore, open_store


def _folder(path: Path) -> dict[str, tuple[str, int]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(path.parent.iterdir())}


def _made_store(path: Path) -> None:
    store = RunStore(path)
    run = store.open_run("grade", {"x": 1}, run_id="nightly")
    store.put_judgment(run, "q1", "vrag", {"score": 5}, scored=True)
    store.finish_run(run, {})
    store.close()


def _sql(*statements: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        _made_store(path)
        db = sqlite3.connect(path)
        for s in statements:
            db.execute(s)
        db.commit()
        db.close()
    return damage


def _other_program(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    db.execute("INSERT INTO invoices VALUES (1, 9.5)")
    db.commit()
    db.close()


def _cut(path: Path) -> None:
    _made_store(path)
    path.write_bytes(path.read_bytes()[:2048])


CASES = {
    "newer schema": (_sql("PRAGMA user_version = 9"), "schema version 9 is newer"),
    "negative version": (_sql("PRAGMA user_version = -1"), "schema version -1 is not one"),
    "column added by hand": (_sql("ALTER TABLE runs ADD COLUMN note TEXT"), "unexpected column(s) note"),
    "table dropped": (_sql("DROP TABLE leases"), "table leases is missing"),
    "version 1 with version 2 columns": (_sql("PRAGMA user_version = 1"), "unexpected column(s) inputs"),
    "another program's database": (_other_program, "holds tables that are not a run store's (invoices)"),
    "text file": (lambda p: p.write_text("not a database\n" * 200), "file is not a database"),
    "cut-off file": (_cut, "cannot open the run store"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_refused_sqlite_store_is_left_untouched(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make, message = CASES[case]
    store = tmp_path / "store" / "runs.sqlite"
    store.parent.mkdir()
    make(store)
    before = _folder(store)
    qa = tmp_path / "qa.csv"
    qa.write_text("id,question,answer,label\nq1,Why?,Because.,Because.\n", encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"": "Score: [[5]], Reason: [[ok]]"}), encoding="utf-8")
    for argv in (["store", "status", "--store", str(store)],
                 ["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(store),
                  "--out", str(tmp_path / "out.jsonl")],
                 ["store", "copy", str(tmp_path / "elsewhere.sqlite"), str(store)],
                 ["compare", "a", "b", "--store", str(store)]):
        if argv[1] == "copy":
            _made_store(tmp_path / "elsewhere.sqlite")
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and err.count("\n") == 1, (argv, err)
        assert message in err, err
        assert _folder(store) == before, argv


@pytest.mark.parametrize("value, message", [("two", "schema version is 'two', not a number"),
                                            ("", "schema version is '', not a number"),
                                            ("-3", "schema version is -3"),
                                            ("99", "schema version 99 is newer")])
def test_every_postgresql_schema_version_problem_is_one_line(value: str, message: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import psycopg
    with postgres_schema() as url:
        open_store(url).close()
        base, schema = url.split("?")[0], url.split("search_path%3D")[1]
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'UPDATE "{schema}".langrag_meta SET value=%s WHERE key=%s', (value, "schema_version"))
            tables = sorted(r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema=%s", (schema,)))
        for argv in (["store", "status", "--store", url], ["store", "copy", url, "/dev/null/x.sqlite"]):
            code = main(argv)
            err = capsys.readouterr().err
            assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
            assert message in err, err
        with psycopg.connect(base, autocommit=True) as conn:
            assert conn.execute(f'SELECT value FROM "{schema}".langrag_meta').fetchall() == [(value,)]
            assert sorted(r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema=%s", (schema,))) == tables


def _store_with_run(path: Path, items: list[str], created_offset: float = 0.0) -> None:
    store = RunStore(path)
    run = store.open_run("grade", {"input": str(path)}, run_id="nightly")
    for item in items:
        store.put_judgment(run, item, "vrag", {"score": 5, "from": path.name}, scored=True)
    store.finish_run(run, {"items": len(items)})
    store.close()
    if created_offset:
        db = sqlite3.connect(path)
        db.execute("UPDATE runs SET created = created + ?", (created_offset,))
        db.commit()
        db.close()


def test_store_copy_refuses_a_different_run_with_the_same_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _store_with_run(a, ["q1", "q2", "q3"])
    _store_with_run(b, ["q4", "q5", "q6"], created_offset=-3600)
    before = _folder(b)
    assert main(["store", "copy", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "already holds another run with the id nightly" in err and "nothing was copied" in err
    assert err.count("\n") == 1
    with sqlite3.connect(b) as db:
        assert sorted(r[0] for r in db.execute("SELECT item FROM judgments")) == ["q4", "q5", "q6"]
    assert _folder(b)["b.sqlite"][0] == before["b.sqlite"][0]


def test_store_copy_reports_what_it_wrote_not_what_it_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _store_with_run(a, ["q1", "q2", "q3"])
    assert main(["store", "copy", str(a), str(b)]) == 0
    assert "1 runs, 3 judgments, 0 calls, 0 artifacts, 0 cache" in capsys.readouterr().out
    assert main(["store", "copy", str(a), str(b)]) == 0     # the same run again: nothing new
    assert "0 runs, 0 judgments, 0 calls, 0 artifacts, 0 cache" in capsys.readouterr().out
    with sqlite3.connect(b) as db:
        assert db.execute("SELECT COUNT(*) FROM judgments").fetchone() == (3,)
