"""Helpers every LangChain adapter module uses: the judge a caller passes, values read from
LangSmith ``inputs`` / ``outputs`` dicts, and the sync-or-async LangSmith evaluator function.

>>> pick({"query": "Capital?", "k": 3}, None, QUESTION_KEYS), pick({"q": "Capital?"}, None, QUESTION_KEYS)
('Capital?', 'Capital?')
>>> pick({"q": "Capital?"}, None, QUESTION_KEYS, sole=False) is None, pick("Paris", "answer", ())
(True, 'Paris')
>>> from langchain_core.messages import AIMessage
>>> read_answer({"answer": AIMessage(content="Paris")}, None), read_answer({"n": 3}, None)
('Paris', '3')
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import CallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import Generation, LLMResult
from langchain_core.runnables.config import var_child_runnable_config

from langrag_eval.contexts import as_text
from langrag_eval.errors import ConfigError
from langrag_eval.model import ChatModel
from langrag_eval.runtime import Judge, synchronous
from langrag_eval.runtime.tracing import observing

from .models import LangChainJudge

__all__ = ["ANSWER_KEYS", "CONTEXT_KEYS", "QUESTION_KEYS", "JudgeLike", "as_judge", "langsmith_function",
           "pick", "read_answer", "read_question", "failure_result", "traced"]

JudgeLike = Judge | ChatModel | BaseChatModel

# the keys LangChain apps and LangSmith datasets conventionally hold a question, an answer and
# the retrieved documents under, in the order they are looked for
QUESTION_KEYS = ("question", "query", "input")
ANSWER_KEYS = ("answer", "output", "result", "response", "text", "generation")
CONTEXT_KEYS = ("context", "contexts", "documents", "source_documents", "docs")


def as_judge(judge: JudgeLike) -> Judge:
    """A langrag ``Judge`` from a Judge, a LangChain chat model or a langrag ``ChatModel``."""
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, BaseChatModel):
        return Judge(LangChainJudge(judge))
    if isinstance(judge, ChatModel):
        return Judge(judge)
    raise ConfigError(f"expected a langrag Judge, a LangChain chat model or a langrag ChatModel, "
                      f"got {type(judge).__name__}")


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


def read_question(inputs: Any, key: str | None) -> str | None:
    """The question in LangSmith ``inputs``: ``inputs[key]``, else question, query, input, the last
    user message of ``messages`` (an agent's input), or the only value."""
    if key is None and isinstance(inputs, Mapping) and "messages" in inputs and \
            not any(k in inputs for k in QUESTION_KEYS):
        from .capture import _question  # the capture reads message shapes; imported late (cycle)
        return _question(inputs)
    return as_text(pick(inputs, key, QUESTION_KEYS), strict=False)


def read_answer(outputs: Any, key: str | None) -> str | None:
    """The answer in LangSmith ``outputs``: ``outputs[key]``, else answer, output, result, the last
    assistant message of ``messages`` that calls no tool (an agent's output), or the only value."""
    if key is None and isinstance(outputs, Mapping) and "messages" in outputs and \
            not any(k in outputs for k in ANSWER_KEYS):
        from .capture import _answer
        return _answer(outputs)
    return as_text(pick(outputs, key, ANSWER_KEYS), strict=False)


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


def failure_result(key: str, exc: BaseException) -> dict:
    """One LangSmith result for an evaluation that failed: no score, the error as comment."""
    return {"key": key, "score": None, "comment": f"{type(exc).__name__}: {exc}",
            "metadata": {"unscored": "error"}}


EVALUATION_TAG = "langrag:evaluation"  # an evaluation's own run: RAGCapture does not take it for an app


class _JudgeCallTracer:
    """Reports each judge model call as a LangChain LLM run (prompt, reply, token usage) under the
    evaluation's run."""

    def __init__(self, manager: CallbackManager) -> None:
        self.manager = manager

    def started(self, prompt: str, model_id: str, params: Any) -> Any:
        (run,) = self.manager.on_llm_start({"name": model_id}, [prompt], name=f"judge {model_id}",
                                           invocation_params={"model": model_id, **params.model_dump()})
        return run, model_id

    def finished(self, token: Any, reply: Any) -> None:
        run, model_id = token
        usage = reply.usage.as_dict()
        run.on_llm_end(LLMResult(generations=[[Generation(text=reply.text)]],
                                 llm_output={"token_usage": usage, "model_name": model_id}))

    def failed(self, token: Any, error: BaseException) -> None:
        token[0].on_llm_error(error)


class Traced:
    """What :func:`traced` yields: set ``outputs`` to report them when the evaluation run ends."""

    outputs: dict[str, Any] | None = None


@contextmanager
def traced(name: str, inputs: dict[str, Any], callbacks: Any = None) -> Iterator[Traced]:
    """Run an evaluation as a LangChain chain run named ``name`` whose children are the judge's model
    calls, when there are callbacks to tell: the ones passed, else those of the LangChain run the
    evaluation is called from. Without any, nothing is traced."""
    callbacks = callbacks or (var_child_runnable_config.get() or {}).get("callbacks")
    result = Traced()
    if not callbacks:
        yield result
        return
    manager = CallbackManager.configure(inheritable_callbacks=callbacks, local_tags=[EVALUATION_TAG])
    run = manager.on_chain_start({"name": name}, inputs, name=name)
    try:
        with observing(_JudgeCallTracer(run.get_child())):
            yield result
    except BaseException as exc:
        run.on_chain_error(exc)
        raise
    run.on_chain_end(result.outputs or {})
