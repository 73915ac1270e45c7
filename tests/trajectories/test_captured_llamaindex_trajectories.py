"""Trajectories recorded by LlamaIndex's ``capturing()`` itself, from the workflow step events its
instrumentation dispatches, for a ``FunctionAgent`` with two tools and an ``AgentWorkflow`` handoff
on LlamaIndex's own ``MockFunctionCallingLLM``. What proves them: the messages each mock model call
received and the calls it emitted (recorded by its response function), the arguments the tools
received (recorded by the tools), the workflow's own event stream read alongside, and its result."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool

from llama_index.evaluation.langrag import capturing
from langrag_eval.trajectories import Trajectory, trajectory_of_events

from agent_apps import TOOLS_RECEIVED, order_lookup, scripted, search_manuals

QUESTION = "How long is the pump's warranty, and is order 42 shipped?"


def run_captured(workflow) -> tuple[list, Trajectory, str]:
    """The workflow run inside ``capturing()``, its event stream read too (the second witness)."""
    async def main():
        handler = workflow.run(user_msg=QUESTION)
        events = [e async for e in handler.stream_events()]
        return events, await handler
    with capturing() as cap:
        events, result = asyncio.run(main())
    return cap, trajectory_of_events(events), str(result)


def test_a_function_agent_with_two_tools_is_captured_exactly() -> None:
    """https://docs.llamaindex.ai/en/stable/understanding/agent/"""
    TOOLS_RECEIVED.clear()
    emitted: list = []
    received: list = []
    calls = [("search_manuals", {"query": "pump warranty"}), ("order_status", {"order_id": "42"})]
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(search_manuals),
                                 FunctionTool.from_defaults(order_lookup, name="order_status")],
                          llm=scripted("agent", calls, "Two years; order 42 shipped on Monday.", emitted, received),
                          system_prompt="Answer from the manuals and the order system.")
    cap, streamed, answer = run_captured(agent)
    [sample], [captured] = cap.samples, cap.trajectories
    t = captured.trajectory
    assert captured.id == sample.id and sample.question == QUESTION
    assert t == streamed  # what the capture heard is what the workflow streamed
    assert [(c.name, c.arguments) for c in t.tool_calls()] == [(tool, args) for _, tool, args in emitted] == calls
    assert TOOLS_RECEIVED == calls
    assert [s.role for s in t.steps] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    # each model call received the trajectory so far
    firsts = [i for i, s in enumerate(t.steps) if s.role == "assistant"]
    assert [roles for _, roles in received] == [[s.role for s in t.steps[:i]] for i in firsts]
    assert t.steps[0].content == QUESTION and t.answer == answer == sample.answer


def test_an_agent_workflow_handoff_is_captured_exactly() -> None:
    """https://docs.llamaindex.ai/en/stable/understanding/agent/multi_agent/"""
    TOOLS_RECEIVED.clear()
    emitted: list = []
    received: list = []
    research = FunctionAgent(
        name="research", description="Finds the facts.", tools=[FunctionTool.from_defaults(search_manuals)],
        llm=scripted("research", [("search_manuals", {"query": "pump warranty"}),
                                  ("handoff", {"to_agent": "writer", "reason": "the facts are in"})], "",
                     emitted, received),
        system_prompt="Find the facts, then hand off to the writer.", can_handoff_to=["writer"])
    writer = FunctionAgent(name="writer", description="Writes the reply.", tools=[],
                           llm=scripted("writer", [], "The pump's warranty is two years.", emitted, received),
                           system_prompt="Write the reply.")
    cap, streamed, answer = run_captured(AgentWorkflow(agents=[research, writer], root_agent="research"))
    [captured] = cap.trajectories
    t = captured.trajectory
    assert t == streamed
    assert [(c.name, c.arguments) for c in t.tool_calls()] == [(tool, args) for _, tool, args in emitted]
    assert TOOLS_RECEIVED == [("search_manuals", {"query": "pump warranty"})]
    assert t.handoffs() == [("research", "writer")]
    assert [name for name, _ in received] == [s.agent for s in t.steps if s.role == "assistant"]
    assert t.answer == answer == cap.samples[0].answer == "The pump's warranty is two years."


def test_a_react_agent_is_captured_from_its_parsed_steps() -> None:
    """https://docs.llamaindex.ai/en/stable/examples/agent/react_agent/: the model writes text; the
    agent's output parses its action, which the trajectory keeps as the tool call."""
    from llama_index.core.agent.workflow import ReActAgent
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    TOOLS_RECEIVED.clear()
    replies = iter(['Thought: I need the manuals.\nAction: search_manuals\nAction Input: {"query": "pump warranty"}',
                    "Thought: I can answer without using any more tools.\nAnswer: Two years."])
    llm = MockFunctionCallingLLM(response_generator=lambda messages, **kw: ChatMessage(role="assistant",
                                                                                      content=next(replies)),
                                 is_chat_model=True)
    cap, streamed, answer = run_captured(ReActAgent(tools=[FunctionTool.from_defaults(search_manuals)], llm=llm))
    t = cap.trajectories[0].trajectory
    assert t == streamed and TOOLS_RECEIVED == [("search_manuals", {"query": "pump warranty"})]
    assert [(c.name, c.arguments) for c in t.tool_calls()] == TOOLS_RECEIVED
    assert [s.role for s in t.steps] == ["user", "assistant", "tool", "assistant"]
    assert t.steps[2].content == "The pump carries a warranty of two years."
    assert t.answer == answer == cap.samples[0].answer == "Two years."
