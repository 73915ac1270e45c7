"""The agents' parts the trajectory tests share, as the frameworks' docs build them: LangChain tools
and LangChain's fake chat model (keeping what each call received), LlamaIndex functions and
LlamaIndex's ``MockFunctionCallingLLM`` driven by a script (recording the calls it emitted). The
tools record the arguments they received: with the fakes' records, the oracle of every test."""

from __future__ import annotations

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.tools import tool
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from pydantic import Field

RECEIVED: list[tuple[str, dict]] = []       # what the LangChain tools received
TOOLS_RECEIVED: list[tuple[str, dict]] = []  # what the LlamaIndex functions received


@tool
def search_docs(query: str) -> str:
    """Search the product documents."""
    RECEIVED.append(("search_docs", {"query": query}))
    return "The pump carries a warranty of two years."


@tool
def order_status(order_id: str, verbose: bool = False) -> str:
    """Look an order up."""
    RECEIVED.append(("order_status", {"order_id": order_id, "verbose": verbose}))
    return "Shipped on Monday."


# The calls a good run makes, and runs that differ from it in each way the match modes tell apart.
REFERENCE = [("search_docs", {"query": "pump warranty"}), ("order_status", {"order_id": "42"})]
RUNS = {
    "same": REFERENCE,
    "reordered": list(reversed(REFERENCE)),
    "extra-call": REFERENCE + [("search_docs", {"query": "returns"})],
    "missing-call": REFERENCE[:1],
    "extra-argument": [REFERENCE[0], ("order_status", {"order_id": "42", "verbose": True})],
}


class ScriptedChat(GenericFakeChatModel):
    """https://docs.langchain.com/oss/python/langchain/agents: an agent's model is any chat model
    that binds tools; this one replies from its script and keeps the messages of each call."""

    received: list = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.received.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def search_manuals(query: str) -> str:
    """Search the product manuals."""
    TOOLS_RECEIVED.append(("search_manuals", {"query": query}))
    return "The pump carries a warranty of two years."


def order_lookup(order_id: str) -> str:
    """Look an order up."""
    TOOLS_RECEIVED.append(("order_status", {"order_id": order_id}))
    return "Order 42 shipped on Monday."


def scripted(name: str, calls: list[tuple[str, dict]], answer: str, emitted: list,
             received: list | None = None) -> MockFunctionCallingLLM:
    """LlamaIndex's mock model making ``calls`` one per turn, then answering; each call it emits goes
    to ``emitted`` as ``(name, tool, args)``, the roles of the messages each turn received to
    ``received``."""
    turns = iter(range(len(calls) + 1))

    def turn(messages, **kwargs):
        if received is not None:
            received.append((name, [m.role.value for m in messages if m.role.value != "system"]))
        i = next(turns)
        if i < len(calls):
            tool_name, args = calls[i]
            emitted.append((name, tool_name, args))
            return ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id=f"{name}-{i}", tool_name=tool_name,
                                                                       tool_kwargs=args)])
        return ChatMessage(role="assistant", content=answer)
    return MockFunctionCallingLLM(response_generator=turn, is_chat_model=True)
