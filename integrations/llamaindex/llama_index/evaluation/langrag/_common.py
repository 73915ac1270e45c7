"""What every LlamaIndex adapter module uses: the judge a caller passes, langrag prompt templates
shown to LlamaIndex's ``get_prompts``, and evaluation spans.

A template travels as its file text (:meth:`~langrag_eval.prompts.PromptTemplate.to_text`: the
``{# ... #}`` header, then the Jinja2 body), so what ``get_prompts`` gives can be edited and handed
back to ``update_prompts`` as it is; the evaluators read it (or a LlamaIndex ``PromptTemplate``)
back through the core's template checks.

>>> from langrag_eval.prompts import load_prompt
>>> shipped = load_prompt("vrag/grade")
>>> text = template_prompt(shipped).get_template()
>>> text.startswith("{#\\ntask: vrag/grade"), PromptTemplate.from_text(text, source=shipped.source) == shipped
(True, True)
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.llm import LLMCompletionEndEvent, LLMCompletionStartEvent

from llama_index.core.llms import LLM
from llama_index.core.prompts import PromptTemplate as LIPromptTemplate

from langrag_eval.errors import ConfigError
from langrag_eval.model import ChatModel
from langrag_eval.prompts import PromptTemplate
from langrag_eval.runtime import Judge
from langrag_eval.runtime.tracing import observing

from .models import LlamaIndexJudge

__all__ = ["JudgeLike", "as_judge", "traced_evaluation", "template_prompt"]

JudgeLike = Judge | ChatModel | LLM


def as_judge(judge: JudgeLike) -> Judge:
    """A langrag ``Judge`` from a Judge, a LlamaIndex LLM or a langrag ``ChatModel``."""
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, LLM):
        return Judge(LlamaIndexJudge(judge))
    if isinstance(judge, ChatModel):
        return Judge(judge)
    raise ConfigError(f"expected a langrag Judge, a LlamaIndex LLM or a langrag ChatModel, "
                      f"got {type(judge).__name__}")


def template_prompt(t: PromptTemplate) -> LIPromptTemplate:
    """A langrag template as the LlamaIndex prompt ``get_prompts`` returns: its file text."""
    return LIPromptTemplate(t.to_text())


_dispatcher = get_dispatcher(__name__)


class _JudgeCallEvents:
    """Reports each judge model call as LlamaIndex completion start / end events (with the token
    usage in ``response.raw["usage"]``), inside the evaluation's span."""

    def started(self, prompt: str, model_id: str, params: Any) -> Any:
        model = {"model": model_id, **params.model_dump()}
        _dispatcher.event(LLMCompletionStartEvent(prompt=prompt, additional_kwargs={}, model_dict=model))
        return prompt

    def finished(self, prompt: Any, reply: Any) -> None:
        usage = reply.usage.as_dict()
        _dispatcher.event(LLMCompletionEndEvent(prompt=prompt, response=CompletionResponse(
            text=reply.text, raw={"usage": usage})))

    def failed(self, prompt: Any, error: BaseException) -> None:
        return None  # the evaluation reports the failure as an invalid result


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def traced_evaluation(aevaluate: F) -> F:
    """An evaluator's ``aevaluate`` as a LlamaIndex span whose judge calls are instrumentation events."""
    @functools.wraps(aevaluate)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        with observing(_JudgeCallEvents()):
            return await aevaluate(*args, **kwargs)
    return _dispatcher.span(wrapper)  # type: ignore[return-value]
