"""The verdict rule of the judge card, over generated measures."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from langrag_eval.audit import Measure, decide
from langrag_eval.audit.card import HEADLINE
from langrag_eval.stats.intervals import wilson


def measure(key: str, use: str, k: int, n: int, threshold: float, direction: str) -> Measure:
    return Measure(key=key, name=key, use=use, estimate=wilson(k, n), threshold=threshold,
                   direction=direction)  # type: ignore[arg-type]


counts = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n)))


@given(st.sampled_from(sorted(HEADLINE)), counts, counts, counts)
def test_the_verdict_follows_the_stated_rule(use: str, head: tuple[int, int], bias: tuple[int, int],
                                            unscored: tuple[int, int]) -> None:
    h = measure(HEADLINE[use], use, *head, 0.8, "min")
    b = measure(f"{use}.bias", f"{use}/probe", *bias, 0.2, "max")
    u = measure("reliability.unscored", "reliability", *unscored, 0.05, "max")
    other = measure("other.thing", "elsewhere", 0, 10, 0.5, "min")   # another use's measure: ignored
    v = decide(use, [h, b, u, other])
    if h.estimate.value < 0.8:
        assert v.verdict == "unfit"
    elif b.passed and u.passed and h.estimate.low >= 0.8:
        assert v.verdict == "fit" and not v.caveats
    else:
        assert v.verdict == "fit with caveats"
        named = " ".join(v.caveats)
        assert (f"{use}.bias" in named) == (not b.passed)
        assert ("reliability.unscored" in named) == (not u.passed)
        assert ("interval" in named) == (h.estimate.low < 0.8)
    assert "other.thing" not in " ".join(v.caveats)
    assert f"n={head[1]}" in v.line


def test_a_use_without_its_headline_is_not_measured() -> None:
    v = decide("pairwise", [measure("pairwise.position_flips", "pairwise/position", 1, 10, 0.2, "max")])
    assert v.verdict == "not measured"
    empty = Measure(key="grading.binary_agreement", name="x", use="grading", estimate=wilson(0, 0),
                    threshold=0.8, direction="min")
    assert decide("grading", [empty]).verdict == "not measured"
