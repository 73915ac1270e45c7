"""Evaluations and judge calls as OpenTelemetry spans, with the OpenInference conventions, so they
show up in the trace view a team already uses (Phoenix, LangSmith, Langfuse, any OTLP backend).

Spans are made only when the OpenTelemetry API is installed and the process has set a tracer
provider (``opentelemetry.trace.set_tracer_provider``); otherwise nothing is imported beyond a look
and nothing is emitted: no dependency, no cost. Each item a batch judges is an ``EVALUATOR`` span
(``langrag-eval <task>``: the item's key, the run, the scores or the reason it is unscored); each
model call the judge makes inside it is an ``LLM`` child span (model name, invocation parameters,
token counts when the model reports them). Prompts and replies are masked by
:func:`~langrag_eval.errors.redact` first, as everything this package stores or prints is. A reply
served from the cache makes no call, and no span.

>>> tracer() is None or hasattr(tracer(), "start_span")
True
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import redact
from ..model import GenerationParams, Reply
from ..results import Unscored

__all__ = ["JudgeSpans", "evaluation_spans", "judge_spans", "tracer"]

_SCOPE = "langrag_eval"
_api: Any = None  # the opentelemetry.trace module once looked for; False when it is not installed
_cached: tuple[Any, Any] | None = None


def tracer() -> Any | None:
    """This package's tracer when a tracer provider is set, else None."""
    global _api
    if _api is None:
        try:
            from opentelemetry import trace as api
        except ImportError:
            api = False
        _api = api
    if _api is False:
        return None
    provider = _api.get_tracer_provider()
    # before set_tracer_provider the API hands out a proxy (or, when disabled, a no-op provider)
    if type(provider).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider"):
        return None
    global _cached
    if _cached is None or _cached[0] is not provider:  # one tracer per provider, not one per call
        from .. import __version__
        _cached = (provider, provider.get_tracer(_SCOPE, __version__))
    return _cached[1]


def _text(value: Any) -> str:
    return redact(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))


class JudgeSpans:
    """A call observer (:class:`~langrag_eval.runtime.tracing.CallObserver`) making one ``LLM`` span
    per judge call, a child of the span current when the call starts (the item's evaluation)."""

    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer

    def started(self, prompt: str, model_id: str, params: GenerationParams) -> Any:
        invocation = {k: v for k, v in params.model_dump(mode="json").items() if v is not None}
        return self.tracer.start_span("judge call", attributes={
            "openinference.span.kind": "LLM", "llm.model_name": model_id, "llm.system": model_id.split(":", 1)[0],
            "llm.invocation_parameters": json.dumps(invocation, sort_keys=True),
            "input.value": _text(prompt), "input.mime_type": "text/plain"})

    def finished(self, span: Any, reply: Reply) -> None:
        span.set_attribute("output.value", _text(reply.text))
        span.set_attribute("output.mime_type", "text/plain")
        usage = reply.usage
        if usage.prompt_tokens or usage.completion_tokens:  # zero: the model did not say
            span.set_attribute("llm.token_count.prompt", usage.prompt_tokens)
            span.set_attribute("llm.token_count.completion", usage.completion_tokens)
            span.set_attribute("llm.token_count.total", usage.prompt_tokens + usage.completion_tokens)
        _ok(span)
        span.end()

    def failed(self, span: Any, error: BaseException) -> None:
        _failed(span, error)
        span.end()


def judge_spans() -> JudgeSpans | None:
    """The observer that turns judge calls into spans, when a tracer provider is set."""
    t = tracer()
    return None if t is None else JudgeSpans(t)


def _ok(span: Any) -> None:
    from opentelemetry.trace import Status, StatusCode
    span.set_status(Status(StatusCode.OK))


def _failed(span: Any, error: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode
    span.set_status(Status(StatusCode.ERROR, redact(f"{type(error).__name__}: {error}")[:500]))


def _question(item: Any) -> str | None:
    question = getattr(item, "question", None)
    return question if isinstance(question, str) else None


def _safe(scores: Callable[[Any], Any], result: Any) -> list[Any]:
    try:
        return list(scores(result))
    except Exception:  # noqa: BLE001 - a span's attributes never fail the judgment
        return []


def evaluation_spans(evaluate: Callable[[Any], Awaitable[Any]], *, task: str, key: Callable[[Any], str],
                     run_id: str | None, scores: Callable[[Any], Any] | None = None
                     ) -> Callable[[Any], Awaitable[Any]]:
    """``evaluate`` with each call inside an ``EVALUATOR`` span (``evaluate`` itself when no tracer
    provider is set). The span is current while the item is judged, so the judge's calls nest in it."""
    t = tracer()
    if t is None:
        return evaluate

    async def spanned(item: Any) -> Any:
        attributes = {"openinference.span.kind": "EVALUATOR", "langrag.task": task, "langrag.item": key(item)}
        if run_id:
            attributes["langrag.run_id"] = run_id
            attributes["session.id"] = run_id
        if (question := _question(item)) is not None:
            attributes["input.value"] = redact(question)
        with t.start_as_current_span(f"langrag-eval {task}", attributes=attributes,
                                     record_exception=False, set_status_on_exception=False) as span:
            try:
                result = await evaluate(item)
            except BaseException as exc:
                _failed(span, exc)
                raise
            if isinstance(result, Unscored):
                span.set_attribute("langrag.unscored.cause", str(result.cause))
                span.set_attribute("output.value", _text(result.reason or ""))
            elif scores is not None:
                values = {s.name: float(s.value) for s in _safe(scores, result) if s.value is not None}
                span.set_attribute("output.value", json.dumps(values, sort_keys=True))
                span.set_attribute("output.mime_type", "application/json")
                for name, value in values.items():
                    span.set_attribute(f"langrag.score.{name}", value)
            _ok(span)
            return result

    return spanned
