"""Chat apps as the simulator drives them: a callable that takes the user's message and returns the
reply, the app's memory carrying the conversation between calls. Two adapters read the frameworks'
objects by their attributes, so this module imports no framework:

- :func:`checkpointer_chat`: a LangGraph graph or LangChain ``create_agent`` agent compiled with a
  checkpointer, called on one ``thread_id`` (a fresh one per conversation);
- :func:`chat_engine_chat`: a LlamaIndex chat engine (``index.as_chat_engine(...)``), whose memory is
  reset at the start of each conversation.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError

__all__ = ["ChatApp", "chat_engine_chat", "checkpointer_chat"]

ChatApp = Callable[[str], str]


def _reply_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", message)
    if isinstance(content, list):  # content blocks
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def checkpointer_chat(graph: Any, thread_id: str | None = None) -> ChatApp:
    """Each call sends one user message on ``thread_id`` (a new one when not given); the graph's
    checkpointer holds the history, as the frameworks' docs build a chat agent."""
    if not hasattr(graph, "invoke"):
        raise ConfigError(f"checkpointer_chat: {type(graph).__name__} has no invoke(); pass a compiled graph")
    config = {"configurable": {"thread_id": thread_id or uuid.uuid4().hex}}

    def chat(message: str) -> str:
        state = graph.invoke({"messages": [{"role": "user", "content": message}]}, config=config)
        messages = state.get("messages") if isinstance(state, dict) else None
        if not messages:
            raise ConfigError("checkpointer_chat: the graph's state holds no messages")
        return _reply_text(messages[-1])

    return chat


def chat_engine_chat(engine: Any, *, reset: bool = True) -> ChatApp:
    """Each call is ``engine.chat(message)``; with ``reset`` the engine's memory is cleared first, so
    a conversation starts from nothing."""
    if not hasattr(engine, "chat"):
        raise ConfigError(f"chat_engine_chat: {type(engine).__name__} has no chat(); pass a chat engine")
    if reset and hasattr(engine, "reset"):
        engine.reset()

    def chat(message: str) -> str:
        response = engine.chat(message)
        return str(getattr(response, "response", response))

    return chat
