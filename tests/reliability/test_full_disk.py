"""A full disk leaves the previous output whole and says so in one line, exit status 2.

On a real full file system: a small tmpfs mounted for the test (root only; skipped with the reason
elsewhere), filled to the last block before the command runs. One more test simulates the failure
at the sync of the temporary file, where a full disk shows up on file systems that allocate late.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.files.writing import TEMPORARY_MARK


@pytest.fixture
def full_disk(tmp_path: Path):
    """A folder on a 256 KiB tmpfs; call the returned function to fill it up."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (id -u is not 0)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")

    def fill() -> None:
        fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            for size in (4096, 1):
                try:
                    while os.write(fd, b"\0" * size):
                        pass
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
    try:
        yield mount, fill
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _scores(path: Path, rows: dict[str, int]) -> str:
    path.write_text("id,score\n" + "".join(f"{k},{v}\n" for k, v in rows.items()), encoding="utf-8")
    return str(path)


def _one_line_refusal(capsys, code: int, target: Path) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert str(target) in err and "full" in err and "left as it was" in err, err
    return err


def _no_leftovers(folder: Path) -> None:
    assert not [p for p in folder.iterdir() if TEMPORARY_MARK in p.name]


def test_agreement_json_on_a_full_disk(tmp_path: Path, full_disk, capsys) -> None:
    mount, fill = full_disk
    a = _scores(tmp_path / "a.csv", {str(i): 1 + i % 5 for i in range(50)})
    b = _scores(tmp_path / "b.csv", {str(i): 1 + (i * 7) % 5 for i in range(50)})
    out = mount / "agreement.json"
    out.write_text('{"previous": true}\n', encoding="utf-8")
    fill()
    code = main(["agreement", a, b, "--json", str(out)])
    _one_line_refusal(capsys, code, out)
    assert out.read_text(encoding="utf-8") == '{"previous": true}\n'
    _no_leftovers(mount)


def test_gate_junit_on_a_full_disk_keeps_the_previous_report(tmp_path: Path, full_disk, capsys) -> None:
    mount, fill = full_disk
    junit = mount / "gate.xml"
    previous = '<testsuite name="previous"/>\n'
    junit.write_text(previous, encoding="utf-8")
    fill()
    # the runs do not exist: gate writes its error report, which the full disk refuses
    code = main(["gate", "nosuch", "--baseline", "other", "--max-drop", "grade=0.1",
                 "--store", str(tmp_path / "runs.sqlite"), "--junit", str(junit)])
    _one_line_refusal(capsys, code, junit)
    assert junit.read_text(encoding="utf-8") == previous
    _no_leftovers(mount)


def test_grade_results_on_a_full_disk(tmp_path: Path, full_disk, capsys) -> None:
    mount, fill = full_disk
    qa = tmp_path / "qa.csv"
    qa.write_text("id,question,answer,label\n" + "".join(f"q{i},Q{i}?,A{i},A{i}\n" for i in range(20)),
                  encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"": "Reason: fine.\nScore: [[4]]"}), encoding="utf-8")
    out = mount / "qa.vrag.jsonl"
    out.write_text("previous\n", encoding="utf-8")
    fill()
    code = main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(tmp_path / "runs.sqlite"),
                 "--out", str(out)])
    _one_line_refusal(capsys, code, out)
    assert out.read_text(encoding="utf-8") == "previous\n"
    _no_leftovers(mount)


def test_a_failed_sync_is_a_full_disk_too(tmp_path: Path, monkeypatch, capsys) -> None:
    a = _scores(tmp_path / "a.csv", {"1": 4, "2": 5})
    out = tmp_path / "agreement.json"
    out.write_text("previous", encoding="utf-8")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", no_space)
    code = main(["agreement", a, a, "--json", str(out)])
    _one_line_refusal(capsys, code, out)
    assert out.read_text(encoding="utf-8") == "previous"
    _no_leftovers(tmp_path)
