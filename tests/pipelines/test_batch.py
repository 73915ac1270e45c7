"""Running agents over queries with run_batch: every pair answered once, resumable, failures recorded."""

from __future__ import annotations

import pytest
from pipeline_corpus import passage_ids, question_of

from langrag_eval.errors import ConfigError
from langrag_eval.pipelines import AGENT_NAMES, AgentAnswer, Query, arun_agents, run_agents, six_agents
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy, RunStore
from langrag_eval.testing import ScriptedModel

QUERIES = [Query(qid="ip", query="What is the IP rating of the IM72D128?"),
           Query(qid="co2", query="How small is the PAS CO2 sensor module?"),
           Query(qid="kp", query="Which pressure sensor suits airbags?")]


def reply(prompt: str) -> str:
    if "different search queries" in prompt:
        return "1. sensor datasheet\n2. product selection guide"
    return "answer from " + ",".join(passage_ids(prompt))


def test_six_agents_over_queries_then_a_second_run_makes_zero_model_calls(backend, minilm):
    store = RunStore(":memory:")
    first_model = ScriptedModel(reply)
    first = run_agents(six_agents(backend, minilm, Judge(first_model, store=store), k=3), QUERIES,
                       store=store, run_id="six")

    assert [(r.agent, r.qid) for r in first] == [(a, q.qid) for a in AGENT_NAMES for q in QUERIES]
    assert all(r.ok and isinstance(r.result, AgentAnswer) for r in first)
    assert all(r.result.agent == r.agent and r.result.id == r.qid for r in first)
    assert {r.qid: r.result.contexts[0].id for r in first if r.agent == "rag-bm25"} == \
        {"ip": "mic-ip", "co2": "co2-size", "kp": "pressure"}
    assert first_model.calls > 0

    # A fresh generator on the same run: every pair is read back, the model is not called and
    # the cache is not even consulted.
    second_model = ScriptedModel(reply)
    second_judge = Judge(second_model, store=store)
    second = run_agents(six_agents(backend, minilm, second_judge, k=3), QUERIES, store=store, run_id="six")
    assert second_model.calls == 0 and second_judge.usage.cached == 0
    assert [r.result for r in second] == [r.result for r in first]


def test_resumption_is_keyed_by_agent_and_query(backend, minilm):
    store = RunStore(":memory:")
    model = ScriptedModel(reply)
    agents = six_agents(backend, minilm, Judge(model), k=2)
    run_agents(agents[:1], QUERIES[:2], store=store, run_id="r")
    assert model.calls == 2  # rag-bm25 x 2 queries

    model2 = ScriptedModel(reply)
    judge2 = Judge(model2)
    agents2 = six_agents(backend, minilm, judge2, k=2)
    runs = run_agents([agents2[0], agents2[3]], QUERIES, store=store, run_id="r")
    # Only rag-bm25 on the third query (1 prompt) and fusion-bm25 on all three (2 prompts each) are
    # new; an answer prompt equal to one already sent is served by the generator's cache.
    assert model2.calls + judge2.usage.cached == 1 + 3 * 2
    assert len(runs) == 6 and all(r.ok for r in runs)
    # A different run id starts over.
    model3 = ScriptedModel(reply)
    run_agents(six_agents(backend, minilm, Judge(model3), k=2)[:1], QUERIES[:1], store=store, run_id="other")
    assert model3.calls == 1


async def test_a_failing_item_is_recorded_and_the_others_complete(backend, minilm):
    def flaky(prompt: str) -> str:
        if "PAS CO2" in question_of(prompt) and "different search queries" not in prompt:
            return "   "  # an empty answer for one query
        return reply(prompt)

    store = RunStore(":memory:")
    judge = Judge(ScriptedModel(flaky), retry=RetryPolicy(max_attempts=1))
    queries = [*QUERIES, Query(qid="blank", query="   ")]
    runs = await arun_agents(six_agents(backend, minilm, judge, k=2), queries, store=store, run_id="f", concurrency=4)

    failed = {(r.agent, r.qid): r.result for r in runs if not r.ok}
    assert set(failed) == {(a, q) for a in AGENT_NAMES for q in ("co2", "blank")}
    assert all(isinstance(u, Unscored) for u in failed.values())
    assert {u.cause for (a, q), u in failed.items() if q == "blank"} == {"invalid_input"}
    assert {u.cause for (a, q), u in failed.items() if q == "co2"} == {"unparseable"}
    assert sum(r.ok for r in runs) == 12
    stored = store.judgments("f")
    assert len(stored) == 24 and sum(not j["scored"] for j in stored) == 12


def test_names_and_qids_must_be_unique(backend):
    agents = six_agents(backend, None, Judge(ScriptedModel(reply)))
    with pytest.raises(ConfigError, match="agent names"):
        run_agents([agents[0], agents[0]], QUERIES)
    with pytest.raises(ConfigError, match="query ids"):
        run_agents(agents[:1], [QUERIES[0], QUERIES[0]])
