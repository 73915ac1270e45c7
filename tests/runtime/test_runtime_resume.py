"""Crash and resume: a grading run killed with SIGKILL mid-way and started again with the same
arguments finishes every item, loses no finished judgment and repeats no call for a finished item."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("resume_worker.py")
N = 48
sys.path.insert(0, str(WORKER.parent))
from resume_worker import expected_score  # noqa: E402


def _start(store: Path, log: Path, stop_at: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WORKER), str(store), str(log), str(N), str(stop_at)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] == "T"


def _logged(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def _judgments(store: Path) -> dict[str, tuple[str, float]]:
    with sqlite3.connect(store) as db:
        return {item: (result, created) for item, result, created in
                db.execute("SELECT item, result, created FROM judgments WHERE task='vrag'")}


def _cached_prompts(store: Path) -> int:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see a stopped process")
@pytest.mark.parametrize("seed", [11, 23, 37, 52])
def test_sigkill_mid_run_then_resume_loses_nothing_and_repeats_no_finished_call(tmp_path, seed) -> None:
    store, log = tmp_path / "runs.sqlite", tmp_path / "calls.jsonl"
    kill_after = random.Random(seed).randint(8, N - 12)  # model calls seen before the kill

    # The worker stops itself at its kill_after-th call and is killed there: polling its log from
    # here, a loaded machine could let it run on to the end before the kill.
    first = _start(store, log, stop_at=kill_after)
    deadline = time.monotonic() + 60
    while not _stopped(first.pid):
        assert first.poll() is None, f"worker ended before the kill point: {first.communicate()}"
        assert time.monotonic() < deadline, "worker made no progress"
        time.sleep(0.002)
    assert len(_logged(log)) == kill_after
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL

    calls_before = Counter(_logged(log))
    finished_before = _judgments(store)
    assert 0 < len(finished_before) < N, "the kill should land mid-way"

    second = _start(store, log)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    summary = json.loads(out)

    calls_all = Counter(_logged(log))
    finished_after = _judgments(store)
    # every item finished, each with the score its prompt scripts
    assert summary["scored"] == N and len(finished_after) == N
    for item, (result, _) in finished_after.items():
        assert json.loads(result) == {"score": expected_score(item)}
    # nothing finished before the kill was lost or judged again (same row, same timestamp)
    for item, row in finished_before.items():
        assert finished_after[item] == row
    # no model call repeated for an item finished before the kill
    for item in finished_before:
        assert calls_all[f"Grade the answer to {item}"] == 1, item
    # calls in the second process: only items whose reply never reached the store
    repeated = [p for p, c in calls_all.items() if c > 1]
    assert len(repeated) <= 4, repeated  # at most the calls in flight at the kill (concurrency 4)
    assert sum(calls_all.values()) == N + len(repeated)
    assert summary["calls"] == N - len(calls_before) + len(repeated)
    assert _cached_prompts(store) == N
