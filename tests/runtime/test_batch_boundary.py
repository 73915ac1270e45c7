"""Failures are data at the batch boundary: an exception raised by an evaluator on one sample is that
sample's Unscored (cause ``evaluator_error``, the exception's type and message in the reason), the
other samples keep their results, and a re-run of the batch tries the failed sample again (the
error is not a judgment). Configuration errors still stop the batch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from langrag_eval import Evaluator
from langrag_eval.errors import ConfigError, RateLimitError
from langrag_eval.results import Unscored
from langrag_eval.runtime import RunStore, run_batch


class Length(BaseModel):
    n: int


class Lookup(Evaluator[str, Length]):
    """A user's evaluator with a bug: a sample missing from its table raises KeyError."""

    task, result_type = "lookup", Length

    def __init__(self, table: dict[str, int]) -> None:
        self.table = table
        self.seen: list[str] = []

    async def aevaluate(self, sample: str) -> Length | Unscored:
        self.seen.append(sample)
        return Length(n=self.table[sample])


def _table(samples: list[str], missing: set[str]) -> dict[str, int]:
    return {s: len(s) for s in samples if s not in missing}


@settings(max_examples=25, deadline=None)
@given(samples=st.lists(st.text(alphabet="abcxyz", min_size=1, max_size=6), min_size=1, max_size=12, unique=True),
       data=st.data())
def test_a_key_error_on_some_items_is_their_unscored_and_the_rest_are_scored(samples: list[str], data) -> None:  # noqa: ANN001
    missing = set(data.draw(st.lists(st.sampled_from(samples), max_size=len(samples), unique=True)))
    results = Lookup(_table(samples, missing)).evaluate_many(samples)
    assert len(results) == len(samples)
    for sample, result in zip(samples, results):
        if sample in missing:
            assert isinstance(result, Unscored) and result.cause == "evaluator_error"
            assert result.reason == f"evaluator raised KeyError: {sample!r}"
        else:
            assert result == Length(n=len(sample))


def test_the_failed_item_is_tried_again_on_resume_and_the_others_are_read_back(tmp_path: Path) -> None:
    samples = [f"sample-{i}" for i in range(8)]
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("lookup", {})
    broken = Lookup(_table(samples, {"sample-3"}))
    first = broken.evaluate_many(samples, store=store, run_id=run)
    assert [isinstance(r, Unscored) for r in first] == [i == 3 for i in range(8)]
    assert first[3].cause == "evaluator_error" and "KeyError" in first[3].reason
    stored = store.task_results(run, "lookup")
    # the run records what happened
    assert sorted(r.get("cause", "scored") for r in stored.values()) == ["evaluator_error"] + ["scored"] * 7

    fixed = Lookup(_table(samples, set()))
    second = fixed.evaluate_many(samples, store=store, run_id=run)
    assert fixed.seen == ["sample-3"]  # only the failed item is evaluated again
    assert second == [Length(n=len(s)) for s in samples]


def test_configuration_errors_still_stop_the_batch() -> None:
    class Misconfigured(Lookup):
        async def aevaluate(self, sample: str) -> Length | Unscored:
            if sample == "b":
                raise ConfigError("no prompt named 'grade/nothing'")
            return await super().aevaluate(sample)

    with pytest.raises(ConfigError, match="grade/nothing"):
        Misconfigured({"a": 1, "c": 1}).evaluate_many(["a", "b", "c"])


def test_a_model_call_error_escaping_an_evaluator_keeps_its_cause() -> None:
    async def call(item: str) -> Length:
        if item == "busy":
            raise RateLimitError("429 from the provider")
        return Length(n=len(item))

    results = asyncio.run(run_batch(["ok", "busy"], call, key=str, task="t", result_type=Length))
    assert results[0] == Length(n=2)
    assert isinstance(results[1], Unscored) and results[1].cause == "rate_limit"


def test_cancellation_is_not_turned_into_a_result() -> None:
    async def slow(item: str) -> Length:
        await asyncio.sleep(10)
        return Length(n=0)

    async def main() -> None:
        task = asyncio.create_task(run_batch(["a", "b"], slow, key=str, task="t", result_type=Length))
        await asyncio.sleep(0.01)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_boundary_holds_on_every_store_and_on_the_shared_one(kind: str, tmp_path: Path) -> None:
    """The same on a PostgreSQL store, where workers share the batch by claims (its own path)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from store_backends import store_spec

    from langrag_eval.runtime import open_store

    samples = [f"s{i}" for i in range(6)]
    with store_spec(kind, tmp_path) as spec:
        store = open_store(spec)
        try:
            run = store.open_run("lookup", {})
            first = Lookup(_table(samples, {"s2", "s5"})).evaluate_many(samples, store=store, run_id=run)
            assert [getattr(r, "cause", None) for r in first] == [None, None, "evaluator_error", None, None,
                                                                 "evaluator_error"]
            fixed = Lookup(_table(samples, set()))
            assert fixed.evaluate_many(samples, store=store, run_id=run) == [Length(n=2)] * 6
            assert sorted(fixed.seen) == ["s2", "s5"]
        finally:
            store.close()
