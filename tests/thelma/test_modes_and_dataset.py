"""Batched matching is validated against per-component matching on the same judge truth; calls and
tokens per sample are reported; a dataset run is resumable and summarised with spread."""

from __future__ import annotations

import pytest

from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.runtime import Judge, RunStore
from typing import Any, NamedTuple

from langrag_eval.testing import synthetic_dataset
from langrag_eval import Sample
from langrag_eval.thelma import METRICS, Thelma, summarize

WORDS = FunctionEmbedder(lambda ts: [[t.count("value"), t.count("Works"), 1.0] for t in ts], model_id="bag")


class Report(NamedTuple):
    results: list[Any]
    summary: dict[str, Any]


async def run(samples, script, batched, store=None, run_id=None):
    judge = Judge(script.model(), store=store, run_id=run_id)
    thelma = Thelma(judge, batched=batched, embedder=WORDS)
    results = await thelma.aevaluate_many(samples, store=store, run_id=run_id)
    return Report(results, thelma.summarize(results).details), judge


async def test_batched_agrees_with_per_component_on_every_sample_and_metric():
    samples, script = synthetic_dataset(40, seed=7)
    per, per_judge = await run(samples, script, batched=False)
    bat, bat_judge = await run(samples, script, batched=True)
    compared = 0
    for a, b in zip(per.results, bat.results):
        assert a.id == b.id
        for m in METRICS:
            assert a.score(m) == pytest.approx(b.score(m)) if a.score(m) is not None else b.score(m) is None
            if a.score(m) is not None:
                assert a.metrics[m].verdicts == b.metrics[m].verdicts
                compared += 1
    assert compared > 200
    # The data exercise both branches of every metric.
    for m in ("sp1", "sqc", "rp", "rqc", "gr"):
        scores = {r.score(m) for r in per.results}
        assert min(s for s in scores if s is not None) < 1.0 and 1.0 in scores
    assert bat_judge.usage.calls < 0.6 * per_judge.usage.calls
    assert per.summary["usage"]["calls"] == per_judge.usage.calls      # per-sample usage adds up
    assert bat.summary["usage"]["prompt_tokens"] == bat_judge.usage.prompt_tokens


async def test_multi_hop_question_asks_the_whole_source_set():
    samples, script = synthetic_dataset(60, seed=3)
    hops = {q for (q, s) in script.tables["answers"] if s is None}
    assert hops, "the synthetic data should hold a multi-hop question"
    model = script.model()
    sample = next(s for s in samples if any(q in s.question for q in hops))
    r = await Thelma(Judge(model), metrics=("sqc",)).aevaluate(sample)
    whole_set = [p for p in model.prompts if p.count("<source n=") == len(sample.contexts) > 1 and "<question>" in p]
    assert whole_set and 1 in r.metrics["sqc"].verdicts


async def test_dataset_run_resumes_from_the_store(tmp_path):
    samples, script = synthetic_dataset(6, seed=1)
    store = RunStore(tmp_path / "runs.sqlite")
    first, judge = await run(samples[:4], script, batched=True, store=store, run_id="r1")
    calls = judge.model.calls
    again, judge2 = await run(samples, script, batched=True, store=store, run_id="r1")
    assert [r.id for r in again.results] == [s.id for s in samples]
    assert again.results[0] == first.results[0]
    # Only the two new samples reached the model.
    assert 0 < judge2.model.calls < calls
    assert store.judgments("r1", "thelma:batched")[0]["scored"] is True


def test_summary_means_spread_and_unscored_counts():
    from langrag_eval.results import Unscored
    from langrag_eval.thelma import MetricScore, ThelmaResult
    rs = [ThelmaResult(id=str(i), metrics={"rp": MetricScore(metric="rp", score=s)}) for i, s in
          enumerate([0.0, 0.5, 1.0])]
    rs.append(ThelmaResult(id="x", metrics={"rp": Unscored(reason="empty response", cause="undefined")}))
    s = summarize(rs)["metrics"]["rp"]
    assert (s["mean"], s["std"], s["n"], s["unscored"], s["causes"]) == (0.5, 0.5, 3, 1, {"undefined": 1})
    only_unscored = summarize(rs[3:])["metrics"]["rp"]
    assert only_unscored["mean"] is None and only_unscored["std"] is None


async def test_duplicate_ids_are_refused():
    from langrag_eval.errors import DataError
    samples = [Sample(id="a", question="q?"), Sample(id="a", question="p?")]
    with pytest.raises(DataError, match="repeated"):
        await Thelma(Judge(synthetic_dataset(1)[1].model())).aevaluate_many(samples)


async def test_identical_checks_within_a_sample_are_asked_once():
    # The response repeats a source fact: RP and SP2 need the same essentiality check, asked once.
    from langrag_eval.testing import ThelmaScript
    fact = "Ada was born in 1815."
    model = ThelmaScript(default=1).model(latency=0.02)   # the two checks overlap in time
    await Thelma(Judge(model), metrics=("rp", "sp2")).aevaluate(
        Sample(question="When was Ada born?", contexts=[fact], answer=fact))
    essential = [p for p in model.prompts if "<fact>" in p]
    assert len(essential) == 1
    assert len([p for p in model.prompts if "<passage>" in p]) == 1   # same text, one extraction
