"""The package deletes only what it created: folders and files beside an index or an output that
merely carry the names it once used for its own temporaries are the user's, and stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.files.writing import TEMPORARY_MARK


@pytest.mark.parametrize("suffix", [".old", ".saving", ".tmp", ".bak"])
def test_index_keeps_a_users_folder_named_after_the_index(tmp_path: Path, suffix: str, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Refunds take five days.", encoding="utf-8")
    index = tmp_path / "idx"
    mine = tmp_path / f"idx{suffix}"
    mine.mkdir()
    (mine / "precious.txt").write_text("keep me", encoding="utf-8")
    for _ in range(2):  # a first save, then a save over an existing index
        assert main(["index", str(docs), "--store-dir", str(index), "--no-embeddings"]) == 0
    assert (mine / "precious.txt").read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["docs", "idx", mine.name])
    assert not [p for p in tmp_path.iterdir() if TEMPORARY_MARK in p.name]
    capsys.readouterr()


def _store_refused_untouched(tmp_path: Path, capsys, make) -> None:
    import hashlib
    import json
    store = tmp_path / "runs.sqlite"
    make(store)
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    qa = tmp_path / "qa.csv"
    qa.write_text("id,question,answer,label\nq1,Who?,Ada,Ada\n", encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(["Score: [[4]]"]), encoding="utf-8")
    for argv in (["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(store)],
                 ["report", "--list", "--store", str(store)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and str(store) in err, err
        assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def _newer(path: Path) -> None:
    import sqlite3
    with sqlite3.connect(path) as db:  # a rollback-journal store of a later schema version
        db.execute("CREATE TABLE runs (id TEXT)")
        db.execute("PRAGMA user_version=99")


def _foreign(path: Path) -> None:
    import sqlite3
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (id INTEGER)")


@pytest.mark.parametrize("make", [_newer, _foreign, lambda p: p.write_bytes(b"not a database at all" * 50)],
                         ids=["newer", "another program's database", "damaged"])
def test_a_store_refused_is_left_as_it_was(tmp_path: Path, capsys, make) -> None:
    _store_refused_untouched(tmp_path, capsys, make)
