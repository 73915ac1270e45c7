"""One judge shared by many threads and event loops at once: the limiter bounds every loop together,
a call in flight on one loop is awaited from another instead of being made twice, and no
``attached to a different loop`` error reaches a result."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge, Limiter, run_sync
from langrag_eval.testing import ScriptedModel
from langrag_eval import Sample
from langrag_eval.thelma import Decomposer, Thelma

GRADES = {"<answer>\nParis": "Score: [[5]], Reason: [[Right.]]", "": "Score: [[2]], Reason: [[Wrong.]]"}


def samples(n: int) -> list[Sample]:
    return [Sample(id=f"s{i}", question=f"Capital number {i % 5}?", answer="Paris" if i % 2 else "Lyon",
                      reference="Paris") for i in range(n)]


def test_sixteen_threads_share_one_judge_with_no_duplicate_paid_call() -> None:
    model = ScriptedModel(GRADES, latency=0.02)
    judge = Judge(model, concurrency=4)
    grader = VragGrader(judge)
    items = samples(64)  # 10 distinct (question, answer) pairs, each asked by several threads
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(grader.evaluate, items))
    assert [r.score for r in results] == [5 if s.answer == "Paris" else 2 for s in items]
    distinct = {(s.question, s.answer) for s in items}
    assert model.calls == len(distinct) == 10
    assert judge.usage.calls == 10 and judge.usage.cached == 54
    assert model.peak_concurrency <= 4 and judge.limiter.peak <= 4


def test_asyncio_run_per_thread_shares_in_flight_calls() -> None:
    """The same prompt asked at the same moment from eight loops is one model call."""
    model = ScriptedModel(GRADES, latency=0.05)
    judge = Judge(model)
    grader = VragGrader(judge)
    start = threading.Barrier(8)

    def one(_: int):
        start.wait()
        return asyncio.run(grader.aevaluate(Sample(question="Capital of France?", answer="Paris", reference="Paris")))

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(8)))
    assert {r.score for r in results} == {5}
    assert model.calls == 1 and judge.usage.cached == 7


@settings(max_examples=15, deadline=None)
@given(limit=st.integers(1, 4), threads=st.integers(2, 6), per_thread=st.integers(1, 6))
def test_limiter_bounds_every_loop_together(limit: int, threads: int, per_thread: int) -> None:
    limiter = Limiter(limit)
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    async def call() -> None:
        async with limiter.slot():
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            await asyncio.sleep(0.002)
            with lock:
                state["now"] -= 1

    async def batch() -> None:
        await asyncio.gather(*(call() for _ in range(per_thread)))

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda _: asyncio.run(batch()), range(threads)))
    assert state["peak"] <= limit and limiter.peak <= limit
    assert limiter.in_flight == 0


def test_cancelled_waiters_give_their_slot_back() -> None:
    limiter = Limiter(1)

    async def scenario() -> int:
        async def hold(seconds: float) -> None:
            async with limiter.slot():
                await asyncio.sleep(seconds)

        holder = asyncio.create_task(hold(0.05))
        await asyncio.sleep(0)
        waiters = [asyncio.create_task(hold(0)) for _ in range(3)]
        await asyncio.sleep(0.01)
        for w in waiters[:2]:
            w.cancel()
        await holder
        await asyncio.gather(*waiters, return_exceptions=True)
        async with limiter.slot():  # would hang if a cancelled waiter kept the slot
            return limiter.in_flight

    assert asyncio.run(asyncio.wait_for(scenario(), 2)) == 1
    assert limiter.in_flight == 0


@given(st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=12))
@settings(max_examples=40, deadline=None)
def test_a_freed_slot_goes_to_the_highest_priority_first_come_among_equals(waiting) -> None:
    # each waiter: its priority and whether it is cancelled before the slot is freed
    limiter, order = Limiter(1), []

    async def scenario() -> None:
        async def hold(i: int, priority: int) -> None:
            async with limiter.slot(priority):
                order.append(i)
                await asyncio.sleep(0)

        gate = asyncio.Event()

        async def holder() -> None:
            async with limiter.slot():
                await gate.wait()

        first = asyncio.create_task(holder())
        await asyncio.sleep(0)
        tasks = []
        for i, (priority, _) in enumerate(waiting):
            tasks.append(asyncio.create_task(hold(i, priority)))
            await asyncio.sleep(0)  # queued in this order
        for task, (_, cancel) in zip(tasks, waiting):
            if cancel:
                task.cancel()
        await asyncio.sleep(0)
        gate.set()
        await first
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(asyncio.wait_for(scenario(), 2))
    kept = [(i, p) for i, (p, cancel) in enumerate(waiting) if not cancel]
    assert order == [i for i, _ in sorted(kept, key=lambda ip: (-ip[1], ip[0]))]
    assert limiter.in_flight == 0 and not limiter._waiters


def test_a_judge_with_priority_is_served_before_calls_queued_earlier() -> None:
    # one slot held: a match queued first, then a decomposition through the Decomposer's judge
    seen: list[str] = []

    def reply(prompt: str) -> str:
        seen.append(prompt.split()[0])
        return "<output>\n- A.\n</output>" if "atomic claims" in prompt else "<output>1</output>"

    judge = Judge(ScriptedModel(reply, latency=0.01), concurrency=1)

    async def scenario() -> None:
        first = asyncio.create_task(judge.complete("holder"))
        await asyncio.sleep(0)
        later = asyncio.create_task(judge.complete("match"))
        await asyncio.sleep(0)
        claims = await Decomposer(judge).aclaims("Ada was born in 1815.")
        assert claims == ["A."]
        await asyncio.gather(first, later)

    asyncio.run(asyncio.wait_for(scenario(), 2))
    assert seen[0] == "holder" and seen[2] == "match" and len(seen) == 3


def test_a_handed_over_slot_sends_before_the_old_holder_reads_its_reply() -> None:
    # aiohttp (before Python 3.12) writes a request's body from a task it starts: that task must
    # run before the call that freed the slot goes on to read its reply, or the slot idles
    limiter, order = Limiter(1), []

    async def scenario() -> None:
        async def write() -> None:
            order.append("second sent")

        async def first() -> None:
            async with limiter.slot():
                await asyncio.sleep(0.01)
            order.append("first read")

        async def second() -> None:
            async with limiter.slot():
                writer = asyncio.get_running_loop().create_task(write())
                await asyncio.sleep(0.01)
                await writer

        await asyncio.gather(first(), second())

    asyncio.run(asyncio.wait_for(scenario(), 2))
    assert order == ["second sent", "first read"]


def test_a_cancelled_owner_leaves_the_waiter_to_make_the_call() -> None:
    model = ScriptedModel(GRADES, latency=0.05)
    judge = Judge(model)

    async def scenario():
        owner = asyncio.create_task(judge.complete("<answer>\nParis?"))
        await asyncio.sleep(0.01)
        waiter = asyncio.create_task(judge.complete("<answer>\nParis?"))
        await asyncio.sleep(0.01)
        owner.cancel()
        return await waiter

    assert asyncio.run(scenario()).text == GRADES["<answer>\nParis"]
    assert model.calls == 2 and judge.usage.calls == 1


def test_thelma_sync_evaluate_from_sixteen_threads() -> None:
    from langrag_eval.testing import ThelmaScript

    script = ThelmaScript(questions={"When was Ada born?": ["When was Ada born?"]},
                          essential=lambda key: 1, supported=lambda key: 1, source=lambda key: 1,
                          answers=lambda key: 1, addresses=lambda key: 1)
    model = script.model()
    judge = Judge(model, concurrency=3)
    thelma = Thelma(judge, metrics=("rp", "gr", "sp1"))
    sample = Sample(question="When was Ada born?", contexts=["Ada was born in 1815."],
                          answer="Ada was born in 1815.")
    alone = Thelma(Judge(script.model()), metrics=("rp", "gr", "sp1")).evaluate(sample)
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda _: thelma.evaluate(sample), range(16)))
    assert all(r.score_values() == alone.score_values() for r in results)
    assert model.calls == alone.usage.calls  # sixteen evaluations, one evaluation's calls
    assert judge.usage.calls == alone.usage.calls and model.peak_concurrency <= 3


def test_run_sync_inside_a_running_loop_uses_the_shared_judge() -> None:
    model = ScriptedModel(GRADES)
    grader = VragGrader(Judge(model))

    async def app() -> int:  # a sync callback called from inside an async framework
        return run_sync(grader.aevaluate(Sample(question="q", answer="Paris", reference="Paris"))).score

    assert asyncio.run(app()) == 5
    assert asyncio.run(app()) == 5 and model.calls == 1


@pytest.mark.parametrize("threads", [4, 16])
def test_store_backed_judge_from_threads(tmp_path, threads: int) -> None:
    from langrag_eval.runtime import RunStore

    store = RunStore(tmp_path / "runs.sqlite")
    model = ScriptedModel(GRADES, latency=0.01)
    judge = Judge(model, store=store, run_id=store.open_run("grade", {"t": threads}))
    grader = VragGrader(judge)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(grader.evaluate, samples(40)))
    store.flush()
    usage = store.usage(judge.run_id)["total"]
    assert model.calls == usage["calls"] == 10 and usage["cached"] == 30
