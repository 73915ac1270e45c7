"""The two answering agents of the RAG-Fusion paper (Rackauckas et al., 2024, sections 3 and 6.2).

:class:`RAGAgent` retrieves the top ``k`` passages for the query and answers from them.
:class:`FusionAgent` first has the generator write ``n_variations`` rewrites of the query (4 by
default), retrieves for the original and each rewrite, fuses the rankings with reciprocal rank
fusion (:func:`langrag_eval.retrieval.fusion.rrf`, k = 60, ranks from 1) and answers from the fused
top ``k``. Both return an :class:`AgentAnswer` carrying the passages they answered from, so every
evaluator can use them; an answer that cannot be produced comes back as :class:`Unscored`.

The generator is a :class:`~langrag_eval.runtime.Judge`, so its calls are cached, retried, bounded
and metered like every judge call.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend, Retriever
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="p1", text="The IM72D128 microphone is rated IP57."),
...                    Chunk(id="p2", text="The KP253 is a pressure sensor.")])
>>> agent = RAGAgent(Retriever(backend, mode="bm25"), Judge(ScriptedModel(["It is rated IP57."])), k=1)
>>> result = agent.run("IP rating of the IM72D128?")
>>> result.answer, [d.id for d in result.contexts], result.agent
('It is rated IP57.', ['p1'], 'rag-bm25')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable


from ..models.embeddings import Embedder
from ..errors import ConfigError, ModelCallError, RetrievalError
from ..prompting.templates import PromptTemplate, load_prompt
from ..results import Unscored
from ..retrieval.base import HybridSettings, Mode, Retriever, SearchBackend, run_sync
from ..retrieval.fusion import rrf_documents
from ..runtime import Judge, gather_bounded, synchronous
from ..types import AgentAnswer, Document
from .variations import parse_variations

__all__ = ["AgentAnswer", "Agent", "RAGAgent", "FusionAgent", "six_agents", "AGENT_NAMES",
           "select_agents"]

MODES: tuple[Mode, ...] = ("bm25", "knn", "hybrid")
AGENT_NAMES: tuple[str, ...] = tuple(f"{kind}-{mode}" for kind in ("rag", "fusion") for mode in MODES)


@runtime_checkable
class Agent(Protocol):
    """Anything that answers a query with its passages: both agents here, or a user's own."""

    name: str

    async def arun(self, query: str, *, qid: str | None = None) -> AgentAnswer | Unscored: ...


def _template(prompt: str | Path | PromptTemplate, allowed: set[str]) -> PromptTemplate:
    template = prompt if isinstance(prompt, PromptTemplate) else load_prompt(prompt)
    template.check_variables(allowed)
    return template


async def _retrieve(retriever: Retriever, query: str, k: int) -> list[Document] | Unscored:
    try:
        return await retriever.aretrieve(query, k)
    except RetrievalError as exc:
        # A backend that is down or misconfigured fails this item; the batch goes on.
        return Unscored(reason=f"retrieval failed for {query!r}: {exc}", cause="transient")


async def _answer(generator: Judge, template: PromptTemplate, query: str,
                  documents: list[Document]) -> str | Unscored:
    prompt = template.render(question=query, passages=[{"id": d.id, "text": d.text} for d in documents])
    try:
        reply = await generator.complete(prompt)
    except ModelCallError as exc:
        return Unscored(reason=f"answer generation failed: {exc}", cause=exc.cause)  # type: ignore[arg-type]
    if not reply.text.strip():
        return Unscored(reason="the generator returned an empty answer", cause="unparseable",
                        raw=reply.text)
    return reply.text.strip()


def _check_query(query: str) -> Unscored | None:
    if not isinstance(query, str) or not query.strip():
        return Unscored(reason="empty query: there is nothing to retrieve or answer", cause="invalid_input")
    return None


class _SyncRun:
    """``run`` derived once from ``arun`` for both agents."""

    def run(self, query: str, *, qid: str | None = None) -> AgentAnswer | Unscored:
        """Sync form of ``arun``; also works inside a running event loop (notebooks)."""
        return run_sync(self.arun(query, qid=qid))  # type: ignore[attr-defined]


@dataclass
class RAGAgent(_SyncRun):
    """Retrieve the top ``k`` passages, answer from them (the paper's naive RAG agent, k = 5)."""

    retriever: Retriever
    generator: Judge
    k: int = 5
    name: str = ""
    prompt: str | Path | PromptTemplate = "pipelines/answer"

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigError(f"k must be at least 1, got {self.k}")
        self.name = self.name or f"rag-{self.retriever.name}"
        self._template = _template(self.prompt, {"question", "passages"})

    async def arun(self, query: str, *, qid: str | None = None) -> AgentAnswer | Unscored:
        """Answer ``query``; an empty query, a failed retrieval or generation gives ``Unscored``."""
        if (bad := _check_query(query)) is not None:
            return bad
        documents = await _retrieve(self.retriever, query, self.k)
        if isinstance(documents, Unscored):
            return documents
        answer = await _answer(self.generator, self._template, query, documents)
        if isinstance(answer, Unscored):
            return answer
        return AgentAnswer(id=qid, question=query, agent=self.name, answer=answer, contexts=documents)


