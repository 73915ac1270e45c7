"""Cooperating workers on one PostgreSQL run: four processes judge 2,000 items together; one is
killed with SIGKILL part-way. Every item ends judged exactly once, no reply a worker stored is
asked for again, and every worker's results equal a single process's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from store_backends import postgres_schema

WORKER = Path(__file__).with_name("pg_worker.py")
N = 2000


def _start(url: str, log: Path, out: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WORKER), url, str(log), str(N), str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _logged(log: Path) -> list[dict]:
    # a worker may be writing its last line as it is read: only whole lines count
    return [json.loads(line) for line in log.read_text(encoding="utf-8").split("\n")[:-1] if line.strip()]


def test_four_workers_one_killed_every_item_once(tmp_path: Path) -> None:
    env = {**os.environ, "CLAIM_TTL": "3"}
    with postgres_schema() as single_url:
        single = _start(single_url, tmp_path / "single.log", tmp_path / "single.json", env)
        assert single.wait(timeout=600) == 0, single.communicate()
    expected = json.loads((tmp_path / "single.json").read_text())
    assert len(expected) == N

    with postgres_schema() as url:
        log = tmp_path / "calls.log"
        # The victim starts first and the others once it has done part of the run: started all
        # at once, the other three could judge every item before a victim slow to start (a loaded
        # machine) made a call, and then there was nothing to kill it in the middle of.
        victim = _start(url, log, tmp_path / "w1.json", env)
        deadline = time.monotonic() + 300
        while not (log.exists() and len(_logged(log)) > 20):
            assert victim.poll() is None and time.monotonic() < deadline, victim.communicate()
            time.sleep(0.05)
        workers = [_start(url, log, tmp_path / f"w{i}.json", env) if i != 1 else victim for i in range(4)]
        # kill one once the run is well under way and the victim has done part of it
        while time.monotonic() < deadline:
            calls = Counter(c["pid"] for c in _logged(log)) if log.exists() else Counter()
            if sum(calls.values()) > N // 4 and calls[victim.pid] > 20:
                break
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        survivors = [w for i, w in enumerate(workers) if i != 1]
        for w in survivors:
            assert w.wait(timeout=600) == 0, w.communicate()

        calls = _logged(log)
        prompts = Counter(c["prompt"] for c in calls)
        assert len(prompts) == N                       # every item reached the model
        by_victim = Counter(c["prompt"] for c in calls if c["pid"] == victim.pid)
        assert by_victim                               # the victim did real work first
        repeated = [p for p, n in prompts.items() if n > 1]
        # A prompt asked twice is one the victim was answered for in the instant before SIGKILL,
        # before its worker could store the reply: at most its 16 calls in flight. Nothing a
        # worker stored is ever asked again.
        assert all(by_victim[p] == 1 for p in repeated) and len(repeated) <= 16
        for i in (0, 2, 3):
            assert json.loads((tmp_path / f"w{i}.json").read_text()) == expected

        import psycopg
        with psycopg.connect(url) as conn:
            judged = conn.execute("SELECT COUNT(*), COUNT(DISTINCT item) FROM judgments").fetchone()
            paid = conn.execute("SELECT key, COUNT(*) FROM calls WHERE cached=0 GROUP BY key "
                                "HAVING COUNT(*) > 1").fetchall()
        assert judged == (N, N)                         # every item judged exactly once
        assert paid == []                               # no stored prompt was paid for twice


def _open_at_once(path: str, barrier, results) -> None:  # noqa: ANN001 - multiprocessing objects
    from langrag_eval.runtime import RunStore
    barrier.wait()
    try:
        RunStore(path).close()
        results.put("opened")
    except Exception as exc:  # noqa: BLE001 - what the test reports
        results.put(f"{type(exc).__name__}: {exc}")


def test_processes_creating_one_store_at_the_same_moment_all_open_it(tmp_path: Path) -> None:
    """Several commands started at once on a store that does not exist yet: each one opens it. (The
    switch to the write-ahead log met another process's lock and failed at once, about one open in
    twenty, before it was retried within the busy timeout.)"""
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    outcomes: Counter[str] = Counter()
    for trial in range(30):
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_at_once, args=(str(tmp_path / f"s{trial}.sqlite"), barrier, results))
                 for _ in range(4)]
        for p in procs:
            p.start()
        outcomes.update(results.get(timeout=120) for _ in procs)
        for p in procs:
            p.join(timeout=120)
    assert outcomes == Counter({"opened": 120}), outcomes
