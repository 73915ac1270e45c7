"""The package deletes only what it created: folders and files beside an index or an output that
merely carry the names it once used for its own temporaries are the user's, and stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.files import TEMPORARY_MARK


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
