"""The RAG and RAG-Fusion agents as LangChain runnables (LCEL).

A runnable takes the question (a string, or a dict with ``question`` or ``query`` and an optional
``qid``) and returns a dict with the keys LCEL RAG chains conventionally expose::

    {"question": ..., "answer": ..., "context": [Document, ...], "agent": "fusion-bm25",
     "variations": [...], "qid": ..., "error": None}

``context`` holds the passages the answer was generated from, best first, as LangChain documents
(id and score in the metadata). When no answer could be produced, ``answer`` is None and ``error``
says why; the runnable does not raise, so ``batch`` over many questions always completes.

>>> from langchain_core.language_models import FakeListChatModel
>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="a", text="Paris is in France."), Chunk(id="b", text="Rome is in Italy.")])
>>> chains = six_runnables(backend, None, FakeListChatModel(responses=["Rome is in Italy."]), k=1)
>>> out = chains["rag-bm25"].invoke("Where is Rome?")
>>> out["answer"], [d.id for d in out["context"]]
('Rome is in Italy.', ['b'])
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableLambda

from langrag_eval.adapting import QUESTION_KEYS
from langrag_eval.embeddings import Embedder
from langrag_eval.errors import ConfigError
from langrag_eval.pipelines import Agent, AgentAnswer, six_agents
from langrag_eval.retrieval.base import HybridSettings, SearchBackend
from langrag_eval.runtime import Judge, synchronous

from ._common import as_judge
from .retrievers import to_langchain_document

__all__ = ["as_runnable", "six_runnables"]


def _read_input(value: Any) -> tuple[str, str | None]:
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict):
        for key in QUESTION_KEYS:
            if isinstance(value.get(key), str):
                qid = value.get("qid")
                return value[key], None if qid is None else str(qid)
    raise ConfigError("an agent runnable takes a question string or a dict with a 'question' or "
                      f"'query' string, got {type(value).__name__}")


def as_runnable(agent: Agent) -> Runnable[Any, dict[str, Any]]:
    """Expose one agent (``RAGAgent``, ``FusionAgent`` or any :class:`Agent`) as a runnable."""

    async def ainvoke(value: Any) -> dict[str, Any]:
        question, qid = _read_input(value)
        result = await agent.arun(question, qid=qid)
        if isinstance(result, AgentAnswer):
            return {"question": question, "answer": result.answer,
                    "context": [to_langchain_document(d) for d in result.contexts],
                    "agent": agent.name, "variations": list(result.variations), "qid": qid, "error": None}
        return {"question": question, "answer": None, "context": [], "agent": agent.name,
                "variations": [], "qid": qid, "error": f"{result.cause}: {result.reason}"}

    return RunnableLambda(synchronous(ainvoke), afunc=ainvoke, name=agent.name)


def six_runnables(backend: SearchBackend, embedder: Embedder | None, llm: BaseChatModel | Judge, k: int = 5,
                  *, n_variations: int = 4,
                  hybrid: HybridSettings = HybridSettings()) -> dict[str, Runnable[Any, dict[str, Any]]]:
    """The paper's six agents (``rag-bm25`` ... ``fusion-hybrid``) as runnables, by name, answering
    with ``llm`` (a LangChain chat model or a langrag-eval :class:`Judge`)."""
    agents = six_agents(backend, embedder, as_judge(llm), k, n_variations=n_variations, hybrid=hybrid)
    return {a.name: as_runnable(a) for a in agents}
