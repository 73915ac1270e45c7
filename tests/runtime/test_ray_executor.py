"""Workers on a local Ray instance sharing one PostgreSQL run: an actor killed mid-run loses
nothing, every item is judged exactly once, no stored reply is paid for twice, and the survivors'
results equal a single process's."""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (extra 'ray')")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_backends import postgres_schema  # noqa: E402

from langrag_eval.runtime.ray_executor import run_workers_on_ray  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
N = 400


@pytest.fixture(scope="module")
def local_ray():
    # actors import the test helpers and this checkout, as the driver does
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if log.exists() else []


def test_actor_killed_mid_run_loses_nothing_and_pays_nothing_twice(local_ray, tmp_path: Path) -> None:
    from ray_work import GradeItems
    with postgres_schema() as url:
        log = tmp_path / "calls.log"
        work = GradeItems(url, str(log), N, str(tmp_path), latency=0.2)
        victims: list = []

        def kill_one(actors: list) -> None:
            victim = actors[1]
            pid = ray.get(victim.pid.remote())
            import threading

            def watch() -> None:
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline:
                    calls = Counter(c["pid"] for c in _logged(log))
                    if sum(calls.values()) > N // 4 and calls[pid] > 20:
                        break
                    time.sleep(0.05)
                victims.append(pid)
                ray.kill(victim, no_restart=True)
            threading.Thread(target=watch, daemon=True).start()

        outcomes = run_workers_on_ray(work, workers=2, on_start=kill_one)
        assert outcomes[1].lost and outcomes[0].value == N
        from resume_worker import expected_score
        survivor = json.loads((tmp_path / "w0.json").read_text())
        assert [r["score"] for r in survivor] == [expected_score(f"item-{i:05d}") for i in range(N)]
        calls = _logged(log)
        prompts = Counter(c["prompt"] for c in calls)
        assert len(prompts) == N
        by_victim = Counter(c["prompt"] for c in calls if c["pid"] == victims[0])
        assert by_victim
        repeated = [p for p, n in prompts.items() if n > 1]
        # only calls the victim was answered for in the instant before it died, not yet stored
        assert all(by_victim[p] == 1 for p in repeated) and len(repeated) <= 16
        import psycopg
        with psycopg.connect(url) as conn:
            judged = conn.execute("SELECT COUNT(*), COUNT(DISTINCT item) FROM judgments").fetchone()
            paid = conn.execute("SELECT key, COUNT(*) FROM calls WHERE cached=0 GROUP BY key "
                                "HAVING COUNT(*) > 1").fetchall()
        assert judged == (N, N) and paid == []

        # running the work again finishes only what is missing: nothing
        before = len(_logged(log))
        again = run_workers_on_ray(work, workers=2)
        assert [o.value for o in again] == [N, N] and len(_logged(log)) == before
