"""Agreement between two graders on an ordinal scale (vRAG-Eval, sections 4.3-4.4).

The paper compares an LLM judge with human experts twice on the same items: at the exact level of
its 5-level rubric, and after mapping 1-3 to *reject* and 4-5 to *accept*. This module computes
both, the confusion matrices behind them, reject rates per grader, Cohen's kappa (unweighted and
quadratic-weighted) and rank correlations (Kendall tau-b, Spearman) with p-values from scipy.

Scores are plain integers; ``None`` marks an item a grader left unscored. Unscored and missing items
are never dropped silently: :func:`pair_scores` counts them per grader and lists their ids, and every
statistic is computed on the items both graders scored. A statistic that is undefined on the data
(kappa when chance agreement is total, a correlation of a constant) is ``None`` with the reason in
``notes`` — never NaN.

>>> report = agreement({"q1": 4, "q2": 2, "q3": 5, "q4": None}, {"q1": 5, "q2": 2, "q3": 3, "q4": 1})
>>> report.compared, report.unscored, round(report.exact, 3), round(report.binary, 3)
(3, {'a': 1, 'b': 0}, 0.333, 0.667)
>>> report.binary_confusion
[[1, 0], [1, 1]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from ..errors import ArgumentError

__all__ = [
    "Paired", "Correlation", "AgreementReport", "pair_scores", "exact_agreement", "binary_agreement",
    "confusion_matrix", "binary_confusion", "reject_rate", "cohen_kappa", "kendall_tau", "spearman",
    "agreement", "format_agreement", "LEVELS",
]

LEVELS: tuple[int, ...] = (1, 2, 3, 4, 5)
Scores = Mapping[str, "int | None"] | Sequence["int | None"]


@dataclass(frozen=True)
class Paired:
    """Two graders' scores aligned by item id, with what could not be paired accounted for.

    ``a`` and ``b`` hold the items both graders scored, in the order of ``ids``. ``unscored_a`` lists
    items grader A left unscored (``None``); ``missing_a`` items that A's scores do not contain at all.
    """

    ids: list[str]
    a: list[int]
    b: list[int]
    unscored_a: list[str] = field(default_factory=list)
    unscored_b: list[str] = field(default_factory=list)
    missing_a: list[str] = field(default_factory=list)
    missing_b: list[str] = field(default_factory=list)


def _as_mapping(scores: Scores) -> dict[str, int | None]:
    if isinstance(scores, Mapping):
        return {str(k): v for k, v in scores.items()}
    return {str(i): v for i, v in enumerate(scores)}


def pair_scores(a: Scores, b: Scores) -> Paired:
    """Align two graders by item id (mappings) or position (sequences of equal length).

    >>> p = pair_scores({"x": 3, "y": None, "z": 4}, {"x": 3, "y": 2})
    >>> p.ids, p.unscored_a, p.missing_b
    (['x'], ['y'], ['z'])
    """
    if not isinstance(a, Mapping) and not isinstance(b, Mapping) and len(a) != len(b):
        raise ArgumentError(f"score sequences differ in length: {len(a)} and {len(b)}")
    ma, mb = _as_mapping(a), _as_mapping(b)
    order = list(ma) + [k for k in mb if k not in ma]
    out = Paired(ids=[], a=[], b=[])
    for key in order:
        in_a, in_b = key in ma, key in mb
        va, vb = ma.get(key), mb.get(key)
        if not in_a:
            out.missing_a.append(key)
        elif va is None:
            out.unscored_a.append(key)
        if not in_b:
            out.missing_b.append(key)
        elif vb is None:
            out.unscored_b.append(key)
        if va is not None and vb is not None:
            out.ids.append(key)
            out.a.append(_score(va))
            out.b.append(_score(vb))
    return out


def _score(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentError(f"scores must be integers or None, got {value!r}")
    return int(value)


def _check(a: Sequence[int], b: Sequence[int]) -> None:
    if len(a) != len(b):
        raise ArgumentError(f"score lists differ in length: {len(a)} and {len(b)}")


def exact_agreement(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Share of items with the same score; None for no items.

    >>> exact_agreement([1, 2, 3, 4], [1, 2, 4, 4])
    0.75
    """
    _check(a, b)
    return sum(x == y for x, y in zip(a, b)) / len(a) if a else None


def binary_agreement(a: Sequence[int], b: Sequence[int], threshold: int = 4) -> float | None:
    """Share of items both graders accept or both reject (accept = score >= ``threshold``).

    >>> binary_agreement([1, 2, 3, 4], [3, 1, 5, 5])
    0.75
    """
    _check(a, b)
    return sum((x >= threshold) == (y >= threshold) for x, y in zip(a, b)) / len(a) if a else None


