"""What every LangChain adapter module uses: the judge a caller passes, and evaluations traced as
LangChain runs whose children are the judge's model calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import CallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import Generation, LLMResult
from langchain_core.runnables.config import var_child_runnable_config

from langrag_eval.errors import ConfigError
from langrag_eval.model import ChatModel
from langrag_eval.runtime import Judge
from langrag_eval.runtime.tracing import observing

from .models import LangChainJudge

__all__ = ["EVALUATION_TAG", "JudgeLike", "as_judge", "traced"]

JudgeLike = Judge | ChatModel | BaseChatModel


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
