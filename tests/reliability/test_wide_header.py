"""A CSV header of 10^5 columns is checked in time linear in its width, and a repeated column is
still named. Each column was counted over the whole header (``list.count``), so 10^5 columns took
about two minutes before a single row was read."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.errors import DataError
from langrag_eval.files import read_table


def _wide(path: Path, columns: int, repeated: str) -> Path:
    header = ["id", "question", "answer", "label"] + [f"c{i}" for i in range(columns)] + [repeated]
    path.write_text(",".join(header) + "\n" + ",".join(["1", "q", "a", "l"] + ["x"] * (columns + 1)) + "\n",
                    encoding="utf-8")
    return path


def _refusal_seconds(path: Path) -> tuple[float, str]:
    """CPU seconds this thread spent refusing the header (other processes' load does not count),
    and the refusal."""
    start = time.thread_time()
    with pytest.raises(DataError) as caught:
        read_table(path)
    return time.thread_time() - start, str(caught.value)


def test_a_header_of_a_hundred_thousand_columns_is_checked_in_linear_time(tmp_path: Path) -> None:
    small, small_error = _refusal_seconds(_wide(tmp_path / "small.csv", 10_000, "c9999"))
    large, large_error = _refusal_seconds(_wide(tmp_path / "large.csv", 100_000, "c99999"))
    assert small_error.endswith("small.csv:1: repeated column name(s) in the header: c9999")
    assert large_error.endswith("large.csv:1: repeated column name(s) in the header: c99999")
    # ten times the columns: about ten times the time, not a hundred
    assert large < 30 * max(small, 0.01)
    assert large < 30


def test_the_command_names_the_repeated_column_of_a_wide_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wide = _wide(tmp_path / "qa.csv", 100_000, "c5")
    assert main(["grade", str(wide), "--judge", "local", "--store", str(tmp_path / "runs.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("qa.csv:1: repeated column name(s) in the header: c5"), err
