"""Properties, over generated runs: pairing ignores row order, ids and whitespace; every paired item
is either in a metric's n or listed as unscored; the accept-rate difference is the flip balance."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.compare import Observation, compare_observations, pair
from langrag_eval.runtime import content_key
from compare_helpers import SCALES

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30)


@given(texts, texts, st.sampled_from([" ", "  ", "\n", "\t"]))
def test_content_key_ignores_surrounding_and_repeated_whitespace(question, reference, space):
    padded = space + space.join(question.split(" ")) + space
    assert content_key(padded, reference + space) == content_key(" ".join(question.split()), reference)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q4", "q5", "q6"]), st.sampled_from(["r1", "r2"])),
                min_size=1, max_size=30), st.randoms(use_true_random=False))
def test_pairing_ignores_order_and_ids(items, rnd: random.Random):
    a = [Observation(id=f"a{i}", key=content_key(q, r)) for i, (q, r) in enumerate(items)]
    order = list(range(len(items)))
    rnd.shuffle(order)
    b = [Observation(id=f"b{j}", key=content_key(*items[j])) for j in order]
    p = pair(a, b)
    assert len(p.pairs) == len(items) and not p.only_a and not p.only_b and p.by == "content"
    assert all(x.key == y.key for x, y in p.pairs)
    assert len({y.id for _, y in p.pairs}) == len(items)                # nobody paired twice


outcome = st.one_of(st.none(), st.integers(1, 5))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(outcome, outcome), min_size=1, max_size=60))
def test_no_paired_item_is_silently_dropped(rows):
    def obs(i, s):
        if s is None:
            return Observation(id=f"q{i}", key=f"k{i}", unscored={"accept_rate": "timeout: x", "grade": "timeout: x"},
                               scales=SCALES)
        return Observation(id=f"q{i}", key=f"k{i}", values={"accept_rate": float(s >= 4), "grade": float(s)},
                           scales=SCALES)
    a = [obs(i, x) for i, (x, _) in enumerate(rows)]
    b = [obs(i, y) for i, (_, y) in enumerate(rows)]
    c = compare_observations({"vrag": a}, {"vrag": b}, resamples=200)
    listed = {u["id_a"] for u in c.unscored}
    for m in c.metrics:
        assert m.pairs == len(rows) and m.n + len(listed) == len(rows)
        assert m.unscored_a == sum(x is None for x, _ in rows) and m.unscored_b == sum(y is None for _, y in rows)
    acc = c.metric("accept_rate")
    if acc.n:
        assert acc.diff == (acc.gained - acc.lost) / acc.n
        assert len(c.flips) == acc.gained + acc.lost
        assert acc.low <= acc.high and -1 <= acc.low and acc.high <= 1
    else:
        assert acc.diff is None and acc.p_value is None and acc.test is None
