"""Trajectories recorded by ``capturing()`` itself, from LangChain's callbacks, for agents built as
LangChain's and LangGraph's docs build them on LangChain's own fake chat model: a ``create_agent``
with two tools (one turn calling both at once), and a multi-agent graph whose agents hand off to each
other with ``Command`` tools. What proves them: the messages each fake model call received (recorded
by the model), the arguments the tools received (recorded by the tools), and the framework's own
final state. The RAG sample of the same call is formed as before, and the match verdicts on the
captured trajectories equal agentevals' on the framework's own messages, in every mode."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

agentevals = pytest.importorskip("agentevals.trajectory.match")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from langchain_langrag import capturing
from langrag_eval.run import evaluate
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.trajectories import Trajectory, TrajectoryJudge, TrajectoryMatch, TrajectorySample

from agent_apps import RECEIVED, REFERENCE, RUNS, ScriptedChat, order_status, search_docs

QUESTION = "How long is the pump's warranty, and has order 42 shipped?"


def calls(*batches: list[tuple[str, dict]], answer: str, prefix: str = "c") -> list[AIMessage]:
    """One model reply per batch (its tool calls, made at once), then the answer."""
    return [AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"{prefix}{i}-{j}"}
                                              for j, (n, a) in enumerate(batch)])
            for i, batch in enumerate(batches)] + [AIMessage(content=answer)]


def steps_received(model: ScriptedChat) -> list[list]:
    """The trajectory each model call saw: its input messages less the system prompt."""
    return [[s for s in Trajectory.of(m).steps if s.role != "system"] for m in model.received]


def assert_model_saw_the_trajectory(t: Trajectory, *models: ScriptedChat) -> None:
    """Before each assistant step, the trajectory so far is what that model call received."""
    seen = sorted((s for m in models for s in steps_received(m)), key=len)
    firsts = [i for i, s in enumerate(t.steps) if s.role == "assistant"]
    assert len(seen) == len(firsts)
    for at, received in zip(firsts, seen):
        strip = [s.model_copy(update={"agent": None}) for s in t.steps[:at]]
        assert strip == [s.model_copy(update={"agent": None}) for s in received]


# --------------------------------------------------------------------------- create_agent, two tools

def test_create_agent_with_two_tools_is_captured_exactly() -> None:
    """https://docs.langchain.com/oss/python/langchain/agents (``create_agent(model, tools=...)``)"""
    RECEIVED.clear()
    script = calls([("search_docs", {"query": "pump warranty"})],
                   [("order_status", {"order_id": "42"}), ("search_docs", {"query": "shipping"})],
                   answer="Two years; order 42 shipped on Monday.")
    model = ScriptedChat(messages=iter(script))
    agent = create_agent(model, tools=[search_docs, order_status], system_prompt="Answer from the documents.")
    with capturing() as cap:
        state = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
    [sample], [captured] = cap.samples, cap.trajectories
    t = captured.trajectory
    assert captured.id == sample.id and captured.question == sample.question == QUESTION
    assert t == Trajectory.of(state)  # the framework's own state, step for step
    assert [(c.name, c.arguments) for c in t.tool_calls()] == \
        [(c["name"], c["args"]) for m in script for c in m.tool_calls]
    assert sorted(RECEIVED, key=str) == sorted([("search_docs", {"query": "pump warranty"}),
                                                ("order_status", {"order_id": "42", "verbose": False}),
                                                ("search_docs", {"query": "shipping"})], key=str)
    assert [s.tool_call_id for s in t.steps if s.role == "tool"] == ["c0-0", "c1-0", "c1-1"]  # the calls' order
    assert_model_saw_the_trajectory(t, model)
    # the RAG sample is formed by the capture's rule, as before: the answer, and the tools' results
    assert sample.answer == t.answer == "Two years; order 42 shipped on Monday."
    assert {d.text for d in sample.contexts} <= {"The pump carries a warranty of two years.", "Shipped on Monday."}


def test_each_call_in_a_block_has_its_own_trajectory_and_a_plain_chain_none_of_tools() -> None:
    from langchain_core.runnables import RunnableLambda

    agent_model = ScriptedChat(messages=iter(calls([("order_status", {"order_id": "7"})], answer="Shipped.")))
    agent = create_agent(agent_model, tools=[order_status])
    echo = RunnableLambda(lambda q: f"echo {q}")
    with capturing() as cap:
        state = agent.invoke({"messages": [{"role": "user", "content": "Order 7?"}]})
        echo.invoke("hello")
    assert [s.answer for s in cap.samples] == ["Shipped.", "echo hello"]
    agent_t, echo_t = (c.trajectory for c in cap.trajectories)
    assert agent_t == Trajectory.of(state) and echo_t.steps == ()
    cap.clear()
    assert cap.trajectories == []


# --------------------------------------------------------------------------- a multi-agent graph

