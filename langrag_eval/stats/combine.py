"""Combining several human graders into one score per item (vRAG-Eval, section 4.2).

The paper took the median of three experts for its first 52 questions and, for the remaining 103,
each scored by two other experts, picked one of the two at random ("randomly pick the other two
experts' assessment", section 4.2). :func:`combine_median` covers both: with an odd number of scores
the median is a score on the scale; with an even number there are two middle scores and ``even``
decides:

- ``"random"`` (default): one of the two middle scores at random, seeded (``seed``): the paper's
  choice for its two-grader items, so agreement figures compare with its Table/Figure numbers.
- ``"low"``: the lower middle score. With the accept line at 4 an item is then accepted only when a
  strict majority of its graders accept it: two graders at 3 and 4 give 3, a reject.
- ``"high"``: the upper middle score (accepted when at least half accept).

Reports name the rule and the seed (:func:`describe_combination`).

A grader's missing score (``None``) is left out of that item's median; an item nobody scored stays
``None`` and is counted as unscored by the agreement statistics.

>>> combine_median({"q1": {"ann": 2, "bo": 4, "cy": 5}, "q2": {"ann": 3, "bo": 4}, "q3": {"ann": None}}, even="low")
{'q1': 4, 'q2': 3, 'q3': None}
>>> describe_combination("median", ("ann", "bo"), even="random", seed=0)
'median of ann, bo (an even count: one of the two middle scores at random, seed 0, as vRAG-Eval)'
>>> combine_annotator({"q1": {"ann": 2, "bo": 4}}, "bo")
{'q1': 4}
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Literal

from ..errors import ConfigError

__all__ = ["combine_median", "combine_annotator", "combine", "describe_combination", "EvenRule"]

EvenRule = Literal["low", "high", "random"]
Table = Mapping[str, Mapping[str, "int | None"]]


def combine_median(table: Table, *, even: EvenRule = "random", seed: int = 0) -> dict[str, int | None]:
    """One score per item: the median of its graders' scores (see the module docstring for an even
    count). ``table`` maps item id to ``{grader: score or None}``."""
    if even not in ("low", "high", "random"):
        raise ConfigError(f'even must be "low", "high" or "random", got {even!r}')
    rng = random.Random(seed)
    out: dict[str, int | None] = {}
    for item, row in table.items():
        scores = sorted(int(v) for v in row.values() if v is not None)
        if not scores:
            out[item] = None
            continue
        mid = len(scores) // 2
        if len(scores) % 2:
            out[item] = scores[mid]
        else:
            low, high = scores[mid - 1], scores[mid]
            out[item] = {"low": low, "high": high}.get(even) or rng.choice((low, high))
    return out


def combine_annotator(table: Table, annotator: str) -> dict[str, int | None]:
    """One score per item: the named grader's (``None`` where that grader gave none)."""
    known = {name for row in table.values() for name in row}
    if table and annotator not in known:
        raise ConfigError(f"no annotator named {annotator!r}; known: {', '.join(sorted(known))}")
    return {item: (None if row.get(annotator) is None else int(row[annotator]))  # type: ignore[arg-type]
            for item, row in table.items()}


def combine(table: Table, how: str = "median", *, even: EvenRule = "random", seed: int = 0) -> dict[str, int | None]:
    """``how="median"`` for :func:`combine_median`, otherwise the name of one annotator.

    >>> combine({"q1": {"ann": 1, "bo": 5}}, "median", even="high")
    {'q1': 5}
    """
    if how == "median":
        return combine_median(table, even=even, seed=seed)
    return combine_annotator(table, how)


def describe_combination(how: str, graders: tuple[str, ...], *, even: EvenRule = "random", seed: int = 0) -> str:
    """How the human scores were combined, in words for a report (rule and seed included)."""
    if how != "median":
        return f"annotator {how} alone"
    rule = {"random": f"one of the two middle scores at random, seed {seed}, as vRAG-Eval",
            "low": "the lower middle score", "high": "the upper middle score"}[even]
    return f"median of {', '.join(graders)} (an even count: {rule})"
