"""The run store contract, on SQLite and on PostgreSQL: every store holds runs, judgments with their
content fingerprints, the reply cache, the call log and artifacts the same way, and a batch resumes
the same way on either."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from langrag_eval.errors import ConfigError
from langrag_eval.model import Reply, TokenUsage
from langrag_eval.runtime import open_store, run_batch
from langrag_eval.runtime.store import StaleRunError
from langrag_eval.runtime.store_base import StoreBase

from store_backends import store_spec


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_spec(request.param, tmp_path) as value:
        yield value


@pytest.fixture
def store(spec: str) -> Iterator[StoreBase]:
    s = open_store(spec)
    yield s
    s.close()


def test_runs_judgments_and_artifacts_round_trip(store: StoreBase) -> None:
    run = store.open_run("grade", {"threshold": 4, "note": "naïve — 東京"}, inputs={"file": "abc"}, judge="m")
    assert store.open_run("grade", {"threshold": 4, "note": "naïve — 東京"}, inputs={"file": "abc"}) == run
    big = {"text": "x" * 200_000, "nested": [{"a": None, "b": 1.5, "c": "é\u2028"}]}
    store.put_judgment(run, "q1", "vrag", big, scored=True, fingerprint="f1")
    store.put_judgment(run, "q2", "vrag", {"cause": "timeout", "scored": False}, scored=False, fingerprint="f2")
    store.put_judgment(run, "q1", "vrag", {"score": 5}, scored=True, fingerprint="f3")  # replaced
    assert store.get_judgment_record(run, "q1", "vrag") == ({"score": 5}, "f3")
    assert store.get_judgment(run, "absent", "vrag") is None
    assert [(j["item"], j["scored"]) for j in store.judgments(run)] == [("q2", False), ("q1", True)]
    assert store.task_index(run, "vrag")["q2"][:3] == ("f2", False, "timeout")
    store.put_artifact(run, "vrag", {"accept_rate": 0.5})
    store.put_artifact(run, "vrag", {"accept_rate": 0.75})
    assert store.get_artifact(run, "vrag") == {"accept_rate": 0.75} and list(store.artifacts(run)) == ["vrag"]
    store.finish_run(run, {"items": 2})
    found = store.run(run[:10])
    assert found["summary"] == {"items": 2} and found["inputs"] == {"file": "abc"} and found["judge"] == "m"
    assert found["config"]["note"] == "naïve — 東京"
    assert [r["id"] for r in store.runs()] == [run]
    with pytest.raises(ConfigError, match="no run 'x%_'"):
        store.run("x%_")  # a prefix is matched literally


def test_last_write_is_the_latest_judgment_or_artifact(store: StoreBase) -> None:
    import time

    run = store.open_run("grade", {}, judge="m")
    assert store.last_write(run) is None  # nothing stored yet
    before = time.time()
    store.put_judgment(run, "q1", "vrag", {"score": 5}, scored=True)
    first = store.last_write(run)
    assert first is not None and before - 1 <= first <= time.time() + 1
    store.put_artifact(run, "vrag", {"accept_rate": 1.0})
    assert store.last_write(run) >= first
    assert store.last_write("no-such-run") is None


def test_a_task_is_read_for_the_items_named_only(store: StoreBase) -> None:
    run = store.open_run("grade", {"items": "named"})
    odd = ["q'1", "q,2", 'q"3', "東京", "%_"]   # names a list parameter must carry as they are
    for i, item in enumerate(odd + ["other"]):
        store.put_judgment(run, item, "vrag", {"score": i}, scored=True, fingerprint=f"f{i}")
    store.put_judgment(run, "q'1", "thelma", {"score": 9}, scored=True)
    assert store.task_results(run, "vrag", odd) == {item: {"score": i} for i, item in enumerate(odd)}
    assert store.task_results(run, "vrag", ["東京", "absent"]) == {"東京": {"score": 3}}
    assert set(store.task_index(run, "vrag", ["%_", "other"])) == {"%_", "other"}
    assert store.task_index(run, "vrag", []) == {} and store.task_results(run, "vrag", []) == {}
    assert len(store.task_results(run, "vrag")) == 6   # no items named: the whole task


def test_cache_and_call_log(store: StoreBase) -> None:
    run = store.open_run("grade", {})
    usage = TokenUsage(prompt_tokens=10, completion_tokens=3)
    store.cache_put("k1", "m", Reply(text="Score: [[4]]", usage=usage))
    store.cache_put("k1", "m", Reply(text="Score: [[5]]", usage=usage))
    store.log_call(run, "m", "k1", cached=False, ok=True, attempts=2, usage=usage, cost=0.5, error=None)
    store.log_call(run, "m", "k1", cached=True, ok=True, attempts=0, usage=usage, cost=None, error=None)
    store.flush()
    assert store.cache_get("k1").text == "Score: [[5]]" and store.cache_get("k2") is None
    total = store.usage(run)["total"]
    assert (total["calls"], total["cached"], total["attempts"], total["prompt_tokens"], total["cost"]) == (1, 1, 2, 10, 0.5)
    assert list(store.call_keys(run)) == ["k1"] and list(store.call_keys(run, cached=True)) == ["k1"]


def test_changed_inputs_and_settings_are_refused_unless_continued(store: StoreBase) -> None:
    store.open_run("grade", {"t": 4}, "named", inputs={"file": "a"})
    with pytest.raises(StaleRunError, match="other contents of file"):
        store.open_run("grade", {"t": 4}, "named", inputs={"file": "b"})
    assert store.open_run("grade", {"t": 4}, "named", inputs={"file": "b"}, allow_changed=True) == "named"
    assert store.run("named")["inputs"] == {"file": "b"}


class Echo(BaseModel):
    text: str


def test_batch_resumes_and_rejudges_changed_items(store: StoreBase) -> None:
    run = store.open_run("demo", {})
    calls: list[str] = []

    async def judge(item: dict) -> Echo:
        calls.append(item["text"])
        return Echo(text=item["text"].upper())

    def batch(items: list[dict]) -> list[Echo]:
        return asyncio.run(run_batch(items, judge, key=lambda i: i["id"], task="echo", result_type=Echo,
                                     store=store, run_id=run, concurrency=4))

    items = [{"id": f"i{n}", "text": f"t{n}"} for n in range(30)]
    assert [r.text for r in batch(items)] == [f"T{n}" for n in range(30)]
    assert len(calls) == 30
    items[7] = {"id": "i7", "text": "changed"}
    assert batch(items)[7].text == "CHANGED"
    assert calls[30:] == ["changed"]
    counts = store.batch_counts(run)
    assert (counts.reused, counts.judged, counts.changed) == (29, 31, 1)


def test_writes_from_many_threads(store: StoreBase) -> None:
    run = store.open_run("demo", {})

    def write(n: int) -> None:
        for i in range(20):
            store.put_judgment(run, f"{n}-{i}", "t", {"n": n, "i": i}, scored=True, fingerprint=str(i))
            store.cache_put(f"{n}-{i}", "m", Reply(text="x", usage=TokenUsage()))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.flush()
    assert len(store.judgments(run)) == 160 and store.cache_get("7-19").text == "x"


def test_store_from_a_newer_version_is_refused(spec: str) -> None:
    store = open_store(spec)
    store.close()
    if spec.startswith("postgresql"):
        import psycopg
        with psycopg.connect(spec, autocommit=True) as conn:
            conn.execute("UPDATE langrag_meta SET value='99' WHERE key='schema_version'")
    else:
        import sqlite3
        with sqlite3.connect(spec) as db:
            db.execute("PRAGMA user_version=99")
    with pytest.raises(ConfigError, match="schema version 99 is newer"):
        open_store(spec)


def test_postgres_url_without_a_server_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(ConfigError) as err:
        open_store("postgresql://nobody:secret@127.0.0.1:9/none")
    assert "secret" not in str(err.value) and "\n" not in str(err.value)


def test_a_real_deadlock_is_recognised_as_worth_retrying(tmp_path: Path) -> None:
    """Workers claiming overlapping items can deadlock; the store runs the aborted statement again.
    Here the server produces a real deadlock between two connections locking rows in opposite
    order, and the error it raises is the one the store retries."""
    import threading as th

    from store_backends import postgres_schema

    from langrag_eval.runtime.pgstore import _retryable
    with postgres_schema() as url:
        store = open_store(url)
        run = store.open_run("demo", {})
        for item in ("a", "b"):
            store.put_judgment(run, item, "t", {}, scored=True)
        errors: list[BaseException] = []
        barrier = th.Barrier(2)

        def lock(first: str, second: str) -> None:
            try:
                # a transaction of its own (the store's engine commits every statement)
                engine = store._engine.execution_options(isolation_level="READ COMMITTED")
                with engine.connect() as conn, conn.begin():
                    conn.exec_driver_sql("UPDATE judgments SET scored=1 WHERE item=%s", (first,))
                    barrier.wait()
                    conn.exec_driver_sql("UPDATE judgments SET scored=1 WHERE item=%s", (second,))
            except Exception as exc:  # one of the two is chosen as the victim
                errors.append(exc)

        threads = [th.Thread(target=lock, args=pair) for pair in (("a", "b"), ("b", "a"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        store.close()
    assert len(errors) == 1 and _retryable(errors[0])
