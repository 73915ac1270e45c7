"""Trajectories of a ``create_agent`` agent with two tools, built as LangChain's docs build it on
LangChain's own fake chat model: the trajectory read from the agent's returned state must hold
exactly the calls the model emitted and the tools received, and the match evaluators, run through
``langrag_eval.run.evaluate`` into a run store, must give agentevals' verdicts on the same messages."""

from __future__ import annotations

import pytest

agentevals = pytest.importorskip("agentevals.trajectory.match")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage

from langrag_eval.run import evaluate
from langrag_eval.runtime import RunStore
from langrag_eval.trajectories import Trajectory, TrajectoryMatch, TrajectorySample

from agent_apps import RECEIVED, REFERENCE, RUNS, ScriptedChat, order_status, search_docs

def run_agent(calls: list[tuple[str, dict]], answer: str) -> dict:
    script = [AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"call-{i}"}])
              for i, (n, a) in enumerate(calls)] + [AIMessage(content=answer)]
    agent = create_agent(ScriptedChat(messages=iter(script)), tools=[search_docs, order_status])
    return agent.invoke({"messages": [{"role": "user", "content": "Warranty and my order 42?"}]})


def test_the_trajectory_is_what_the_model_emitted_and_the_tools_received() -> None:
    RECEIVED.clear()
    state = run_agent(REFERENCE, "Two years; your order shipped on Monday.")
    t = Trajectory.of(state)
    assert [(c.name, c.arguments) for c in t.tool_calls()] == REFERENCE
    assert RECEIVED == [("search_docs", {"query": "pump warranty"}),
                        ("order_status", {"order_id": "42", "verbose": False})]
    assert [s.role for s in t.steps] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [s.tool_call_id for s in t.steps if s.role == "tool"] == ["call-0", "call-1"]
    assert t.answer == "Two years; your order shipped on Monday."



@pytest.mark.parametrize("mode", ["strict", "unordered", "subset", "superset"])
@pytest.mark.parametrize("args", ["exact", "ignore", "subset", "superset"])
def test_scores_through_the_run_layer_equal_agentevals(mode: str, args: str, tmp_path) -> None:
    reference = run_agent(REFERENCE, "Two years.")["messages"]
    states = {name: run_agent(calls, "Two years.")["messages"] for name, calls in RUNS.items()}
    samples = [TrajectorySample(id=name, trajectory=messages, reference=reference) for name, messages in states.items()]
    samples.append(TrajectorySample(id="no-reference", trajectory=reference))
    store = RunStore(tmp_path / "runs.sqlite")
    evaluator = TrajectoryMatch(mode=mode, args=args)
    run = evaluate(samples, {"trajectory": evaluator}, store=store, run_id="r1")
    results = {s.id: r for s, r in zip(samples, run["trajectory"])}
    oracle = agentevals.create_trajectory_match_evaluator(trajectory_match_mode=mode, tool_args_match_mode=args)
    for name, messages in states.items():
        expected = bool(oracle(outputs=messages, reference_outputs=reference)["score"])
        assert results[name].matched is expected, name
    assert results["no-reference"].cause == "invalid_input"
    summary = run.summary("trajectory")
    assert summary.n == len(samples) and summary.unscored == {"invalid_input": 1}
    again = evaluate(samples, {"trajectory": evaluator}, store=store, run_id="r1")
    assert [getattr(r, "matched", None) for r in again["trajectory"]] == \
        [getattr(r, "matched", None) for r in run["trajectory"]]
