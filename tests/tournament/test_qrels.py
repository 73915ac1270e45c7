"""Qrels, MRR@k at both thresholds and nDCG@k, by hand."""

from __future__ import annotations

import math

import pytest

from langrag_eval.results import Unscored
from langrag_eval.tournament import (
    RelevanceJudgment,
    TournamentData,
    build_qrels,
    mrr_at_k,
    ndcg_at_k,
    retrieval_metrics,
)


def test_build_qrels_leaves_out_unscored() -> None:
    qrels = build_qrels({("q1", "d1"): RelevanceJudgment(reason="", relevance=2),
                         ("q1", "d2"): Unscored(reason="x", cause="timeout"),
                         ("q2", "d1"): RelevanceJudgment(reason="", relevance=0)})
    assert qrels == {"q1": {"d1": 2}, "q2": {"d1": 0}}


def test_mrr_at_k_thresholds_and_cutoff() -> None:
    q = {"a": 0, "b": 1, "c": 2}
    assert mrr_at_k(["a", "b", "c"], q, k=5, threshold=1) == 0.5
    assert mrr_at_k(["a", "b", "c"], q, k=5, threshold=2) == pytest.approx(1 / 3)
    assert mrr_at_k(["a", "b", "c"], q, k=2, threshold=2) == 0.0       # first very relevant is at rank 3
    assert mrr_at_k(["x", "c"], q, k=5, threshold=2) == 0.5             # unjudged counts as not relevant
    assert mrr_at_k([], q) == 0.0


def test_ndcg_at_k_by_hand() -> None:
    q = {"a": 0, "b": 1, "c": 2}
    dcg = (2 ** 1 - 1) / math.log2(3) + (2 ** 2 - 1) / math.log2(4)      # b at rank 2, c at rank 3
    ideal = (2 ** 2 - 1) / math.log2(2) + (2 ** 1 - 1) / math.log2(3)
    assert ndcg_at_k(["a", "b", "c"], q, k=5) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(["c", "b", "a"], q) == pytest.approx(1.0)
    assert ndcg_at_k(["a"], {"a": 0}) is None                             # nothing relevant: undefined


def test_retrieval_metrics_per_agent() -> None:
    data = TournamentData.from_records([
        {"qid": "q1", "query": "?", "agent": "x", "answer": "1",
         "documents": [{"id": "a", "text": "A"}, {"id": "c", "text": "C"}]},
        {"qid": "q1", "query": "?", "agent": "y", "answer": "2",
         "documents": [{"id": "c", "text": "C"}]},
        {"qid": "q2", "query": "?", "agent": "x", "answer": "3", "documents": [{"id": "b", "text": "B"}]},
        {"qid": "q2", "query": "?", "agent": "y", "answer": "4", "documents": []}])
    qrels = {"q1": {"a": 0, "c": 2}, "q2": {"b": 1}}
    m = retrieval_metrics(data, qrels, k=5)
    assert m["x"]["mrr"] == {"somewhat": pytest.approx((0.5 + 1.0) / 2), "very": pytest.approx(0.5 / 2)}
    assert m["y"]["mrr"] == {"somewhat": 0.5, "very": 0.5}               # retrieved nothing for q2: 0
    assert m["y"]["queries"] == 2
