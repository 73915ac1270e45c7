"""The RAG and RAG-Fusion agents as LlamaIndex query engines.

``query`` / ``aquery`` return a ``Response`` whose ``source_nodes`` are the passages the answer was
generated from (node ids = chunk ids), so ``evaluator.evaluate_response(query=q, response=r)`` and
``BatchEvalRunner.evaluate_queries`` see the same contexts the agent used. ``metadata`` carries the
agent name and, for Fusion, the generated query variations. When no answer could be produced,
``response`` is None and ``metadata["error"]`` says why; the engine does not raise.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="a", text="Paris is in France."), Chunk(id="b", text="Rome is in Italy.")])
>>> engines = six_query_engines(backend, None, Judge(ScriptedModel(["Rome is in Italy."])), k=1)
>>> response = engines["rag-bm25"].query("Where is Rome?")
>>> response.response, [n.node.node_id for n in response.source_nodes]
('Rome is in Italy.', ['b'])
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.llms import LLM
from llama_index.core.query_engine import CustomQueryEngine

from langrag_eval.embeddings import Embedder
from langrag_eval.pipelines import AgentAnswer, six_agents
from langrag_eval.retrieval.base import HybridSettings, SearchBackend
from langrag_eval.runtime import Judge, synchronous

from ._common import as_judge
from .retrievers import to_node

__all__ = ["LangragQueryEngine", "six_query_engines"]


class LangragQueryEngine(CustomQueryEngine):
    """One agent (``RAGAgent``, ``FusionAgent`` or any :class:`Agent`) as a query engine."""

    agent: Any  # an Agent; Any so pydantic neither copies nor validates it

    def _response(self, query_str: str, result: Any) -> Response:
        if isinstance(result, AgentAnswer):
            return Response(response=result.answer, source_nodes=[to_node(d) for d in result.contexts],
                            metadata={"agent": self.agent.name, "query": query_str,
                                      "variations": list(result.variations)})
        return Response(response=None, source_nodes=[],
                        metadata={"agent": self.agent.name, "query": query_str,
                                  "error": f"{result.cause}: {result.reason}"})

    async def acustom_query(self, query_str: str) -> Response:
        return self._response(query_str, await self.agent.arun(query_str))

    custom_query = synchronous(acustom_query)


def six_query_engines(backend: SearchBackend, embedder: Embedder | None, llm: LLM | Judge, k: int = 5, *,
                      n_variations: int = 4,
                      hybrid: HybridSettings = HybridSettings()) -> dict[str, LangragQueryEngine]:
    """The paper's six agents (``rag-bm25`` ... ``fusion-hybrid``) as query engines, by name,
    answering with ``llm`` (a LlamaIndex LLM or a langrag-eval :class:`Judge`)."""
    agents = six_agents(backend, embedder, as_judge(llm), k, n_variations=n_variations, hybrid=hybrid)
    return {a.name: LangragQueryEngine(agent=a) for a in agents}
