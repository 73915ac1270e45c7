"""Qrels from relevance judgments, and MRR@k / nDCG@k per agent (the paper's Table 4).

The per-query maths is :mod:`langrag_eval.stats.ranking_metrics` (the one implementation, shared
with retrieval and checked against trec_eval): a repeated document id counts once, at its first
position; unjudged documents have grade 0.

MRR@k at a threshold: the reciprocal rank of the first document judged at least ``threshold``
within the top ``k``, 0 when there is none; averaged over the queries the agent answered. The paper
reports two thresholds: somewhat relevant (>= 1) and very relevant (>= 2).

nDCG@k uses the gain named by ``gain`` (default ``"exponential"``, ``2**rel - 1``; ``"linear"`` is
trec_eval's) and the ideal ordering of every judged document of the query's pool; a query whose pool
holds no relevant document has no nDCG and is counted, not averaged as 0. The report names the gain.

>>> from langrag_eval.stats.ranking_metrics import reciprocal_rank
>>> q1 = {"d1": 0, "d2": 2, "d3": 1}
>>> reciprocal_rank(["d1", "d3", "d2"], q1, k=5), reciprocal_rank(["d1", "d3", "d2"], q1, k=5, threshold=2)
(0.5, 0.3333333333333333)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..results import Unscored
from ..stats.ranking_metrics import Gain, dedupe, ndcg, reciprocal_rank
from .data import TournamentData
from .evaluators import RelevanceJudgment

__all__ = ["build_qrels", "retrieval_metrics"]

Qrels = dict[str, dict[str, int]]


def build_qrels(judgments: Mapping[tuple[str, str], RelevanceJudgment | Unscored]) -> Qrels:
    """``{qid: {doc id: level}}`` from scored judgments; unscored ones are left out."""
    qrels: Qrels = {}
    for (qid, did), j in judgments.items():
        if isinstance(j, RelevanceJudgment):
            qrels.setdefault(qid, {})[did] = j.relevance
    return qrels


def retrieval_metrics(data: TournamentData, qrels: Qrels, *, k: int = 5,
                      unjudged: Mapping[str, set[str]] | None = None,
                      gain: Gain = "exponential") -> dict[str, dict[str, Any]]:
    """Per agent: MRR@k at the "somewhat" (>= 1) and "very" (>= 2) thresholds, nDCG@k with its
    ``gain`` named, the number of queries, queries without nDCG, and how many of its top-k documents
    are unjudged (counted as not relevant). Empty when documents are not attributed to agents (one
    shared pool per query)."""
    if not data.attributed:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for agent in data.agents:
        somewhat, very, ndcgs, undefined, missing, n = 0.0, 0.0, [], 0, 0, 0
        for qid, per_agent in data.answers.items():
            if agent not in per_agent:
                continue
            n += 1
            ranked = [d.id for d in data.documents(qid, agent)]
            q = qrels.get(qid, {})
            somewhat += reciprocal_rank(ranked, q, k=k, threshold=1)
            very += reciprocal_rank(ranked, q, k=k, threshold=2)
            value = ndcg(ranked, q, k=k, gain=gain)
            if value is None:
                undefined += 1
            else:
                ndcgs.append(value)
            missing += sum(1 for did in dedupe(ranked, k) if did in (unjudged or {}).get(qid, set()))
        out[agent] = {"queries": n, "mrr": {"somewhat": somewhat / n if n else None,
                                            "very": very / n if n else None},
                      "ndcg": sum(ndcgs) / len(ndcgs) if ndcgs else None, "ndcg_gain": gain,
                      "ndcg_undefined": undefined, "unjudged_in_top_k": missing}
    return out
