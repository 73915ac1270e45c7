"""Synthetic test queries, InPars style (RAGElo/RAG-Fusion section 4): long passages sampled from a
corpus, several generator models prompted with real user questions as few-shot examples, the pool
deduplicated and sampled per generator by quota, provenance kept on every query.

>>> from langrag_eval.synth import normalise_query
>>> normalise_query("What is the IP rating?")
'what is the ip rating'
"""

from .passages import (CorpusDocument, Passage, TokenCounter, count_tokens, load_corpus, sample_passages,
                       split_passages)
from .pool import Duplicate, QuotaResult, drop_near_duplicates, jaccard, normalise_query, sample_by_quota
from .queries import GeneratorStats, QueryGenerator, SynthReport, SynthResult, SyntheticQuery, write_queries

__all__ = [
    "CorpusDocument", "Passage", "TokenCounter", "count_tokens", "load_corpus", "split_passages",
    "sample_passages", "Duplicate", "QuotaResult", "drop_near_duplicates", "jaccard", "normalise_query",
    "sample_by_quota", "SyntheticQuery", "GeneratorStats", "SynthReport", "SynthResult", "QueryGenerator",
    "write_queries",
]
