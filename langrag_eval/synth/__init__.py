"""Synthetic test queries, InPars style (RAGElo/RAG-Fusion section 4): long passages sampled from a
corpus, several generator models prompted with real user questions as few-shot examples, the pool
deduplicated and sampled per generator by quota, provenance kept on every query.

>>> from langrag_eval.synth import normalise_query
>>> normalise_query("What is the IP rating?")
'what is the ip rating'
"""

from .passages import (
    CorpusDocument, Passage, TokenCounter, count_tokens, load_corpus, sample_passages, split_passages,
)
from .pool import Duplicate, QuotaResult, drop_near_duplicates, jaccard, normalise_query, sample_by_quota
from .queries import GeneratorStats, QueryGenerator, SyntheticQuery, SynthReport, SynthResult, write_queries

__all__ = [
                       "CorpusDocument",
                       "Duplicate",
                       "GeneratorStats",
                       "Passage",
                       "QueryGenerator",
                       "QuotaResult",
                       "SynthReport",
                       "SynthResult",
                       "SyntheticQuery",
                       "TokenCounter",
                       "count_tokens",
                       "drop_near_duplicates",
                       "jaccard",
                       "load_corpus",
                       "normalise_query",
                       "sample_by_quota",
                       "sample_passages",
                       "split_passages",
                       "write_queries",
]
