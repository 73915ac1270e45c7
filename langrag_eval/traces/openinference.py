"""A trace's sample, read from the OpenInference conventions (what the Phoenix / Arize instrumentors
of LangChain and LlamaIndex write), or from the OpenTelemetry GenAI conventions for model calls.

The rule is live capture's (:func:`~langrag_eval.adapters.capturing.captured_sample`): the question is
the root span's input, the answer its output; the contexts are the documents of the trace's
retriever spans whose text reached the prompt of the model call that produced the answer; text the
app generated on the way is kept apart. Where the trace leaves it open, ``capture_note`` says why:
attributes cut short by the exporter's length limit, a trace without retriever or model spans.

A retriever span lists its documents as ``retrieval.documents.<i>.document.{id,content,score,metadata}``;
the LangChain instrumentor leaves the id out but puts the documents, ids included, in the span's
JSON ``output.value``, from which the ids are taken.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ..adapters.adapting import answer_of, question_of
from ..files.jsontext import parse_json
from ..adapters.contexts import ModelCall
from ..types import Document, Sample, text_id
from .otlp import Span, Trace
from .rule import trace_sample

__all__ = ["sample_of_trace", "span_kind"]

_INDEXED = re.compile(r"^(?P<head>[\w.]+?)\.(?P<i>\d+)\.(?P<rest>.+)$")
_GENAI_KINDS = {"chat": "LLM", "text_completion": "LLM", "generate_content": "LLM"}


def span_kind(span: Span) -> str:
    """The span's OpenInference kind (LLM, RETRIEVER, CHAIN, ...), or LLM for a GenAI model call."""
    kind = span.attributes.get("openinference.span.kind")
    if isinstance(kind, str):
        return kind.upper()
    return _GENAI_KINDS.get(str(span.attributes.get("gen_ai.operation.name", "")), "")