def reject_rate(scores: Sequence[int], threshold: int = 4) -> float | None:
    """Share of scores below ``threshold``.

    >>> reject_rate([1, 2, 4, 5])
    0.5
    """
    return sum(s < threshold for s in scores) / len(scores) if scores else None


def confusion_matrix(a: Sequence[int], b: Sequence[int], labels: Sequence[int] = LEVELS) -> list[list[int]]:
    """Counts ``m[i][j]`` of items grader A scored ``labels[i]`` and grader B ``labels[j]``.

    >>> confusion_matrix([1, 2, 2], [1, 2, 3], labels=(1, 2, 3))
    [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    """
    _check(a, b)
    allowed = set(labels)
    stray = sorted({v for v in list(a) + list(b) if v not in allowed})
    if stray:
        # crosstab would silently leave these out of the table
        raise ArgumentError(f"scores {stray} are not among the levels {list(labels)}")
    if not a:
        return [[0] * len(labels) for _ in labels]
    from scipy.stats.contingency import crosstab  # scipy.stats takes seconds to import: load on use

    table = crosstab(list(a), list(b), levels=(list(labels), list(labels))).count
    return [[int(v) for v in row] for row in table]


def binary_confusion(a: Sequence[int], b: Sequence[int], threshold: int = 4) -> list[list[int]]:
    """2x2 counts, rows grader A, columns grader B, order (reject, accept).

    >>> binary_confusion([1, 4, 5], [2, 2, 5])
    [[1, 0], [1, 1]]
    """
    _check(a, b)
    m = [[0, 0], [0, 0]]
    for x, y in zip(a, b):
        m[int(x >= threshold)][int(y >= threshold)] += 1
    return m


def cohen_kappa(a: Sequence[int], b: Sequence[int], *, labels: Sequence[int] = LEVELS,
                weights: Literal["linear", "quadratic"] | None = None) -> float | None:
    """Cohen's kappa, ``1 - sum(w*O) / sum(w*E)`` with O the observed and E the chance confusion
    proportions; ``w`` is 1 off the diagonal (unweighted), ``|i-j|`` (linear) or ``(i-j)^2``
    (quadratic), ``i, j`` being positions in ``labels``. None when undefined (no items, or chance
    agreement is already total, as when both graders give one and the same score to everything).

    >>> round(cohen_kappa([1, 2, 3, 4, 5, 5], [1, 2, 3, 5, 5, 4]), 4)
    0.5714
    """
    if weights not in (None, "linear", "quadratic"):
        raise ArgumentError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    observed = np.asarray(confusion_matrix(a, b, labels), dtype=float)
    n = observed.sum()
    if n == 0:
        return None
    observed /= n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    idx = np.arange(len(labels))
    dist = np.abs(idx[:, None] - idx[None, :]).astype(float)
    w = {None: (dist > 0).astype(float), "linear": dist, "quadratic": dist ** 2}[weights]
    denominator = float((w * expected).sum())
    if denominator <= 1e-15:
        return None
    return 1.0 - float((w * observed).sum()) / denominator


@dataclass(frozen=True)
class Correlation:
    """A rank correlation with its two-sided p-value (scipy)."""

    statistic: float
    pvalue: float


def _correlation(fn: Any, a: Sequence[int], b: Sequence[int]) -> Correlation | None:
    _check(a, b)
    # scipy returns NaN (with a warning) for fewer than two items or a constant input
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    result = fn(a, b)
    stat, p = float(result.statistic), float(result.pvalue)
    if math.isnan(stat) or math.isnan(p):
        return None
    return Correlation(stat, p)


def kendall_tau(a: Sequence[int], b: Sequence[int]) -> Correlation | None:
    """Kendall's tau-b (ties in either grader accounted for) and its p-value; None when undefined.

    >>> round(kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]).statistic, 4)
    0.6667
    """
    from scipy import stats as sps

    return _correlation(lambda x, y: sps.kendalltau(x, y, variant="b"), a, b)


def spearman(a: Sequence[int], b: Sequence[int]) -> Correlation | None:
    """Spearman's rank correlation (average ranks for ties) and its p-value; None when undefined.

    >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]).statistic, 4)
    0.8
    """
    from scipy import stats as sps

    return _correlation(sps.spearmanr, a, b)


