"""Every ranking metric against trec_eval (pytrec-eval-terrier) on thousands of random runs and
qrels, repeated ids and ties included; agreement to 1e-9.

trec_eval reads a run as one score per (query, document). Our functions take a ranked list, where an
id may repeat; a repeated id counts once, at its first position. So the oracle is fed each id once,
scored by its first rank (distinct scores: trec_eval's own tie-breaking plays no part). Ties are
tested apart: :func:`rank_by_score` must order a scored run exactly as trec_eval does.
"""

from __future__ import annotations

import random

import pytest

from langrag_eval.stats.ranking_metrics import (
    average_precision, dedupe, hit_rate, ndcg, precision, rank_by_score, recall, reciprocal_rank,
)

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (the test extra) is not installed")

CASES = 6000
TOL = 1e-9


def _random_case(rng: random.Random) -> tuple[list[str], dict[str, int]]:
    pool = [f"d{i}" for i in range(rng.randint(1, 14))]
    judged = rng.sample(pool, rng.randint(1, len(pool)))
    qrels = {d: rng.choice((-1, 0, 0, 1, 2, 3)) for d in judged}   # -1: judged harmful
    # Drawn with replacement from judged and unjudged ids: repeats are common.
    ranked = [rng.choice(pool) for _ in range(rng.randint(1, 18))]
    return ranked, qrels


def _as_scores(ranked: list[str]) -> dict[str, float]:
    unique = dedupe(ranked)
    return {d: float(len(unique) - i) for i, d in enumerate(unique)}


def _trec(qrels: dict, run: dict, measures: set[str], level: int) -> dict:
    return pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)


@pytest.fixture(scope="module")
def cases() -> list[tuple[str, list[str], dict[str, int], int, int]]:
    rng = random.Random(20261122)
    out = []
    for i in range(CASES):
        ranked, qrels = _random_case(rng)
        out.append((f"q{i}", ranked, qrels, rng.choice((1, 2, 3, 5, 10)), rng.choice((1, 2, 3))))
    return out


def _groups(cases):
    groups: dict[tuple[int, int], list] = {}
    for case in cases:
        groups.setdefault((case[3], case[4]), []).append(case)
    return groups


def test_cut_measures_agree_with_trec_eval(cases) -> None:
    checked = 0
    for (k, level), group in _groups(cases).items():
        qrels = {q: rel for q, _, rel, _, _ in group}
        full = {q: _as_scores(r) for q, r, _, _, _ in group}
        top_k = {q: _as_scores(dedupe(r, k)) for q, r, _, _, _ in group}
        cut = _trec(qrels, full, {f"P.{k}", f"recall.{k}", f"map_cut.{k}", f"ndcg_cut.{k}", f"success.{k}"}, level)
        rr = _trec(qrels, top_k, {"recip_rank"}, level)
        for q, ranked, rel, _, _ in group:
            t = cut[q]
            assert precision(ranked, rel, k=k, threshold=level) == pytest.approx(t[f"P_{k}"], abs=TOL)
            assert hit_rate(ranked, rel, k=k, threshold=level) == pytest.approx(t[f"success_{k}"], abs=TOL)
            assert reciprocal_rank(ranked, rel, k=k, threshold=level) == pytest.approx(rr[q]["recip_rank"], abs=TOL)
            # Undefined here (None) is where trec_eval prints 0: no relevant document to find.
            assert (recall(ranked, rel, k=k, threshold=level) or 0.0) == pytest.approx(t[f"recall_{k}"], abs=TOL)
            assert (average_precision(ranked, rel, k=k, threshold=level) or 0.0) == pytest.approx(
                t[f"map_cut_{k}"], abs=TOL)
            assert (ndcg(ranked, rel, k=k) or 0.0) == pytest.approx(t[f"ndcg_cut_{k}"], abs=TOL)
            checked += 1
    assert checked == CASES


