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
    # an actor may be writing its last line as it is read: only whole lines count
    return [json.loads(line) for line in log.read_text(encoding="utf-8").split("\n")[:-1] if line.strip()] \
        if log.exists() else []


@pytest.mark.slow
def test_actor_killed_mid_run_loses_nothing_and_pays_nothing_twice(local_ray, tmp_path: Path) -> None:
    from ray_work import GradeItems
    with postgres_schema() as url:
        log = tmp_path / "calls.log"
        # the victim (worker 1) judges a quarter of the run before the survivor starts: started
        # together, a survivor that started faster could judge every item before the victim made
        # the calls it is to be killed after
        work = GradeItems(url, str(log), N, str(tmp_path), latency=0.2, lead=N // 4 + 1)
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
        # the actors judged (through run.aevaluate's RayExecutor); their counts are reported here
        assert "reused 0 finished judgment(s), judged 60" in out and "model calls now: 60 " in out

        assert main(argv) == 0   # the same command again reads every row back and pays for nothing
        out, _ = capsys.readouterr()
        assert "reused 60 finished judgment(s), judged 0" in out and "model calls now: 0 " in out
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT COUNT(*) FROM calls WHERE cached=0").fetchone()[0] == paid[0]
        assert [json.loads(x)["score"] for x in (tmp_path / "out.jsonl").read_text().splitlines()] == \
            [r["score"] for r in records]


@pytest.mark.slow
def test_thelma_with_executor_ray_scores_as_locally(local_ray, tmp_path: Path, capsys) -> None:
    from langrag_eval.cli import main
    replies = {"<passage>": "<output>\n- Ada was born in 1815.\n</output>",
               "<message>": "<output>\n- When was Ada born?\n</output>", "": "<output>[1]</output>"}
    (tmp_path / "judge.json").write_text(json.dumps(replies), encoding="utf-8")
    rows = [{"id": f"t{i:02d}", "query": f"When was Ada born? ({i})", "sources": [f"Ada was born in 1815 ({i})."],
             "response": "" if i == 3 else f"Ada was born in 1815 ({i})."} for i in range(12)]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    def scores(out: Path) -> list:
        return [(r["id"], r["scores"], r["unscored"]) for r in map(json.loads, out.read_text().splitlines())]

    common = ["thelma", str(tmp_path / "t.jsonl"), "--judge", f"scripted:{tmp_path / 'judge.json'}",
              "--embedder", "none"]
    assert main([*common, "--store", str(tmp_path / "local.sqlite"), "--out", str(tmp_path / "local.jsonl")]) == 0
    with postgres_schema() as url:
        assert main([*common, "--store", url, "--out", str(tmp_path / "ray.jsonl"), "--executor", "ray"]) == 0
        out, err = capsys.readouterr()
        assert "ray: 2 worker(s) judging the run" in err and "judged 12" in out
        assert scores(tmp_path / "ray.jsonl") == scores(tmp_path / "local.jsonl")
        assert scores(tmp_path / "ray.jsonl")[3][2]["rp"]["cause"] == "undefined"


def test_a_command_not_judging_through_run_aevaluate_runs_whole_on_the_workers(tmp_path: Path, monkeypatch) -> None:
    import argparse

    from langrag_eval.cli import _common
    from langrag_eval.errors import ConfigError
    whole: list = []

    def run_whole(args: argparse.Namespace) -> None:
        whole.append(args)
        raise ConfigError("ran whole")

    monkeypatch.setattr(_common, "run_command_on_ray", run_whole)
    (tmp_path / "judge.json").write_text('["Score: [[5]], Reason: [[Right.]]"]', encoding="utf-8")
    with postgres_schema() as url:
        args = argparse.Namespace(concurrency=4, timeout=10.0, max_attempts=1, executor="ray", workers=2,
                                  ray_address=None, ray_gpus=0.0, store=url, batch=False, prices=None,
                                  judge=f"scripted:{tmp_path / 'judge.json'}")
        with pytest.raises(ConfigError, match="ran whole"):
            _common.setup_judge(args)
        setup = _common.setup_judge(args, executor=True)   # judges through run.aevaluate's executor
        assert whole == [args] and setup.spec == f"scripted:{tmp_path / 'judge.json'}"
        setup.store.close()


def test_executor_ray_needs_a_postgresql_store(tmp_path: Path, capsys) -> None:
    from langrag_eval.cli import main
    (tmp_path / "qa.csv").write_text("question,answer,label\nq?,a,l\n", encoding="utf-8")
    assert main(["grade", str(tmp_path / "qa.csv"), "--judge", "local", "--store", str(tmp_path / "s.sqlite"),
                 "--executor", "ray"]) == 2
    assert "--executor ray needs a PostgreSQL --store" in capsys.readouterr().err


# ---------------------------------------------------------------- RayExecutor: the run layer's executor

REPLIES = {f"answer text {n}": f"Score: [[{n}]], Reason: [[level {n}]]" for n in range(1, 6)}


def _samples(n: int = 20) -> list:
    from langrag_eval import Sample
    return [Sample(id=f"q{i:02d}", question=f"Question {i}?", answer=f"answer text {i % 5 + 1}",
                   reference=f"label {i}") for i in range(n)]


def _paid(url: str) -> tuple[int, int]:
    import psycopg
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM calls WHERE cached=0").fetchone()


def _local(evaluator_for, samples: list) -> list:
    """The same samples through LocalExecutor, on a judge with no store: the reference."""
    from langrag_eval import Judge
    from langrag_eval.run import LocalExecutor, evaluate
    from langrag_eval.testing import ScriptedModel
    return evaluate(samples, evaluator_for(Judge(ScriptedModel(REPLIES))), executor=LocalExecutor())["vrag"]


@pytest.mark.slow
def test_ray_executor_equals_local_and_a_rerun_reads_every_item_back(local_ray) -> None:
    from langrag_eval import Judge
    from langrag_eval.grading import VragGrader
    from langrag_eval.run import RayExecutor, evaluate
    from langrag_eval.runtime import open_store
    from langrag_eval.testing import ScriptedModel
    samples = _samples()
    events: list[str] = []
    with postgres_schema() as url:
        store = open_store(url)
        judge = Judge(ScriptedModel(REPLIES), store=store)
        run = evaluate(samples, VragGrader(judge), run_id="ray-run",
                       executor=RayExecutor(workers=2, on_event=events.append))
        assert run["vrag"] == _local(VragGrader, samples)
        assert [g.score for g in run["vrag"]] == [i % 5 + 1 for i in range(20)]
        assert events == ["ray: 2 worker(s) judging the run"]
        assert judge.model.calls == 0 and judge.usage.calls == 20  # judged by the actors, counted here
        counts = store.batch_counts("ray-run")
        assert (counts.reused, counts.judged) == (0, 20)
        assert _paid(url) == (20, 20)  # every prompt paid for once, by one worker or the other
        store.close()

        again_store = open_store(url)
        again_judge = Judge(ScriptedModel(REPLIES), store=again_store)
        again = evaluate(samples, VragGrader(again_judge), run_id="ray-run", executor=RayExecutor(workers=2))
        assert again["vrag"] == run["vrag"]
        counts = again_store.batch_counts("ray-run")
        assert (counts.reused, counts.judged) == (20, 0) and again_judge.usage.calls == 0
        assert _paid(url) == (20, 20)  # nothing judged, nothing paid
        again_store.close()


@pytest.mark.slow
def test_ray_executor_gives_the_raising_item_its_unscored(local_ray) -> None:
    from ray_work import GraderFailingOnQ07

    from langrag_eval import Judge
    from langrag_eval.grading import VragGrader
    from langrag_eval.results import Unscored
    from langrag_eval.run import RayExecutor, evaluate
    from langrag_eval.runtime import open_store
    from langrag_eval.testing import ScriptedModel
    samples = _samples()
    with postgres_schema() as url:
        store = open_store(url)
        results = evaluate(samples, {"vrag": GraderFailingOnQ07(Judge(ScriptedModel(REPLIES), store=store))},
                           run_id="failing", executor=RayExecutor(workers=2))["vrag"]
        failed = results[7]
        assert isinstance(failed, Unscored) and failed.cause == "evaluator_error"
        assert failed.reason == "evaluator raised RuntimeError: no grade for q07"
        local = _local(VragGrader, samples)
        assert results[:7] + results[8:] == local[:7] + local[8:]
        store.close()


@pytest.mark.slow
def test_ray_executor_takes_a_dead_workers_items_over(local_ray, tmp_path: Path) -> None:
    from ray_work import DyingModel

    from langrag_eval import Judge
    from langrag_eval.grading import VragGrader
    from langrag_eval.run import RayExecutor, evaluate
    from langrag_eval.runtime.pgstore import PostgresRunStore
    from langrag_eval.testing import ScriptedModel
    samples = _samples(40)
    events: list[str] = []
    with postgres_schema() as url:
        store = PostgresRunStore(url, claim_ttl=2.0)  # the workers open it with the same claim lifetime
        executor = RayExecutor(workers=2, model=DyingModel(REPLIES, str(tmp_path / "died"), calls=5),
                               on_event=events.append)
        results = evaluate(samples, VragGrader(Judge(ScriptedModel(REPLIES), store=store)), run_id="dying",
                           concurrency=2, executor=executor)["vrag"]
        assert (tmp_path / "died").exists() and any("lost" in e for e in events)
        assert results == _local(VragGrader, samples)
        import psycopg
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT COUNT(DISTINCT item) FROM judgments").fetchone() == (40,)
        store.close()


@pytest.mark.slow
def test_a_configuration_error_in_the_actors_is_raised_here(local_ray, tmp_path: Path) -> None:
    from langrag_eval import Judge
    from langrag_eval.cli._executor import ResolvedModel
    from langrag_eval.errors import ConfigError
    from langrag_eval.grading import VragGrader
    from langrag_eval.run import RayExecutor, evaluate
    from langrag_eval.runtime import open_store
    from langrag_eval.testing import ScriptedModel
    with postgres_schema() as url:
        store = open_store(url)
        missing = tmp_path / "missing.json"   # the actors' judge file: there is none
        with pytest.raises(ConfigError, match="missing.json"):
            evaluate(_samples(2), VragGrader(Judge(ScriptedModel(REPLIES), store=store)), run_id="r",
                     executor=RayExecutor(workers=2, model=ResolvedModel(f"scripted:{missing}")))
        store.close()


def test_ray_executor_refuses_a_store_the_workers_cannot_share(tmp_path: Path) -> None:
    from langrag_eval import Judge
    from langrag_eval.errors import ConfigError
    from langrag_eval.grading import VragGrader
    from langrag_eval.run import RayExecutor, evaluate
    from langrag_eval.runtime import open_store
    from langrag_eval.testing import ScriptedModel
    samples = _samples(2)
    with pytest.raises(ConfigError, match="needs a PostgreSQL run store .* and none was given"):
        evaluate(samples, VragGrader(Judge(ScriptedModel(REPLIES))), run_id="r", executor=RayExecutor())
    sqlite = open_store(str(tmp_path / "runs.sqlite"))
    with pytest.raises(ConfigError, match="PostgreSQL run store that every worker reaches, not .*runs.sqlite"):
        evaluate(samples, VragGrader(Judge(ScriptedModel(REPLIES), store=sqlite)), run_id="r",
                 executor=RayExecutor())
    with pytest.raises(ConfigError, match="needs a run id"):
        evaluate(samples, VragGrader(Judge(ScriptedModel(REPLIES), store=sqlite)), executor=RayExecutor())
    with pytest.raises(ConfigError, match="at least 1 worker"):
        RayExecutor(workers=0)


# ---------------------------------------------------------------- progress and streaming on Ray

def _recorded_bars(monkeypatch) -> list:
    """Every progress bar the run layer makes, here and in the batch, with the counts it advanced by
    and when (never drawn: its delay outlasts the test)."""
    from langrag_eval.runtime import batch, progress, ray_executor
    made: list = []

    class Recorded(progress.BatchProgress):
        def __init__(self, description: str, total: int, **options) -> None:
            super().__init__(description, total, delay=3600, force=True, show=options.get("show"))
            self.steps: list[tuple[int, float]] = []
            made.append(self)

        def advance(self, n: int = 1) -> None:
            self.steps.append((n, time.time()))
            super().advance(n)

    monkeypatch.setattr(batch, "BatchProgress", Recorded)
    monkeypatch.setattr(ray_executor, "BatchProgress", Recorded)
    return made


@pytest.mark.slow
def test_ray_executor_draws_the_progress_bar_the_local_executor_draws(local_ray, monkeypatch) -> None:
    import psycopg

    from langrag_eval import Judge
    from langrag_eval.grading import VragGrader
    from langrag_eval.run import LocalExecutor, RayExecutor, evaluate
    from langrag_eval.runtime import open_store
    from langrag_eval.testing import ScriptedModel
    samples = _samples(40)
    bars = _recorded_bars(monkeypatch)
    with postgres_schema() as url:
        store = open_store(url)

        def run(run_id: str, executor) -> tuple:
            # a model of the run's own: the Ray run's calls are not the local run's cached replies,
            # so its actors judge for seconds, not the few milliseconds that reading the cache takes
            judge = Judge(ScriptedModel(REPLIES, latency=0.1, model_id=f"scripted-{run_id}"), store=store)
            evaluate(samples, VragGrader(judge), run_id=run_id, concurrency=1, progress=True, executor=executor)
            bar = bars.pop()
            assert not bars   # one bar a run, as locally: the actors draw none
            return bar

        ray_executor = RayExecutor(workers=2, poll_interval=0.1)
        local, on_ray = run("local", LocalExecutor()), run("ray", ray_executor)
        assert (on_ray.description, on_ray.total, on_ray.enabled) == (local.description, 40, True) == \
            ("vRAG-Eval grading", 40, True)
        assert sum(n for n, _ in local.steps) == sum(n for n, _ in on_ray.steps) == 40
        assert local.steps and all(n == 1 for n, _ in local.steps)
        with psycopg.connect(url) as conn:
            last = conn.execute("SELECT MAX(created) FROM judgments WHERE run_id='ray'").fetchone()[0]
        assert min(t for _, t in on_ray.steps) < last   # it moved while the actors judged, not after
        assert len(on_ray.steps) > 1

        # a re-run: every item finished before, counted at once on both
        local, on_ray = run("local", LocalExecutor()), run("ray", ray_executor)
        assert [n for n, _ in local.steps] == [n for n, _ in on_ray.steps] == [40]
        store.close()


@pytest.mark.slow
def test_actors_streaming_one_run_when_one_dies_the_other_yields_every_item_once(local_ray, tmp_path: Path) -> None:
    from ray_work import StreamShare
    from stream_worker import expected, items
    n, chunk = 800, 40
    with postgres_schema() as url:
        work = StreamShare(url, str(tmp_path / "calls.log"), n, chunk, str(tmp_path / "died"), die_after=60)
        outcomes = run_workers_on_ray(work, workers=2)
        lost, kept = [o for o in outcomes if o.lost], [o for o in outcomes if not o.lost]
        assert len(lost) == 1 and len(kept) == 1 and (tmp_path / "died").exists()
        got, reads = kept[0].value
        assert got == [(i, expected(i)) for i in items(n)]   # every item once, in order, the dead one's too
        # its own chunks' rows, and the rows of the items it waited on (polled while the dead actor's
        # claims lapsed): linear. Reading the whole task at each chunk, as before, read about 85,000.
        assert reads <= 3 * n
        import psycopg
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT item) FROM judgments").fetchone() == (n, n)
        judged = Counter(json.loads(x)["item"] for x in (tmp_path / "calls.log").read_text().splitlines())
        assert set(judged) == set(items(n)) and max(judged.values()) <= 2
