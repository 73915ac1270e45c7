"""Answering pipelines: the plain RAG and the RAG-Fusion agents of the RAG-Fusion paper over any
retrieval backend and mode, a resumable batch runner, and the answers JSONL layout.

>>> from langrag_eval.pipelines import AGENT_NAMES
>>> AGENT_NAMES
('rag-bm25', 'rag-knn', 'rag-hybrid', 'fusion-bm25', 'fusion-knn', 'fusion-hybrid')
"""

from __future__ import annotations

from .agents import AGENT_NAMES, Agent, AgentAnswer, FusionAgent, RAGAgent, select_agents, six_agents
from .batch import AgentRun, arun_agents, run_agents
from .io import Query, answer_record, read_answers, read_queries, write_answers
from .variations import parse_variations

__all__ = [
    "AGENT_NAMES",
    "Agent",
    "AgentAnswer",
    "RAGAgent",
    "FusionAgent",
    "six_agents",
    "select_agents",
    "parse_variations",
    "AgentRun",
    "arun_agents",
    "run_agents",
    "Query",
    "read_queries",
    "read_answers",
    "write_answers",
    "answer_record",
]
