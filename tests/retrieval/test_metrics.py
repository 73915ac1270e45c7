"""Retrieval metrics against hand computation, and agreement with LlamaIndex's MRR / hit rate."""

from __future__ import annotations

import math

import pytest

from langrag_eval.errors import ConfigError
from langrag_eval.retrieval.metrics import (
    evaluate_run, hit_rate, mrr, ndcg, paper_mrr, precision, recall, reciprocal_rank,
)

REL = {"a": 2, "b": 1, "c": 0, "d": 2}


def test_reciprocal_rank_thresholds_and_cutoff():
    ranked = ["c", "b", "x", "a"]
    assert reciprocal_rank(ranked, REL) == 0.5
    assert reciprocal_rank(ranked, REL, threshold=2) == 0.25
    assert reciprocal_rank(ranked, REL, k=3, threshold=2) == 0.0
    assert reciprocal_rank(["c", "c", "b"], REL) == 0.5  # a repeated id counts once


def test_precision_recall_hit_rate():
    ranked = ["a", "c", "b", "x", "y"]
    assert precision(ranked, REL, k=5) == 2 / 5
    assert precision(ranked[:2], REL, k=4) == 1 / 4  # fewer retrieved than k still divides by k
    assert recall(ranked, REL, k=5) == 2 / 3
    assert recall(ranked, REL, k=5, threshold=2) == 1 / 2
    assert recall(ranked, {"z": 0}, k=5) is None
    assert hit_rate(ranked, REL, k=1) == 1.0 and hit_rate(["c"], REL, k=1) == 0.0


def test_ndcg_by_hand():
    ranked = ["b", "a", "c"]
    dcg = 1 / math.log2(2) + 2 / math.log2(3)
    idcg = 2 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg(ranked, REL, k=3) == pytest.approx(dcg / idcg)
    assert ndcg(["a", "d", "b"], REL, k=3) == pytest.approx(1.0)
    assert ndcg(["a"], {"a": 0}, k=3) is None


def test_run_level_scores_and_paper_table4_thresholds():
    run = {"q1": ["c", "b", "a"], "q2": ["x", "y"], "q3": ["d"]}
    qrels = {"q1": REL, "q2": {"x": 0}, "q3": {"d": 1}}
    assert mrr(run, qrels, k=5) == pytest.approx((1 / 2 + 0 + 1) / 3)
    assert paper_mrr(run, qrels) == {"very_relevant": pytest.approx((1 / 3) / 3),
                                     "somewhat_or_very_relevant": pytest.approx(0.5)}
    scores = evaluate_run(run, qrels, k=5)
    assert scores.queries == 3 and scores.undefined == 1
    assert scores.hit_rate == pytest.approx(2 / 3)
    assert scores.recall == pytest.approx((2 / 3 + 1) / 2)
    with pytest.raises(ConfigError):
        evaluate_run({}, qrels)
    with pytest.raises(ConfigError):
        reciprocal_rank(["a"], REL, k=0)


def test_binary_mrr_and_hit_rate_agree_with_llamaindex():
    li = pytest.importorskip("llama_index.core.evaluation.retrieval.metrics")
    cases = [(["n3", "n1", "n2"], ["n1"]), (["n1"], ["n1", "n2"]), (["n4", "n5"], ["n1"])]
    for retrieved, expected in cases:
        rel = {e: 1 for e in expected}
        assert li.MRR().compute(expected_ids=expected, retrieved_ids=retrieved).score == reciprocal_rank(retrieved, rel)
        assert li.HitRate().compute(expected_ids=expected, retrieved_ids=retrieved).score == hit_rate(
            retrieved, rel, k=len(retrieved))
