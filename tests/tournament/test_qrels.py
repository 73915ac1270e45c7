"""Qrels, MRR@k at both thresholds and nDCG@k, by hand; the same numbers as retrieval's metrics."""

from __future__ import annotations

import math

import pytest

from langrag_eval.results import Unscored
from langrag_eval.retrieval.metrics import evaluate_run
from langrag_eval.stats.ranking_metrics import ndcg, reciprocal_rank
from langrag_eval.tournament import RelevanceJudgment, TournamentData, build_qrels, retrieval_metrics


def test_build_qrels_leaves_out_unscored() -> None:
    qrels = build_qrels({("q1", "d1"): RelevanceJudgment(reason="", relevance=2),
                         ("q1", "d2"): Unscored(reason="x", cause="timeout"),
                         ("q2", "d1"): RelevanceJudgment(reason="", relevance=0)})
    assert qrels == {"q1": {"d1": 2}, "q2": {"d1": 0}}


def test_mrr_at_k_thresholds_and_cutoff() -> None:
    q = {"a": 0, "b": 1, "c": 2}
    assert reciprocal_rank(["a", "b", "c"], q, k=5, threshold=1) == 0.5
    assert reciprocal_rank(["a", "b", "c"], q, k=5, threshold=2) == pytest.approx(1 / 3)
    assert reciprocal_rank(["a", "b", "c"], q, k=2, threshold=2) == 0.0   # first very relevant is at rank 3
    assert reciprocal_rank(["x", "c"], q, k=5, threshold=2) == 0.5         # unjudged counts as not relevant
    assert reciprocal_rank([], q) == 0.0


def test_exponential_ndcg_by_hand() -> None:
    q = {"a": 0, "b": 1, "c": 2}
    dcg = (2 ** 1 - 1) / math.log2(3) + (2 ** 2 - 1) / math.log2(4)      # b at rank 2, c at rank 3
    ideal = (2 ** 2 - 1) / math.log2(2) + (2 ** 1 - 1) / math.log2(3)
    assert ndcg(["a", "b", "c"], q, k=5, gain="exponential") == pytest.approx(dcg / ideal)
    assert ndcg(["c", "b", "a"], q, k=5, gain="exponential") == pytest.approx(1.0)
    assert ndcg(["a"], {"a": 0}, k=5, gain="exponential") is None          # nothing relevant: undefined


def test_tournament_and_retrieval_report_the_same_numbers() -> None:
    """One implementation: the per-agent table equals retrieval's run scores on the same lists,
    repeated ids included (they once differed: reciprocal rank 0.5 vs 0.2, nDCG@3 0.620 vs 0.587)."""
    docs = ["c", "c", "c", "b", "a"]
    data = TournamentData.from_records([{"qid": "q1", "query": "?", "agent": "x", "answer": "1",
                                         "documents": [{"id": d, "text": d.upper()} for d in docs]}])
    qrels = {"q1": {"a": 2, "b": 1, "c": 0}}
    for gain in ("linear", "exponential"):
        m = retrieval_metrics(data, qrels, k=3, gain=gain)["x"]
        run = evaluate_run({"q1": docs}, qrels, k=3, gain=gain)
        assert m["mrr"]["somewhat"] == run.mrr == 0.5
        assert m["ndcg"] == run.ndcg and m["ndcg_gain"] == gain
    assert retrieval_metrics(data, qrels, k=3)["x"]["ndcg_gain"] == "exponential"


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
