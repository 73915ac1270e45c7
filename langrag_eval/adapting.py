"""What both framework adapters share, free of any framework: reading a question, an answer, a
label and contexts from an app's inputs and outputs (dicts, chat messages, ``{"messages": [...]}``
states), a sample built from them for any :class:`~langrag_eval.evaluator.Evaluator`, and an
evaluator's typed scores as the plain results LangChain and LangSmith take.

The adapters add only what needs a framework type: the LangChain and LlamaIndex evaluator
classes, their prompt hooks and tracing.

>>> pick({"query": "Capital?", "k": 3}, None, QUESTION_KEYS), pick({"q": "Capital?"}, None, QUESTION_KEYS)
('Capital?', 'Capital?')
>>> read_answer({"messages": [{"role": "user", "content": "Hi"}, ("ai", "Hello")]}, None)
'Hello'
>>> from langrag_eval.results import ScoreScale
>>> string_result([ScoreScale(1, 5).score("grade", 4, passed=True, reason="Right.")])
{'score': 0.75, 'value': 'pass', 'reasoning': 'Right.', 'scores': {'grade': 4.0}}
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .contexts import as_documents, as_text
from .errors import ConfigError
from .results import Score
from .runtime import synchronous
from .types import Sample

if TYPE_CHECKING:
    from .evaluator import Evaluator

__all__ = ["ANSWER_KEYS", "CONTEXT_KEYS", "LABEL_KEYS", "QUESTION_KEYS", "answer_of", "context_texts", "failure_result", "langsmith_evaluator",
           "langsmith_function", "langsmith_results", "last_message", "message_text", "pick", "question_of",
           "read_answer", "read_question", "sample_of", "score_comment", "string_result", "unit_value"]

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


def context_texts(contexts: Any) -> list[str] | None:
    """Contexts as the texts LlamaIndex's ``EvaluationResult.contexts`` holds (documents, nodes, strings)."""
    if contexts is None:
        return None
    return [c if isinstance(c, str) else d.text for c in ([contexts] if isinstance(contexts, str) else contexts)
            for d in ([None] if isinstance(c, str) else as_documents([c]))]


def unit_value(score: Score) -> float:
    """A scored value on 0..1, 1 the best whichever way its scale runs."""
    share = (score.value - score.low) / (score.high - score.low)  # type: ignore[operator]
    return share if score.higher_is_better else 1.0 - share


def score_comment(score: Score) -> str | None:
    """What a score's reason says, with its cause first when it is missing (``cause: reason``)."""
    return score.reason if score.cause is None else f"{score.cause}: {score.reason}"


def string_result(scores: Sequence[Score], primary: str | None = None) -> dict[str, Any]:
    """Scores as a LangChain evaluator result: ``score`` the ``primary`` score (else the mean of
    every scored one) on 0..1, LangChain's and LangSmith's convention; ``value`` pass / fail when
    the scores say; ``reasoning`` their reasons; ``scores`` every value on its own scale; with
    nothing scored, ``score`` None and the cause as ``unscored``."""
    chosen = [s for s in scores if s.name == primary] if primary else list(scores)
    scored = [s for s in chosen if s.scored]
    passed = [s.passed for s in chosen if s.passed is not None]
    reasons = list(dict.fromkeys(score_comment(s) for s in chosen if s.reason))
    out: dict[str, Any] = {"score": sum(map(unit_value, scored)) / len(scored) if scored else None,
                           "value": ("pass" if all(passed) else "fail") if passed else None,
                           "reasoning": "\n".join(reasons) or None, "scores": {s.name: s.value for s in scores}}
    if not scored:
        out["unscored"] = next((s.cause for s in chosen if s.cause), "undefined")
    return out


def langsmith_results(scores: Sequence[Score], prefix: str = "") -> list[dict[str, Any]]:
    """One LangSmith result per score, keyed ``prefix + name``: the value on its own scale, the
    reason as comment (:func:`score_comment`), the cause in ``metadata["unscored"]`` when it is missing."""
    return [{"key": f"{prefix}{s.name}", "score": s.value, "comment": score_comment(s),
             **({"metadata": {"unscored": s.cause}} if s.cause else {})} for s in scores]