def create_handoff_tool(*, agent_name: str):
    """https://docs.langchain.com/oss/python/langgraph/multi-agent (handoffs): a tool that returns a
    ``Command`` to the parent graph, going to the other agent with the tool's message added."""
    name = f"transfer_to_{agent_name}"

    @tool(name, description=f"Transfer to {agent_name}")
    def handoff_tool(state: Annotated[MessagesState, InjectedState],
                     tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        message = {"role": "tool", "content": f"Successfully transferred to {agent_name}", "name": name,
                   "tool_call_id": tool_call_id}
        return Command(goto=agent_name, update={"messages": state["messages"] + [message]}, graph=Command.PARENT)
    return handoff_tool


def multi_agent(research_calls: list[tuple[str, dict]]) -> tuple[Any, list[ScriptedChat]]:
    """A researcher with the two tools hands off to a writer, who answers."""
    research_model = ScriptedChat(messages=iter(
        calls(*[[c] for c in research_calls], [("transfer_to_writer", {})], answer="", prefix="r")[:-1]))
    writer_model = ScriptedChat(messages=iter([AIMessage(content="Two years; order 42 shipped on Monday.")]))
    research = create_agent(research_model, tools=[search_docs, order_status, create_handoff_tool(agent_name="writer")],
                            system_prompt="Find the facts, then hand off to the writer.", name="research")
    writer = create_agent(writer_model, tools=[], system_prompt="Write the reply.", name="writer")
    graph = (StateGraph(MessagesState).add_node(research).add_node(writer)
             .add_edge(START, "research").compile())
    return graph, [research_model, writer_model]




def captured_run(research_calls) -> tuple[Trajectory, list, list[ScriptedChat]]:
    graph, models = multi_agent(research_calls)
    with capturing() as cap:
        state = graph.invoke({"messages": [{"role": "user", "content": QUESTION}]})
    [captured] = cap.trajectories
    return captured.trajectory, state["messages"], models


def test_a_handoff_graph_is_captured_exactly_with_the_handoff_as_steps() -> None:
    RECEIVED.clear()
    t, messages, models = captured_run(REFERENCE)
    assert t == Trajectory.of(messages)
    assert t.agents() == ["research", "writer"] and t.handoffs() == [("research", "writer")]
    handoff = [s for s in t.steps if s.tool_calls and s.tool_calls[0].name == "transfer_to_writer"]
    assert len(handoff) == 1 and handoff[0].agent == "research"
    assert [s.content for s in t.steps if s.role == "tool"][-1] == "Successfully transferred to writer"
    assert RECEIVED == [("search_docs", {"query": "pump warranty"}), ("order_status", {"order_id": "42", "verbose": False})]
    assert_model_saw_the_trajectory(t, *models)
    assert t.answer == "Two years; order 42 shipped on Monday." and t.steps[-1].agent == "writer"


@pytest.mark.parametrize("mode", ["strict", "unordered", "subset", "superset"])
@pytest.mark.parametrize("args", ["exact", "ignore", "subset", "superset"])
def test_every_match_mode_gives_agentevals_verdict_on_the_graph(mode: str, args: str, tmp_path) -> None:
    reference_t, reference, _ = captured_run(REFERENCE)
    runs = {name: captured_run(research) for name, research in RUNS.items()}
    samples = [TrajectorySample(id=name, trajectory=t, reference=reference_t) for name, (t, _, _) in runs.items()]
    run = evaluate(samples, {"match": TrajectoryMatch(mode=mode, args=args)},
                   store=RunStore(tmp_path / "runs.sqlite"), run_id="graph")
    oracle = agentevals.create_trajectory_match_evaluator(trajectory_match_mode=mode, tool_args_match_mode=args)
    for sample, result in zip(samples, run["match"]):
        messages = runs[sample.id][1]  # agentevals reads the graph's own state, we the captured steps
        assert result.matched is bool(oracle(outputs=messages, reference_outputs=reference)["score"]), sample.id


def test_the_judge_grades_captured_trajectories_once_each(tmp_path) -> None:
    trajectories = {name: captured_run(research)[0] for name, research in list(RUNS.items())[:3]}
    model = ScriptedModel(lambda p: "Score: [[5]], Reason: [[Direct.]]" if "transfer_to_writer" in p
                          else "Score: [[1]], Reason: [[No handoff.]]")
    store = RunStore(tmp_path / "runs.sqlite")
    samples = [TrajectorySample(id=n, question=QUESTION, trajectory=t) for n, t in trajectories.items()]
    run = evaluate(samples, {"judge": TrajectoryJudge(Judge(model, store=store))}, store=store, run_id="j")
    assert [r.score for r in run["judge"]] == [5, 5, 5] and len(model.prompts) == 3
    assert all("assistant (research): calls transfer_to_writer({})" in p for p in model.prompts)
    evaluate(samples, {"judge": TrajectoryJudge(Judge(model, store=store))}, store=store, run_id="j")
    assert len(model.prompts) == 3  # resumed: no call paid twice
