"""The audit end to end with scripted judges built to have known properties: the card must recover
each property (the built-in rate inside the interval, the random judge at chance)."""

from __future__ import annotations


import pytest
from audit_judges import (INSTRUCTIONS, injectable, perfect, position_biased, random_judge,
                          verbose_loving)

from langrag_eval.audit import ATTACKS, JudgeCard, load_pairs, run_audit
from langrag_eval.runtime import Judge


def run(model, **kw) -> JudgeCard:
    return run_audit(Judge(model), **kw)


def value(card: JudgeCard, key: str) -> float:
    v = card.measure(key).estimate.value
    assert v is not None, key
    return v


@pytest.fixture(scope="module")
def perfect_card() -> JudgeCard:
    return run(perfect(), max_items=60)


def test_perfect_judge_agrees_with_every_label_and_is_fit(perfect_card: JudgeCard) -> None:
    card = perfect_card
    for key in ("grading.binary_agreement", "grading.kappa", "pairwise.accuracy",
                "groundedness.agreement", "groundedness.kappa", "grading.consistency_t0",
                "grading.consistency_user"):
        assert value(card, key) == 1.0, key
    for key in ("pairwise.position_flips", "pairwise.verbosity", "grading.injection", "reliability.unscored"):
        assert value(card, key) == 0.0, key
    assert [v.verdict for v in card.verdicts] == ["fit", "fit", "fit"]
    # the pairwise judge agrees with the majority; each annotator disagrees with it now and then
    ceiling = card.measure("pairwise.human_ceiling").estimate
    assert ceiling.value is not None and ceiling.value < 1.0
    assert card.items == {"pairwise": 60, "correctness": 60, "groundedness": 60}


def test_every_figure_carries_an_interval_and_its_n(perfect_card: JudgeCard) -> None:
    for m in perfect_card.measures:
        e = m.estimate
        if e.value is None:
            continue
        assert e.low is not None and e.high is not None and e.n > 0, m.key
        assert e.low <= e.value <= e.high, m.key


@pytest.mark.parametrize("rate", [0.25, 0.5])
def test_position_biased_judge_shows_its_flip_rate(rate: float) -> None:
    card = run(position_biased(rate), batteries=("pairwise",))
    flips = card.measure("pairwise.position_flips").estimate
    assert flips.n == 150
    assert flips.contains(rate), (flips, rate)
    assert abs(flips.value - rate) < 0.12
    # every flip is a preference for the first position
    assert value(card, "pairwise.first_preference") == 1.0
    assert card.verdict("pairwise").verdict in ("fit with caveats", "unfit")
    assert card.verdict("grading").verdict == "not measured"


def test_verbose_loving_judge_is_moved_by_padding_and_nothing_else() -> None:
    card = run(verbose_loving(), batteries=("pairwise",))
    assert value(card, "pairwise.verbosity") == 1.0
    assert value(card, "pairwise.position_flips") == 0.0
    assert value(card, "pairwise.accuracy") == 1.0
    v = card.verdict("pairwise")
    assert v.verdict == "fit with caveats" and any("verbosity" in c for c in v.caveats)


def test_injectable_judge_shows_its_attack_success_rate() -> None:
    card = run(injectable(), batteries=("correctness",))
    asr = card.measure("grading.injection").estimate
    assert asr.value == 1.0 and asr.n == 100      # every wrong answer, each attacked once
    assert value(card, "grading.binary_agreement") == 1.0
    assert card.verdict("grading").verdict == "fit with caveats"
    assert sum(a["n"] for a in card.attacks.values()) == 100
    assert all(a["succeeded"] == a["n"] for a in card.attacks.values())


def test_a_judge_that_only_falls_for_instructions_is_caught_by_those_alone() -> None:
    card = run(injectable(lambda planted: planted in INSTRUCTIONS), batteries=("correctness",))
    share = sum(a.kind == "instruction" for a in ATTACKS) / len(ATTACKS)
    asr = card.measure("grading.injection").estimate
    assert asr.contains(share) and abs(asr.value - share) < 0.05
    by_kind = {a.name: a.kind for a in ATTACKS}
    for name, tally in card.attacks.items():
        assert tally["succeeded"] == (tally["n"] if by_kind[name] == "instruction" else 0), name


def test_random_judge_sits_at_chance_with_an_interval_containing_it() -> None:
    card = run(random_judge(seed=3))
    # grading: accept with p = 2/5 (scores 4-5 of 1-5), humans half right: agreement 0.5, kappa 0
    assert card.measure("grading.binary_agreement").estimate.contains(0.5)
    assert card.measure("grading.kappa").estimate.contains(0.0)
    assert card.measure("groundedness.agreement").estimate.contains(0.5)
    assert card.measure("groundedness.kappa").estimate.contains(0.0)
    # pairwise: the combined verdict is a win only when two uniform draws agree (1/9 each way)
    pairs = load_pairs()
    chance = sum((7 / 9 if p.majority == "tie" else 1 / 9) for p in pairs if p.majority) / len(pairs)
    assert card.measure("pairwise.accuracy").estimate.contains(chance)
    # repeated at temperature 0 a random judge agrees with itself by chance: 0.4^2 + 0.6^2
    assert card.measure("grading.consistency_t0").estimate.contains(0.52)
    assert [v.verdict for v in card.verdicts] == ["unfit", "unfit", "unfit"]
