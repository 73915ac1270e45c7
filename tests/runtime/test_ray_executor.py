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
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), str(ROOT), before or ""])
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def _logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if log.exists() else []


@pytest.mark.slow
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


@pytest.mark.slow
def test_grade_with_executor_ray_judges_every_row_once_and_reports_here(local_ray, tmp_path: Path, capsys) -> None:
    import csv
    from langrag_eval.cli import main
    rows = [[f"q{i:03d}", f"Question {i}?", f"answer text {i % 5 + 1}", f"label {i}"] for i in range(60)]
    with (tmp_path / "qa.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["id", "question", "answer", "label"], *rows])
    replies = {f"answer text {n}": f"Score: [[{n}]], Reason: [[level {n}]]" for n in range(1, 6)}
    (tmp_path / "judge.json").write_text(json.dumps(replies), encoding="utf-8")
    with postgres_schema() as url:
        argv = ["grade", str(tmp_path / "qa.csv"), "--judge", f"scripted:{tmp_path / 'judge.json'}",
                "--store", url, "--out", str(tmp_path / "out.jsonl"), "--executor", "ray", "--workers", "2"]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert "ray: 2 worker(s) judging the run" in err and "scored 60 of 60" in out
        records = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
        assert [r["score"] for r in records] == [i % 5 + 1 for i in range(60)]
        import psycopg
        with psycopg.connect(url) as conn:
            judged = conn.execute("SELECT COUNT(*), COUNT(DISTINCT item) FROM judgments").fetchone()
            paid = conn.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM calls WHERE cached=0").fetchone()
        assert judged == (60, 60) and paid[0] == paid[1]  # each prompt paid for once, by some worker
        assert "reused 60 finished judgment(s), judged 0" in out  # this process only read the run back


def test_executor_ray_needs_a_postgresql_store(tmp_path: Path, capsys) -> None:
    from langrag_eval.cli import main
    (tmp_path / "qa.csv").write_text("question,answer,label\nq?,a,l\n", encoding="utf-8")
    assert main(["grade", str(tmp_path / "qa.csv"), "--judge", "local", "--store", str(tmp_path / "s.sqlite"),
                 "--executor", "ray"]) == 2
    assert "--executor ray needs a PostgreSQL --store" in capsys.readouterr().err
