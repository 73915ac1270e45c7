"""A holder paused past its lease while calls of its own are in their retry back-off (four at a
time, every first attempt failing): once woken, it sends nothing more for the run it lost (SQLite)
or for the items taken over from it (PostgreSQL, where it goes on with the items nobody holds). Its lease (SQLite) or its
claims (PostgreSQL) are checked right before every attempt, retries included, not only before
writes; the count of paid calls across both processes is one per item, save only the calls that
were already on the wire when the process stopped (those cannot be unsent)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from store_backends import store_spec  # noqa: E402

WORKER = Path(__file__).with_name("pause_retry_worker.py")
N, PAUSE_AT, TTL, CONCURRENCY = 60, 10, 1.5, 4


def _start(url: str, log: Path, out: Path, pause_at: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WORKER), url, str(log), str(N), str(out), str(pause_at), str(TTL)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] == "T"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see a stopped process")
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_woken_holder_sends_no_retry_and_no_item_is_paid_twice(kind: str, tmp_path: Path) -> None:
    with store_spec(kind, tmp_path) as url:
        log, out_a, out_b = tmp_path / "calls.jsonl", tmp_path / "a.json", tmp_path / "b.json"
        a = _start(url, log, out_a, PAUSE_AT)
        b = None
        try:
            deadline = time.time() + 60
            while not (Path(f"{out_a}.paused").exists() and _stopped(a.pid)):
                assert a.poll() is None and time.time() < deadline, a.communicate()
                time.sleep(0.05)
            stopped_at = float(Path(f"{out_a}.paused").read_text())
            time.sleep(TTL + 0.5)                          # the paused holder's lease or claims expire
            b = _start(url, log, out_b, 0)
            while not any(json.loads(line)["pid"] == b.pid for line in log.read_text().splitlines()):
                assert b.poll() is None and time.time() < deadline + 60, b.communicate()
                time.sleep(0.01)
        finally:
            woken_at = time.time()
            os.kill(a.pid, signal.SIGCONT)
        _, a_err = a.communicate(timeout=60)
        _, b_err = b.communicate(timeout=120)
        assert b.returncode == 0, b_err
        calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        if kind == "sqlite":  # one writer per run: the woken holder sends nothing more at all
            late = [c for c in calls if c["pid"] == a.pid and c["at"] > woken_at]
            assert late == [], f"{len(late)} attempts sent by the holder after it was woken"
        paid: dict[str, list[dict]] = {}
        for c in calls:
            if c["ok"]:
                paid.setdefault(c["prompt"], []).append(c)
        assert len(paid) == N
        twice = {p: cs for p, cs in paid.items() if len(cs) > 1}
        # Only calls already sent when the holder stopped can be paid twice, at most one per slot.
        assert len(twice) <= CONCURRENCY - 1
        assert all(c["at"] <= stopped_at for cs in twice.values() for c in cs if c["pid"] == a.pid)
        if kind == "sqlite":
            assert a.returncode == 2 and "took the run over" in a_err and a_err.count("\n") == 1, a_err
        else:
            assert a.returncode == 0, a_err