@dataclass
class FusionAgent(_SyncRun):
    """RAG-Fusion: write ``n_variations`` rewrites, retrieve ``depth`` passages for the original and
    each rewrite, fuse with RRF (``rank_constant``), answer from the fused top ``k``.

    ``depth`` defaults to ``k`` (the paper retrieves the top k per query before fusing). A reply
    with no usable rewrite leaves only the original query; ``variations`` is then empty.
    """

    retriever: Retriever
    generator: Judge
    k: int = 5
    n_variations: int = 4
    depth: int | None = None
    rank_constant: int = 60
    name: str = ""
    prompt: str | Path | PromptTemplate = "pipelines/answer"
    variations_prompt: str | Path | PromptTemplate = "pipelines/query_variations"
    concurrency: int = 8  # retrievals in flight per query
    _templates: tuple[PromptTemplate, PromptTemplate] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for label, value in (("k", self.k), ("n_variations", self.n_variations),
                             ("rank_constant", self.rank_constant), ("concurrency", self.concurrency),
                             ("depth", self.depth if self.depth is not None else self.k)):
            if value < 1:
                raise ConfigError(f"{label} must be at least 1, got {value}")
        self.name = self.name or f"fusion-{self.retriever.name}"
        self._templates = (_template(self.prompt, {"question", "passages"}),
                           _template(self.variations_prompt, {"question", "n"}))

    async def avariations(self, query: str) -> list[str]:
        """The generator's rewrites of ``query`` (at most ``n_variations``). Raises ModelCallError."""
        reply = await self.generator.complete(self._templates[1].render(question=query, n=self.n_variations))
        return parse_variations(reply.text, original=query, n=self.n_variations)

    def variations(self, query: str) -> list[str]:
        """:meth:`avariations` from synchronous code."""
        return synchronous(self.avariations)(query)

    async def arun(self, query: str, *, qid: str | None = None) -> AgentAnswer | Unscored:
        """Answer ``query`` from the RRF fusion of the original's and the rewrites' rankings."""
        if (bad := _check_query(query)) is not None:
            return bad
        try:
            variations = await self.avariations(query)
        except ModelCallError as exc:
            return Unscored(reason=f"query variation generation failed: {exc}", cause=exc.cause)  # type: ignore[arg-type]
        depth = self.depth or self.k
        rankings = await gather_bounded([query, *variations],
                                        lambda q: _retrieve(self.retriever, q, depth),
                                        concurrency=self.concurrency)
        failed = next((r for r in rankings if isinstance(r, Unscored)), None)
        if failed is not None:
            return failed
        documents = rrf_documents(rankings, k=self.rank_constant, top_k=self.k)  # type: ignore[arg-type]
        answer = await _answer(self.generator, self._templates[0], query, documents)
        if isinstance(answer, Unscored):
            return answer
        return AgentAnswer(id=qid, question=query, agent=self.name, answer=answer, contexts=documents,
                           variations=variations)


def six_agents(backend: SearchBackend, embedder: Embedder | None, generator: Judge, k: int = 5, *,
               n_variations: int = 4, hybrid: HybridSettings = HybridSettings()) -> list[RAGAgent | FusionAgent]:
    """The paper's six agents over one backend: RAG and RAG-Fusion x BM25, KNN and hybrid RRF,
    named ``rag-bm25``, ``rag-knn``, ``rag-hybrid``, ``fusion-bm25``, ``fusion-knn``, ``fusion-hybrid``.

    ``embedder`` serves KNN and hybrid (None loads the packaged MiniLM on first use); ``hybrid``
    says how the hybrid retriever fuses BM25 and KNN (client-side RRF, k = 60, by default).

    >>> from langrag_eval.retrieval import EmbeddedBackend
    >>> from langrag_eval.testing import ScriptedModel
    >>> [a.name for a in six_agents(EmbeddedBackend(), None, Judge(ScriptedModel(["x"])))]
    ['rag-bm25', 'rag-knn', 'rag-hybrid', 'fusion-bm25', 'fusion-knn', 'fusion-hybrid']
    """
    retrievers = [Retriever(backend, mode=mode, embedder=embedder, k=k, hybrid=hybrid) for mode in MODES]
    return [*(RAGAgent(r, generator, k=k) for r in retrievers),
            *(FusionAgent(r, generator, k=k, n_variations=n_variations) for r in retrievers)]


def select_agents(agents: list[RAGAgent | FusionAgent], names: list[str] | None) -> list[RAGAgent | FusionAgent]:
    """The agents named in ``names`` (all when None), in the order given; unknown names are an error.

    >>> from langrag_eval.retrieval import EmbeddedBackend
    >>> from langrag_eval.testing import ScriptedModel
    >>> six = six_agents(EmbeddedBackend(), None, Judge(ScriptedModel(["x"])))
    >>> [a.name for a in select_agents(six, ["fusion-knn", "rag-bm25"])]
    ['fusion-knn', 'rag-bm25']
    """
    if names is None:
        return list(agents)
    by_name = {a.name: a for a in agents}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ConfigError(f"unknown agent(s) {', '.join(unknown)}; choose from {', '.join(by_name)}")
    return [by_name[n] for n in dict.fromkeys(names)]
