"""A holder paused past its lease (SIGSTOP: a laptop asleep, a long pause) on SQLite and on
PostgreSQL: a second process takes the run over and finishes it; the paused one, sent SIGCONT,
finds it lost the run before its next paid call and pays for nothing more. The scripted model
counts every call across both processes: exactly one per item, and every stored grade is right."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from resume_worker import expected_score
from store_backends import store_spec

WORKER = Path(__file__).with_name("pause_worker.py")
N, PAUSE_AT, TTL = 80, 8, 1.5


def _start(url: str, log: Path, out: Path, pause_at: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WORKER), url, str(log), str(N), str(out), str(pause_at), str(TTL)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] == "T"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see a stopped process")
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_paused_holder_loses_the_run_and_no_item_is_paid_twice(kind: str, tmp_path: Path) -> None:
    with store_spec(kind, tmp_path) as url:
        log, out_a, out_b = tmp_path / "calls.jsonl", tmp_path / "a.json", tmp_path / "b.json"
        a = _start(url, log, out_a, PAUSE_AT)
        try:
            deadline = time.time() + 60
            while not (Path(f"{out_a}.paused").exists() and _stopped(a.pid)):
                assert a.poll() is None and time.time() < deadline, a.communicate()
                time.sleep(0.05)
            time.sleep(TTL + 0.5)                         # the paused holder's lease or claims expire
            b = _start(url, log, out_b, 0)
            # The paused holder wakes while the new one is still at work, as a laptop would.
            while not any(json.loads(line)["pid"] == b.pid for line in log.read_text().splitlines()):
                assert b.poll() is None and time.time() < deadline + 60, b.communicate()
                time.sleep(0.01)
        finally:
            os.kill(a.pid, signal.SIGCONT)
        _, a_err = a.communicate(timeout=60)
        _, b_err = b.communicate(timeout=120)
        assert b.returncode == 0, b_err
        calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        prompts = [c["prompt"] for c in calls]
        assert len(prompts) == len(set(prompts)) == N, (len(prompts), len(set(prompts)))
        by_pid = {c["pid"] for c in calls}
        assert by_pid == {a.pid, b.pid}
        expected = [expected_score(f"item-{i:05d}") for i in range(N)]
        assert [g["score"] for g in json.loads(out_b.read_text())] == expected
        if kind == "sqlite":                              # one writer per run: the paused one stops
            assert sum(c["pid"] == a.pid for c in calls) == PAUSE_AT - 1   # no call after the pause
            assert a.returncode == 2 and "took the run over" in a_err and a_err.count("\n") == 1, a_err
            assert not out_a.exists()
        else:  # cooperating workers: it leaves the items taken over and shares the rest, none twice
            assert a.returncode == 0, a_err
            assert [g["score"] for g in json.loads(out_a.read_text())] == expected
