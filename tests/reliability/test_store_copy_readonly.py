"""``store copy`` only reads its source: the source is opened read-only (SQLite ``mode=ro``, a
read-only PostgreSQL session), so the copy cannot change a byte of it, a read-only source file can
be copied from, and a source that holds no store is refused without one being made there."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.runtime import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from store_backends import postgres_schema  # noqa: E402


def _fill(spec: str) -> None:
    store = open_store(spec)
    run = store.open_run("grade", {"fixture": "copy-source"})
    for i in range(3):
        store.put_judgment(run, f"q{i}", "vrag", {"score": i + 1}, scored=True)
    store.finish_run(run, {"items": 3})
    store.close()


def _snapshot(folder: Path) -> dict[str, tuple[str, float]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime)
            for p in sorted(folder.iterdir())}


def test_a_read_only_sqlite_source_is_copied_and_left_byte_for_byte(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    source = folder / "runs.sqlite"
    _fill(str(source))
    before = _snapshot(folder)
    source.chmod(stat.S_IRUSR)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)  # not even a journal can appear beside it
    try:
        if os.access(source, os.W_OK):
            pytest.skip("running as a user that can write a read-only file (root)")
        assert main(["store", "copy", str(source), str(tmp_path / "target.sqlite")]) == 0, capsys.readouterr().err
    finally:
        folder.chmod(stat.S_IRWXU)
        source.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert _snapshot(folder) == before
    copied = open_store(str(tmp_path / "target.sqlite"), read_only=True)
    assert len(copied.runs()) == 1


def test_a_writable_sqlite_source_is_left_byte_for_byte(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    _fill(str(folder / "runs.sqlite"))
    before = _snapshot(folder)
    assert main(["store", "copy", str(folder / "runs.sqlite"), str(tmp_path / "t.sqlite")]) == 0
    assert _snapshot(folder) == before   # no -wal/-shm file, no migration, no lease row


def test_a_missing_sqlite_source_is_refused_and_not_made(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nothing.sqlite"
    assert main(["store", "copy", str(missing), str(tmp_path / "t.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing.sqlite" in err
    assert not missing.exists() and not (tmp_path / "t.sqlite").exists()


def test_an_empty_postgresql_source_is_refused_and_no_table_is_made_there(capsys) -> None:
    import psycopg
    with postgres_schema() as url:
        assert main(["store", "copy", url, "/dev/null/never.sqlite"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        schema = url.rsplit("%3D", 1)[1]
        base = url.split("?", 1)[0]
        with psycopg.connect(base) as conn:
            tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema=%s",
                                  (schema,)).fetchall()
        assert tables == []


def test_a_postgresql_source_session_cannot_write(capsys) -> None:
    with postgres_schema() as url:
        _fill(url)
        source = open_store(url, read_only=True)
        with pytest.raises(Exception, match="read-only"):
            source._exec("DELETE FROM runs")
        assert len(source.runs()) == 1
