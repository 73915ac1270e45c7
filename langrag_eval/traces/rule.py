"""The sample one production trace becomes, whatever its format: live capture's rule
(:func:`~langrag_eval.adapters.capturing.captured_sample`) over the trace's retrievals and model
calls, plus the notes a trace leaves open. Each reader (OTLP/OpenInference, LangSmith, Langfuse)
finds the question, the answer, the retrievals and the calls in its own format and ends here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..adapters.capturing import captured_sample
from ..adapters.contexts import ModelCall
from ..types import Document, Sample

__all__ = ["trace_sample"]


def trace_sample(trace_id: str, question: str | None, answer: str | None,
                 retrievals: Sequence[Sequence[Document]], calls: Sequence[ModelCall], *,
                 retriever: str, model_call: str, notes: Iterable[str] = (),
                 metadata: Mapping[str, Any]) -> Sample:
    """``retriever`` and ``model_call`` name the format's retrieval and model-call records in the
    notes said when a trace has none; ``notes`` are the reader's own, ``metadata`` its fields (the
    trace id, when it started, its root's name)."""
    sample = captured_sample(trace_id, question, answer, retrievals, calls)
    said = [sample.capture_note] if sample.capture_note else []
    if not retrievals:
        said.append(f"the trace has no {retriever}: its contexts are unknown")
    if not calls:
        said.append(f"the trace has no {model_call}: contexts are every retrieved document")
    said.extend(notes)
    update: dict[str, Any] = {"metadata": {**sample.metadata, **metadata}, "capture_note": "; ".join(said) or None}
    if not calls and retrievals:  # no prompt to tell which documents reached it: all of them, once each
        seen: set[str] = set()
        update["contexts"] = [d for r in retrievals for d in r if not (d.id in seen or seen.add(d.id))]
    return sample.model_copy(update=update)