def test_uncut_measures_agree_with_trec_eval(cases) -> None:
    for level in (1, 2, 3):
        qrels = {q: rel for q, _, rel, _, _ in cases}
        run = {q: _as_scores(r) for q, r, _, _, _ in cases}
        t = _trec(qrels, run, {"recip_rank", "map", "ndcg", "set_recall"}, level)
        for q, ranked, rel, _, _ in cases:
            assert reciprocal_rank(ranked, rel, threshold=level) == pytest.approx(t[q]["recip_rank"], abs=TOL)
            assert (average_precision(ranked, rel, threshold=level) or 0.0) == pytest.approx(t[q]["map"], abs=TOL)
            assert (recall(ranked, rel, threshold=level) or 0.0) == pytest.approx(t[q]["set_recall"], abs=TOL)
            assert (ndcg(ranked, rel) or 0.0) == pytest.approx(t[q]["ndcg"], abs=TOL)


def test_exponential_gain_is_linear_trec_eval_over_transformed_grades(cases) -> None:
    """trec_eval's nDCG gain is the grade itself; grading each document 2**grade - 1 instead makes its
    linear nDCG our exponential one, an exact oracle for the second convention."""
    for k in (1, 3, 5, 10):
        # A negative grade adds no gain either way (checked against trec_eval's linear nDCG above).
        qrels = {q: {d: 2 ** g - 1 if g > 0 else g for d, g in rel.items()} for q, _, rel, _, _ in cases}
        run = {q: _as_scores(r) for q, r, _, _, _ in cases}
        t = _trec(qrels, run, {f"ndcg_cut.{k}"}, 1)
        for q, ranked, rel, _, _ in cases:
            ours = ndcg(ranked, rel, k=k, gain="exponential")
            assert (ours or 0.0) == pytest.approx(t[q][f"ndcg_cut_{k}"], abs=TOL)
            assert (ours is None) == all(g <= 0 for g in rel.values())


def test_a_scored_run_with_ties_is_ordered_as_trec_eval_orders_it() -> None:
    """trec_eval sorts by score descending, then document id descending; rank_by_score does the same,
    so metrics over its list equal trec_eval's over the raw scores, ties and all."""
    rng = random.Random(7)
    qrels, run = {}, {}
    for i in range(2000):
        ids = [f"d{j}" for j in range(rng.randint(1, 12))]
        qrels[f"q{i}"] = {d: rng.choice((0, 1, 2)) for d in rng.sample(ids, rng.randint(1, len(ids)))}
        run[f"q{i}"] = {d: float(rng.randint(0, 3)) for d in ids}   # few distinct scores: many ties
    t = _trec(qrels, run, {"recip_rank", "map", "P.3", "ndcg_cut.3"}, 1)
    ties = 0
    for q, scores in run.items():
        ranked = rank_by_score(scores)
        rel = qrels[q]
        ties += len(set(scores.values())) < len(scores)
        assert reciprocal_rank(ranked, rel) == pytest.approx(t[q]["recip_rank"], abs=TOL)
        assert (average_precision(ranked, rel) or 0.0) == pytest.approx(t[q]["map"], abs=TOL)
        assert precision(ranked, rel, k=3) == pytest.approx(t[q]["P_3"], abs=TOL)
        assert (ndcg(ranked, rel, k=3) or 0.0) == pytest.approx(t[q]["ndcg_cut_3"], abs=TOL)
    assert ties > 1000
    assert rank_by_score({"d1": 1.0, "d3": 1.0, "d2": 1.0, "d0": 2.0}) == ["d0", "d3", "d2", "d1"]


def test_repeated_ids_take_no_rank_and_add_no_gain() -> None:
    rel = {"a": 0, "b": 3, "c": 1}
    assert reciprocal_rank(["a", "a", "a", "a", "b"], rel) == 0.5
    assert precision(["b", "b", "b"], rel, k=3) == pytest.approx(1 / 3)
    assert ndcg(["b", "b", "c"], rel, k=3) == pytest.approx(ndcg(["b", "c"], rel, k=3))
    assert average_precision(["b", "b", "c"], rel) == pytest.approx(1.0)
