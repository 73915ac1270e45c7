"""Trajectories of LlamaIndex agents as LlamaIndex's docs build them, on its own
``MockFunctionCallingLLM``: a ``FunctionAgent`` with a tool and an ``AgentWorkflow`` in which one
agent hands off to another. The trajectory read from the workflow's event stream must hold exactly the
calls the mock model emitted (recorded by the script that drives it), the arguments the tools
received (recorded by the tools), the handoff, and the final answer the workflow returned."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool

from langrag_eval.trajectories import Trajectory, matches, trajectory_of_events

from agent_apps import TOOLS_RECEIVED, order_lookup, scripted, search_manuals

QUESTION = "How long is the pump's warranty, and is order 42 shipped?"


def run(workflow) -> tuple[Trajectory, str]:
    async def main():
        handler = workflow.run(user_msg=QUESTION)
        events = [e async for e in handler.stream_events()]
        return events, await handler
    events, result = asyncio.run(main())
    return trajectory_of_events(events), str(result)


def test_a_function_agent_with_two_tools() -> None:
    """https://docs.llamaindex.ai/en/stable/understanding/agent/"""
    TOOLS_RECEIVED.clear()
    emitted: list = []
    calls = [("search_manuals", {"query": "pump warranty"}), ("order_status", {"order_id": "42"})]
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(search_manuals),
                                 FunctionTool.from_defaults(order_lookup, name="order_status")],
                          llm=scripted("agent", calls, "Two years; order 42 shipped on Monday.", emitted),
                          system_prompt="Answer from the manuals and the order system.")
    t, answer = run(agent)
    assert [(c.name, c.arguments) for c in t.tool_calls()] == [(tool, args) for _, tool, args in emitted] == calls
    assert TOOLS_RECEIVED == calls
    assert [s.role for s in t.steps] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert t.steps[0].content == QUESTION and t.answer == answer == "Two years; order 42 shipped on Monday."
    assert [s.content for s in t.steps if s.role == "tool"] == ["The pump carries a warranty of two years.",
                                                                "Order 42 shipped on Monday."]
    reference = Trajectory.of([{"role": "assistant", "tool_calls": [{"name": n, "args": a} for n, a in calls]}])
    assert matches(t, reference, "unordered") and not matches(t, reference, "strict")


def handoff_workflow(emitted: list) -> AgentWorkflow:
    """Two agents as the multi-agent guide builds them: research searches, then hands off to writer."""
    research = FunctionAgent(
        name="research", description="Finds the facts.", tools=[FunctionTool.from_defaults(search_manuals)],
        llm=scripted("research", [("search_manuals", {"query": "pump warranty"}),
                                  ("handoff", {"to_agent": "writer", "reason": "the facts are in"})], "", emitted),
        system_prompt="Find the facts, then hand off to the writer.", can_handoff_to=["writer"])
    writer = FunctionAgent(name="writer", description="Writes the reply.", tools=[],
                           llm=scripted("writer", [], "The pump's warranty is two years.", emitted),
                           system_prompt="Write the reply.")
    return AgentWorkflow(agents=[research, writer], root_agent="research")


def test_an_agent_workflow_handoff() -> None:
    """https://docs.llamaindex.ai/en/stable/understanding/agent/multi_agent/ (``AgentWorkflow``, ``can_handoff_to``)"""
    TOOLS_RECEIVED.clear()
    emitted: list = []
    t, answer = run(handoff_workflow(emitted))
    assert [(c.name, c.arguments) for c in t.tool_calls()] == [(tool, args) for _, tool, args in emitted]
    assert TOOLS_RECEIVED == [("search_manuals", {"query": "pump warranty"})]
    assert t.agents() == ["research", "writer"]
    assert [(s.role, s.agent) for s in t.steps if s.role == "assistant"] == \
        [("assistant", "research"), ("assistant", "research"), ("assistant", "writer")]
    assert t.answer == answer == "The pump's warranty is two years."
