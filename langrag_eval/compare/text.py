"""Plain-text summaries of a comparison and of a gate, sized for one terminal screen."""

from __future__ import annotations

from typing import Any

from ..files.terminal import shown
from .compare import Comparison, MetricComparison
from .gate import GateResult
from .observations import is_scored_rate

__all__ = ["format_comparison", "format_gate"]


def _num(m: MetricComparison, x: float | None, *, signed: bool = False) -> str:
    if x is None:
        return "-"
    if m.kind == "binary":
        return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}%"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _p(x: float | None) -> str:
    return "-" if x is None else ("<0.001" if x < 0.001 else f"{x:.3f}")


def _name(m: MetricComparison) -> str:
    # A subject and a metric are users' names: shown with their controls escaped.
    return shown((m.subject + ": " if m.subject else "") + m.metric)


def _row(m: MetricComparison, name_width: int) -> str:
    interval = "-" if m.low is None else f"[{_num(m, m.low, signed=True)}, {_num(m, m.high, signed=True)}]"
    unscored = f"{m.unscored_a}/{m.unscored_b}"
    return (f"  {_name(m):<{name_width}} {m.n:>5} "
            f"{_num(m, m.mean_a):>8} {_num(m, m.mean_b):>8} {_num(m, m.diff, signed=True):>8} "
            f"{interval:>20} {(m.test or '-'):<16} {_p(m.p_value):>7} {_p(m.p_adjusted):>7} {unscored:>9}")


def _table(rows: list[MetricComparison], level: float) -> list[str]:
    width = max([14] + [len(_name(m)) for m in rows])
    head = (f"  {'metric':<{width}} {'n':>5} {'A':>8} {'B':>8} {'B-A':>8} {f'{level:.0%} interval':>20} "
            f"{'test':<16} {'p':>7} {'p Holm':>7} {'unsc A/B':>9}")
    return [head] + [_row(m, width) for m in rows]


def _flip(f: dict[str, Any]) -> str:
    """One flipped item: the yes/no score that flipped and every other score of it that moved,
    by name (``accept_rate lost (1 -> 0, grade 5 -> 2)``), the question, both judges' reasons."""
    a, b = f["a"], f["b"]
    moved = [f"{m} {a['values'][m]:g} -> {b['values'][m]:g}" for m in a["values"]
             if m in b["values"] and a["values"][m] != b["values"][m] and not is_scored_rate(m)]
    q = shown((f["question"] or "")[:70])
    ids = shown(a["id"]) + ("" if a["id"] == b["id"] else " / " + shown(b["id"]))
    lines = [f"  {ids}: {shown(f['metric'])} {f['direction']}"
             f" ({', '.join(moved)})  {q}"]
    for side, obs in (("A", a), ("B", b)):
        if obs["reason"]:
            lines.append(f"      {side}: {shown(' '.join(str(obs['reason']).split())[:100])}")
    return "\n".join(lines)


def _footnote(c: Comparison) -> str:
    """What the table's numbers mean, read from the compared scores themselves (which are yes/no,
    which are scored rates), whichever evaluators gave them."""
    binary = list(dict.fromkeys(m.metric for m in c.metrics if m.kind == "binary" and not is_scored_rate(m.metric)))
    rates = list(dict.fromkeys(m.metric for m in c.metrics if is_scored_rate(m.metric)))
    text = "  differences are B - A" + (f"; yes/no rates ({', '.join(binary)}) in percentage points" if binary else "")
    text += (f". p-values adjusted for {len([m for m in c.metrics if m.p_adjusted is not None])} metrics by "
             "Holm's method")
    if rates:
        text += f" ({', '.join(rates)}, {'a check' if len(rates) == 1 else 'checks'} on the data, left out)"
    return text + "."