def failure_result(key: str, exc: BaseException) -> dict:
    """One LangSmith result for an evaluation that failed: no score, the error as comment."""
    return {"key": key, "score": None, "comment": f"{type(exc).__name__}: {exc}",
            "metadata": {"unscored": "error"}}


def langsmith_function(score: Callable[..., Awaitable[dict]], *, asynchronous: bool, name: str,
                       keys: Sequence[str]) -> Callable[..., dict | Awaitable[dict]]:
    """``score`` as a LangSmith evaluator function named ``name``: async with ``asynchronous``, else
    a sync function that runs it to completion. LangSmith reads which arguments to pass (``inputs``,
    ``outputs``, ``reference_outputs`` ...) from the signature, so the wrapper reports ``score``'s.

    It never raises: LangSmith files an evaluator's exception under a key it guesses from the source
    code (here the inner function's name), so a failure comes back as score None under each of
    ``keys``, the result keys ``score`` reports, with the error as comment."""
    def failed(exc: Exception) -> dict:
        return {"results": [failure_result(k, exc) for k in keys]}

    if asynchronous:
        async def evaluator(*args: Any, **kwargs: Any) -> dict:
            try:
                return await score(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - failures are results, under their own key
                return failed(exc)
    else:
        run = synchronous(score)

        def evaluator(*args: Any, **kwargs: Any) -> dict:  # type: ignore[misc]
            try:
                return run(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - failures are results, under their own key
                return failed(exc)
    functools.update_wrapper(evaluator, score)
    evaluator.__name__ = name
    return evaluator


def langsmith_evaluator(evaluator: "Evaluator", *, name: str | None = None, key_prefix: str = "",
                        question_key: str | None = None, answer_key: str | None = None,
                        contexts_key: str | None = None, label_key: str | None = None,
                        asynchronous: bool = False,
                        results: Callable[[Any], list[dict]] | None = None,
                        keys: Sequence[str] | None = None) -> Callable[..., Any]:
    """Any evaluator as a function for ``langsmith.evaluate`` / ``aevaluate``:
    ``(inputs, outputs, reference_outputs)`` -> ``{"results": [...]}``, one result per score
    (:func:`langsmith_results`, keys ``key_prefix + name``) unless ``results`` translates the
    evaluator's result itself (then ``keys`` names the result keys it gives, those a failure is
    reported under). The question is read from ``inputs`` (:func:`read_question`), the
    answer from ``outputs`` (:func:`read_answer`), the contexts from ``outputs[contexts_key]``
    (default context, contexts, documents ...; never the only value) and the label from
    ``reference_outputs[label_key]`` (default label, answer, reference, output or the only value).
    The evaluator is the function's ``evaluator`` attribute."""
    async def score(inputs: dict, outputs: dict, reference_outputs: dict | None = None) -> dict:
        contexts = pick(outputs, contexts_key, CONTEXT_KEYS, sole=False) if isinstance(outputs, Mapping) else None
        label = as_text(pick(reference_outputs, label_key, LABEL_KEYS), strict=False) \
            if reference_outputs is not None else None
        result = await evaluator.aevaluate(sample_of(read_question(inputs, question_key),
                                                     read_answer(outputs, answer_key), contexts, label))
        return {"results": results(result) if results else langsmith_results(evaluator.scores(result), key_prefix)}

    keys = list(keys) if keys is not None else [f"{key_prefix}{n}" for n in evaluator.score_names()]
    function = langsmith_function(score, asynchronous=asynchronous, name=name or evaluator.task.replace("/", "_"),
                                  keys=keys)
    function.evaluator = evaluator  # type: ignore[attr-defined]
    return function


def judge_of(judge: Any, framework_model: str = "a framework's chat model") -> Any:
    """``judge`` as a :class:`~langrag_eval.runtime.Judge`: a Judge as it is, a langrag
    :class:`~langrag_eval.model.ChatModel` wrapped; anything else refused, naming what an adapter
    takes (``framework_model``, which the adapter wraps itself before calling this)."""
    from .model import ChatModel
    from .runtime import Judge

    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, ChatModel):
        return Judge(judge)
    raise ConfigError(f"expected a langrag Judge, {framework_model} or a langrag ChatModel, got {type(judge).__name__}")


__all__ += ["judge_of"]  # appended beside the function it names
