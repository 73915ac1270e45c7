"""What both framework adapters share, free of any framework: reading a question, an answer, a
label and contexts from an app's inputs and outputs (dicts, chat messages, ``{"messages": [...]}``
states), a sample built from them for any :class:`~langrag_eval.evaluator.Evaluator`, and the
judge an adapter is given. How a result reads in each framework is :mod:`langrag_eval.adapters.outcomes`.

>>> pick({"query": "Capital?", "k": 3}, None, QUESTION_KEYS), pick({"q": "Capital?"}, None, QUESTION_KEYS)
('Capital?', 'Capital?')
>>> read_answer({"messages": [{"role": "user", "content": "Hi"}, ("ai", "Hello")]}, None)
'Hello'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..types import as_text
from ..errors import ConfigError
from ..types import Sample

__all__ = ["ANSWER_KEYS", "CONTEXT_KEYS", "LABEL_KEYS", "QUESTION_KEYS", "answer_of", "last_message", "message_text",
           "pick", "question_of", "read_answer", "read_question", "sample_of"]

# the keys LangChain apps and LangSmith datasets conventionally hold a question, an answer, the
# retrieved documents and a label under, in the order they are looked for
QUESTION_KEYS = ("question", "query", "input")
ANSWER_KEYS = ("answer", "output", "result", "response", "text", "generation")
CONTEXT_KEYS = ("context", "contexts", "documents", "source_documents", "docs")
LABEL_KEYS = ("label", "answer", "reference", "output")
_ROLES = {"human": "user", "ai": "assistant"}


def pick(data: Any, key: str | None, fallbacks: Sequence[str], *, sole: bool = True) -> Any:
    """``data[key]``, or without a key the first of ``fallbacks`` that ``data`` has; with ``sole``
    and no key, a mapping's only value when none of those is there. A value that is not a mapping
    (a chain that returns a bare string) is returned as it is."""
    if not isinstance(data, Mapping):
        return data
    for k in ([key] if key else list(fallbacks)):
        if k in data:
            return data[k]
    if sole and key is None and len(data) == 1:
        return next(iter(data.values()))
    return None


def _role(message: Any) -> str | None:
    """A message's role: chat message objects (``type``), ``{"role": ...}`` dicts, ``(role, text)`` pairs."""
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
    elif isinstance(message, tuple) and len(message) == 2:
        role = message[0]
    else:
        role = getattr(message, "type", None) if hasattr(message, "content") else None
    return _ROLES.get(role, role) if isinstance(role, str) else None


def message_text(message: Any) -> str | None:
    """A message's text content (None when it has none)."""
    if isinstance(message, tuple):
        message = message[1]
    if isinstance(message, Mapping):
        message = message.get("content")
    try:
        return as_text(message)
    except ConfigError:
        return None


def _calls_tools(message: Any) -> bool:
    return bool(getattr(message, "tool_calls", None) or (isinstance(message, Mapping) and message.get("tool_calls")))


def last_message(messages: Any, role: str) -> str | None:
    """The text of the last message with ``role``; for the assistant, the last that calls no tool."""
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        return None
    for m in reversed(messages):
        if _role(m) == role and not _calls_tools(m) and (text := message_text(m)):
            return text
    return None


def question_of(inputs: Any) -> str | None:
    """The question an app was called with: a string, a chat message, a dict's question / query /
    input string, the last user message of a ``{"messages": [...]}`` state or of a message list."""
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        for k in QUESTION_KEYS:
            if isinstance(inputs.get(k), str):
                return inputs[k]
        return last_message(inputs["messages"], "user") if "messages" in inputs else None  # agents, LangGraph
    if _role(inputs) is not None and not isinstance(inputs, tuple):
        return message_text(inputs)
    if isinstance(inputs, Sequence):  # a chat model's or a chat prompt's message list
        return last_message(inputs, "user")
    return None


def answer_of(outputs: Any) -> str | None:
    """The answer an app returned: a string, a chat message's text, a dict's answer / output /
    result ... (read the same way), or the last assistant message of ``messages`` that calls no tool."""
    if isinstance(outputs, str):
        return outputs
    if isinstance(getattr(outputs, "content", None), (str, list)):  # a chat message, no parser after it
        return message_text(outputs)
    if isinstance(outputs, Mapping):
        for k in ANSWER_KEYS:
            if k in outputs:
                return answer_of(outputs[k])
        if "messages" in outputs:
            return last_message(outputs["messages"], "assistant")
    return None


def read_question(inputs: Any, key: str | None = None) -> str | None:
    """The question in LangSmith ``inputs``: ``inputs[key]``, else question, query, input, the last
    user message of ``messages`` (an agent's input), or the only value."""
    if key is None and isinstance(inputs, Mapping) and "messages" in inputs and \
            not any(k in inputs for k in QUESTION_KEYS):
        return question_of(inputs)
    return as_text(pick(inputs, key, QUESTION_KEYS), strict=False)


def read_answer(outputs: Any, key: str | None = None) -> str | None:
    """The answer in LangSmith ``outputs``: ``outputs[key]``, else answer, output, result ..., the
    last assistant message of ``messages`` that calls no tool (an agent's output), or the only value."""
    if key is None and isinstance(outputs, Mapping) and "messages" in outputs and \
            not any(k in outputs for k in ANSWER_KEYS):
        return answer_of(outputs)
    return as_text(pick(outputs, key, ANSWER_KEYS), strict=False)


def sample_of(question: str | None, answer: str | None, contexts: Any = None,
              reference: str | None = None) -> Sample:
    """The sample any evaluator reads, from what a framework hands over (contexts as texts,
    LangChain documents, LlamaIndex nodes or dicts, ids and metadata kept)."""
    return Sample(question=question or "", answer=answer, reference=reference, contexts=contexts or [])


def judge_of(judge: Any, framework_model: str = "a framework's chat model") -> Any:
    """``judge`` as a :class:`~langrag_eval.runtime.Judge`: a Judge as it is, a langrag
    :class:`~langrag_eval.model.ChatModel` wrapped; anything else refused, naming what an adapter
    takes (``framework_model``, which the adapter wraps itself before calling this)."""
    from ..model import ChatModel
    from ..runtime import Judge

    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, ChatModel):
        return Judge(judge)
    raise ConfigError(f"expected a langrag Judge, {framework_model} or a langrag ChatModel, got {type(judge).__name__}")


__all__ += ["judge_of"]  # appended beside the function it names