def _indexed(attributes: Mapping[str, Any], head: str) -> list[dict[str, Any]]:
    """``head.<i>.<rest>`` attributes as a list of dicts keyed by ``rest``, in index order."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        m = _INDEXED.match(key)
        if m and m["head"] == head:
            found.setdefault(int(m["i"]), {})[m["rest"]] = value
    return [found[i] for i in sorted(found)]


def _json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:  # strict: NaN scores and half a surrogate pair leave the value as the text it is
            return parse_json(value)
        except ValueError:
            return value
    return value


def _output_ids(span: Span) -> list[tuple[str | None, str]]:
    out = _json(span.attributes.get("output.value"))
    docs = out.get("documents") if isinstance(out, Mapping) else out if isinstance(out, list) else None
    pairs = []
    for d in docs or []:
        if isinstance(d, Mapping):
            text = d.get("page_content", d.get("text", d.get("content")))
            if isinstance(text, str):
                ident = d.get("id") or (d.get("metadata") or {}).get("id")
                pairs.append((str(ident) if ident else None, text))
    return pairs


def _documents(span: Span) -> list[Document]:
    ids = _output_ids(span)
    docs = []
    for i, d in enumerate(_indexed(span.attributes, "retrieval.documents")):
        text = d.get("document.content")
        if not isinstance(text, str) or not text:
            continue
        ident = d.get("document.id")
        if not ident:
            ident = next((k for k, t in ids if k and t == text), None) or text_id(text)
        metadata = _json(d.get("document.metadata"))
        score = d.get("document.score")
        docs.append(Document(id=str(ident), text=text, score=float(score) if isinstance(score, (int, float)) else None,
                             metadata=metadata if isinstance(metadata, dict) else {}))
    return docs


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", p.get("content", "")) if isinstance(p, Mapping) else str(p) for p in content)
    return ""


def _genai_messages(value: Any) -> str:
    # GenAI conventions: a JSON list of {role, parts: [{type, content}]} (or {role, content})
    messages = _json(value)
    if not isinstance(messages, list):
        return value if isinstance(value, str) else ""
    texts = []
    for m in messages:
        if isinstance(m, Mapping):
            parts = m.get("parts")
            texts.append(_message_text(m.get("content")) if parts is None else
                         "".join(str(p.get("content", "")) for p in parts if isinstance(p, Mapping)))
    return "\n".join(t for t in texts if t)


def model_call(span: Span) -> ModelCall:
    """The span's model call: every input message's text as the prompt, the output messages as the reply."""
    a = span.attributes
    inputs = [_message_text(m.get("message.content")) or "".join(
        str(v) for k, v in sorted(m.items()) if k.startswith("message.contents.") and k.endswith(".text"))
        for m in _indexed(a, "llm.input_messages")]
    inputs += [str(p.get("prompt.text", "")) for p in _indexed(a, "llm.prompts")]
    if isinstance(a.get("llm.prompts"), list):  # the LlamaIndex instrumentor's one array attribute
        inputs += [str(p) for p in a["llm.prompts"]]
    if "gen_ai.input.messages" in a:
        inputs.append(_genai_messages(a["gen_ai.input.messages"]))
    if not any(inputs) and isinstance(a.get("input.value"), str):
        inputs.append(a["input.value"])
    outputs = [_message_text(m.get("message.content")) for m in _indexed(a, "llm.output_messages")]
    if "gen_ai.output.messages" in a:
        outputs.append(_genai_messages(a["gen_ai.output.messages"]))
    if not any(outputs):
        outputs.append(_generation_text(a.get("output.value")))
    return ModelCall(prompt="\n".join(t for t in inputs if t), output="\n".join(t for t in outputs if t))


def _generation_text(value: Any) -> str:
    out = _json(value)
    if isinstance(out, Mapping) and isinstance(out.get("generations"), list):
        gens = [g for row in out["generations"] for g in (row if isinstance(row, list) else [row])]
        return "".join(str(g.get("text", "")) for g in gens if isinstance(g, Mapping))
    return out if isinstance(out, str) else ""


def _last_reply(messages: Sequence[Any]) -> str | None:
    for m in reversed(messages):
        if not isinstance(m, Mapping):
            continue
        # LangChain's message_to_dict form ({type, data}), its serialised form ({lc, id, kwargs}), or a dict
        body = m["data"] if isinstance(m.get("data"), Mapping) else m.get("kwargs", m) if m.get("lc") else m
        kind = str(m.get("id", [""])[-1] if m.get("lc") else m.get("type", m.get("role", "")))
        text = _message_text(body.get("content"))
        if kind in ("AIMessage", "ai", "assistant") and text:
            return text
    return None


def _io(span: Span, key: str) -> Any:
    value = span.attributes.get(f"{key}.value")
    if span.attributes.get(f"{key}.mime_type") == "application/json" or (isinstance(value, str) and value[:1] == "{"):
        value = _json(value)
    return value


def sample_of_trace(trace: Trace, *, limit: int | None = None) -> Sample:
    """The sample one trace becomes, by live capture's rule. ``limit``, when the exporter cut
    attribute values at a length, marks a value of exactly that length as possibly cut."""
    kinds = [(span_kind(s), s) for s in trace.spans]
    retrievals = [_documents(s) for k, s in kinds if k == "RETRIEVER"]
    calls = [model_call(s) for k, s in kinds if k == "LLM"]
    root = trace.root
    inputs = _io(root, "input")
    question = question_of(inputs)
    if question is None and isinstance(inputs, Mapping) and isinstance(inputs.get("message"), str):
        question = inputs["message"]  # a LlamaIndex chat engine's chat(message)
    outputs = _io(root, "output")
    answer = answer_of(outputs)
    if answer is None and isinstance(outputs, Mapping) and isinstance(outputs.get("messages"), list):
        answer = _last_reply(outputs["messages"])  # an agent's state: its last assistant message
    notes = []
    if limit and _cut(trace.spans, limit):
        notes.append(f"some attribute values are exactly {limit} characters long and may have been cut "
                     "by the exporter's length limit")
    started = datetime.fromtimestamp(root.start_ns / 1e9, tz=timezone.utc).isoformat()
    return trace_sample(trace.trace_id, question, answer, retrievals, calls, retriever="retriever span",
                        model_call="model call span", notes=notes,
                        metadata={"trace_id": trace.trace_id, "started": started, "root": root.name})


def _cut(spans: Sequence[Span], limit: int) -> bool:
    return any(isinstance(v, str) and len(v) == limit for s in spans for v in s.attributes.values())