def format_comparison(c: Comparison, *, flips: int = 10, subjects: bool = True) -> str:
    """The comparison as text: pairing, the metric table, subjects, unscored and flipped items."""
    lines = [f"run B {shown(c.run_b)} against baseline A {shown(c.run_a)}"]
    for family, p in c.pairing.items():
        lines.append(f"  {family}: {p['pairs']} items paired by {p['by']}"
                     + (f"; {p['only_a']} only in A, {p['only_b']} only in B"
                        if p["only_a"] or p["only_b"] else "")
                     + (f"; {p['repeated']} repeated question(s) paired in order" if p["repeated"] else ""))
    lines += _table(c.metrics, c.level)
    lines.append(_footnote(c))
    if subjects and c.subjects:
        lines.append("  by subject (Holm over all subject rows):")
        lines += ["  " + r for r in _table(c.subjects, c.level)[1:]]
    if c.unscored:
        lines.append(f"  {len(c.unscored)} paired item(s) unscored on a side (left out of their metrics):")
        for u in c.unscored[:5]:
            why = "; ".join(f"{side}: {next(iter(u[side.lower()].values()))}" for side in ("A", "B")
                            if u[side.lower()])
            lines.append(f"    {shown(u['id_a'])}: {shown(', '.join(u['metrics']))}: {shown(why[:110])}")
        if len(c.unscored) > 5:
            lines.append(f"    ... and {len(c.unscored) - 5} more (--json lists all)")
    if c.unpaired:
        lines.append(f"  {len(c.unpaired)} item(s) in one run only: "
                     + ", ".join(f"{u['run'].upper()}:{shown(u['id'])}" for u in c.unpaired[:8])
                     + (" ..." if len(c.unpaired) > 8 else ""))
    lost = sum(f["direction"] == "lost" for f in c.flips)
    if c.flips:
        lines.append(f"  flipped: {lost} lost, {len(c.flips) - lost} gained" + (f"; the first {flips}:" if
                                                                              len(c.flips) > flips else ":"))
        lines += [_flip(f) for f in c.flips[:flips]]
    score_falls = [m for m in c.movers if m["metric"] != "grade"]
    if score_falls:
        worst = sorted(score_falls, key=lambda m: m["change"])[:5]
        lines.append("  largest score falls: " + "; ".join(
            f"{shown(m['a']['id'])} {shown(m['metric'])} {m['change']:+.2f}" for m in worst))
    return "\n".join(lines)


def format_gate(result: GateResult) -> str:
    """The gate's one-screen summary: each gated metric's verdict, then what to look at."""
    c = result.comparison
    level = c.level
    lines = [f"gate: run {shown(result.run)} against baseline {shown(result.baseline)} "
             f"({result.confidence:.0%} confidence over {len(result.checks)} metric(s); "
             f"each interval at {level:.2%})"]
    for ch in result.checks:
        m = ch.comparison
        means = ("" if m is None or m.mean_a is None
                 else f"  A {_num(m, m.mean_a)} -> B {_num(m, m.mean_b)}, n={m.n}")
        status = "PASS*" if ch.insufficient else ch.status.upper()
        lines.append(f"  {status:<9} {shown(ch.metric):<12} {shown(ch.message)}{means}")
    for family, p in c.pairing.items():
        unsc = [m for m in c.metrics if m.family == family]
        in_a = max((m.unscored_a for m in unsc), default=0)
        in_b = max((m.unscored_b for m in unsc), default=0)
        lines.append(f"  {family}: {p['pairs']} paired items; unscored (left out): up to {in_a} in the "
                     f"baseline, {in_b} in the run"
                     + (f", {in_b - in_a} more in the run" if in_b > in_a else ""))
    lines += [f"  note: {shown(n)}" for n in result.notes]
    lost = [f for f in c.flips if f["direction"] == "lost"]
    if lost:
        lines.append(f"  {len(lost)} item(s) lost, {len(c.flips) - len(lost)} gained; the first lost:")
        lines += [_flip(f) for f in lost[:3]]
    verdict = {0: "PASSED", 1: "FAILED", 2: "UNDECIDED"}[result.exit_code]
    weak = [ch.metric for ch in result.checks if ch.insufficient]
    if weak and result.exit_code == 0:
        verdict += f" for lack of evidence on {', '.join(weak)} (PASS*: too few items to rule out a larger drop)"
    lines.append(f"gate {verdict} (exit {result.exit_code})")
    return "\n".join(lines)