@dataclass(frozen=True)
class AgreementReport:
    """Everything :func:`agreement` measures; ``as_dict()`` is its JSON form.

    Rates and reject rates are over the ``compared`` items (scored by both), so they match the
    confusion matrices. ``unscored``/``missing`` count, per grader name, the items left out.
    """

    names: tuple[str, str]
    threshold: int
    labels: tuple[int, ...]
    items: int
    compared: int
    unscored: dict[str, int]
    missing: dict[str, int]
    excluded_ids: dict[str, list[str]]
    exact: float | None
    binary: float | None
    confusion: list[list[int]]
    binary_confusion: list[list[int]]
    reject_rate: dict[str, float | None]
    kappa: float | None
    weighted_kappa: float | None
    kendall_tau: Correlation | None
    spearman: Correlation | None
    notes: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def agreement(a: Scores, b: Scores, *, names: tuple[str, str] = ("a", "b"), threshold: int = 4,
              labels: Sequence[int] = LEVELS) -> AgreementReport:
    """Compare two graders: exact and binary agreement, confusion matrices, reject rates, kappa
    (unweighted and quadratic), Kendall tau-b and Spearman. See the module docstring."""
    na, nb = names
    if na == nb:
        raise ArgumentError(f"the two graders need different names, got {names!r}")
    p = pair_scores(a, b)
    notes: list[str] = []
    kappa = cohen_kappa(p.a, p.b, labels=labels)
    wkappa = cohen_kappa(p.a, p.b, labels=labels, weights="quadratic")
    tau, rho = kendall_tau(p.a, p.b), spearman(p.a, p.b)
    if not p.ids:
        notes.append("no item was scored by both graders")
    else:
        if kappa is None:
            notes.append("kappa is undefined: chance agreement is total (one score everywhere)")
        if tau is None:
            notes.append("rank correlations are undefined: fewer than two items or a grader "
                         "gave every item the same score")
    for who, ids in ((na, p.unscored_a), (nb, p.unscored_b)):
        if ids:
            notes.append(f"{len(ids)} item(s) left unscored by {who} are not compared")
    for who, ids in ((na, p.missing_a), (nb, p.missing_b)):
        if ids:
            notes.append(f"{len(ids)} item(s) have no score from {who} at all")
    items = len(p.ids) + len(set(p.unscored_a + p.unscored_b + p.missing_a + p.missing_b))
    return AgreementReport(
        names=(na, nb), threshold=threshold, labels=tuple(labels), items=items, compared=len(p.ids),
        unscored={na: len(p.unscored_a), nb: len(p.unscored_b)},
        missing={na: len(p.missing_a), nb: len(p.missing_b)},
        excluded_ids={f"unscored_{na}": p.unscored_a, f"unscored_{nb}": p.unscored_b,
                      f"missing_{na}": p.missing_a, f"missing_{nb}": p.missing_b},
        exact=exact_agreement(p.a, p.b), binary=binary_agreement(p.a, p.b, threshold),
        confusion=confusion_matrix(p.a, p.b, labels),
        binary_confusion=binary_confusion(p.a, p.b, threshold),
        reject_rate={na: reject_rate(p.a, threshold), nb: reject_rate(p.b, threshold)},
        kappa=kappa, weighted_kappa=wkappa, kendall_tau=tau, spearman=rho, notes=notes)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def format_agreement(r: dict[str, Any], *, indent: str = "") -> str:
    """Plain-text rendering of ``AgreementReport.as_dict()``, one line per statistic, then the
    confusion matrices; every line starts with ``indent``.

    >>> text = format_agreement(agreement({"q1": 4, "q2": 2}, {"q1": 5, "q2": 2}).as_dict())
    >>> print(text.splitlines()[1])
    exact agreement (5 levels)     50.0%
    """
    a, b = r["names"]
    lines = [
        f"items {r['items']}, compared {r['compared']} (scored by both); unscored: {a} "
        f"{r['unscored'][a]}, {b} {r['unscored'][b]}; without a score: {a} {r['missing'][a]}, "
        f"{b} {r['missing'][b]}",
        f"exact agreement (5 levels)     {_pct(r['exact'])}",
        f"binary agreement (accept >= {r['threshold']}) {_pct(r['binary'])}",
        f"reject rate                    {a} {_pct(r['reject_rate'][a])}, {b} {_pct(r['reject_rate'][b])}",
        f"Cohen's kappa                  {_num(r['kappa'])} (quadratic-weighted {_num(r['weighted_kappa'])})",
    ]
    for label, key in (("Kendall tau-b", "kendall_tau"), ("Spearman rho", "spearman")):
        c = r[key]
        lines.append(f"{label:<31}" + ("n/a" if c is None else f"{c['statistic']:.3f} (p = {c['pvalue']:.3g})"))
    levels = r["labels"]
    lines.append(f"confusion (rows {a}, columns {b}):")
    lines.append("      " + "".join(f"{lv:>6}" for lv in levels))
    lines += [f"{lv:>6}" + "".join(f"{n:>6}" for n in row) for lv, row in zip(levels, r["confusion"])]
    (rr, ra), (ar, aa) = r["binary_confusion"]
    lines += [f"accept/reject (rows {a}, columns {b}):", "            reject  accept",
              f"    reject  {rr:>6}  {ra:>6}", f"    accept  {ar:>6}  {aa:>6}"]
    lines += [f"note: {n}" for n in r["notes"]]
    return "\n".join(indent + line for line in lines)
