"""RRF and normalisation fusion against the formulas, worked by hand."""

from __future__ import annotations

import pytest

from langrag_eval.errors import ConfigError
from langrag_eval.retrieval.fusion import combine_documents, combine_normalized, normalize, rrf, rrf_documents
from langrag_eval.types import Document


def test_rrf_formula_ranks_from_one_with_k_60():
    fused = dict(rrf([["a", "b", "c"], ["c", "a"]]))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)


def test_rrf_weights_and_custom_k():
    fused = dict(rrf([["a", "b"], ["b", "a"]], k=1, weights=[3.0, 1.0]))
    assert fused["a"] == pytest.approx(3 / 2 + 1 / 3)
    assert fused["b"] == pytest.approx(3 / 3 + 1 / 2)


def test_rrf_dedups_within_a_list_by_best_rank():
    assert dict(rrf([["a", "b", "a"]]))["a"] == pytest.approx(1 / 61)


def test_rrf_ties_are_deterministic_best_rank_then_list():
    # x and y both score 1/61 + 1/62; x reached rank 1 in list 0 first.
    assert [d for d, _ in rrf([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert [d for d, _ in rrf([["y", "x"], ["x", "y"]])] == ["y", "x"]
    assert [d for d, _ in rrf([["p"], ["q"]])] == ["p", "q"]


def test_rrf_differs_from_zero_based_llamaindex_convention():
    # LlamaIndex reciprocal_rerank would give the top hit 1/60; Cormack et al. give 1/61.
    assert rrf([["a"]])[0][1] == pytest.approx(1 / 61)


@pytest.mark.parametrize("bad", [{"k": 0}, {"weights": [1.0]}, {"weights": [-1.0, 1.0]}])
def test_rrf_rejects_bad_settings(bad):
    with pytest.raises(ConfigError):
        rrf([["a"], ["b"]], **bad)


def test_min_max_matches_opensearch_edge_cases():
    assert normalize([10.0, 7.0, 4.0]) == pytest.approx([1.0, 0.5, 0.001])
    assert normalize([3.0, 3.0]) == [1.0, 1.0]
    assert normalize([]) == []


def test_l2_normalisation():
    assert normalize([3.0, 4.0], "l2") == pytest.approx([0.6, 0.8])
    assert normalize([0.0, 0.0], "l2") == [0.0, 0.0]


def test_weighted_mean_counts_a_missing_document_as_zero():
    # The server's rule (ArithmeticMeanScoreCombinationTechnique; the live suite pins it against a
    # real node): every list counts, a document absent from one scores 0 there.
    fused = dict(combine_normalized([[("a", 4.0), ("b", 2.0), ("c", 1.0)], [("b", 0.9), ("d", 0.5)]],
                                    weights=[0.3, 0.7]))
    # list 0 normalised: a 1, b 1/3, c 0.001; list 1: b 1, d 0.001.
    assert fused["a"] == pytest.approx(0.3 * 1.0)
    assert fused["b"] == pytest.approx(0.3 * (1 / 3) + 0.7 * 1.0)
    assert fused["d"] == pytest.approx(0.7 * 0.001)


def test_worked_example_ranks_as_the_server_does():
    fused = combine_normalized([[("a", 4.0), ("b", 2.0)], [("b", 0.9), ("c", 0.8)]])
    assert [d for d, _ in fused] == ["b", "a", "c"]


def test_skip_rule_leaves_missing_lists_out():
    fused = dict(combine_normalized([[("a", 4.0), ("b", 2.0), ("c", 1.0)], [("b", 0.9), ("d", 0.5)]],
                                    weights=[0.3, 0.7], missing="skip"))
    assert fused["a"] == pytest.approx(1.0)  # only in list 0: its own normalised score
    assert fused["b"] == pytest.approx((0.3 * (1 / 3) + 0.7 * 1.0) / 1.0)
    assert fused["d"] == pytest.approx(0.001)
    assert [d for d, _ in combine_normalized([[("a", 4.0), ("b", 2.0)], [("b", 0.9), ("c", 0.8)]],
                                             missing="skip")] == ["a", "b", "c"]
    with pytest.raises(ConfigError, match="missing="):
        combine_normalized([[("a", 1.0)]], missing="none")  # type: ignore[arg-type]


def test_combine_rejects_duplicate_ids_in_one_list():
    with pytest.raises(ConfigError, match="same id twice"):
        combine_normalized([[("a", 1.0), ("a", 0.5)]])


def test_document_helpers_keep_first_copy_and_replace_score():
    a = Document(id="a", text="A", score=5.0, metadata={"m": 1})
    b = Document(id="b", text="B", score=4.0)
    fused = rrf_documents([[a, b], [b]], top_k=1)
    assert [(d.id, d.text) for d in fused] == [("b", "B")]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    combined = combine_documents([[a, b]], method="min_max")
    assert [(d.id, d.score, d.metadata) for d in combined] == [("a", 1.0, {"m": 1}), ("b", 0.001, {})]
    with pytest.raises(ConfigError, match="no score"):
        combine_documents([[Document(id="x", text="x")]])
