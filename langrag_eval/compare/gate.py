"""The regression gate: does run B fall below baseline run A by more than allowed, with confidence?

A metric fails when even the favourable end of its interval for ``B - A`` lies below ``-max_drop``:
``high < -max_drop``. The point estimate alone never fails a gate, so noise does not block a merge,
and a real drop larger than allowed does. With k metrics gated at once each interval is taken at
level ``1 - (1 - confidence) / k`` (Bonferroni), so the chance that any metric fails by noise alone
stays below ``(1 - confidence) / 2`` in all.

Outcomes: ``pass``; ``fail``; ``undecided`` when the runs hold no item scored in both (or too
few for an interval, or fewer than ``min_n``). A pass whose interval still reaches below the allowed
drop passed for lack of evidence, not because the run held up: its message says so, with n, the
interval and the smallest drop the comparison could have detected (``max_drop`` plus the distance
from the estimate to the interval's upper end). Exit codes of ``langrag-eval gate``: 0 all pass, 1 any fail, 2 bad input or
undecided.

>>> parse_max_drop(["accept_rate=0.02", "GR=0.05"])
{'accept_rate': 0.02, 'gr': 0.05}
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import ArgumentError, ConfigError
from ..runtime import RunStore
from .compare import Comparison, MetricComparison, compare_observations, compare_runs
from .observations import Observation, is_scored_rate

__all__ = ["GateCheck", "GateResult", "check", "gate_observations", "gate_runs", "junit_xml", "junit_error",
           "parse_max_drop"]


@dataclass(frozen=True)
class GateCheck:
    metric: str
    max_drop: float
    status: str                    # "pass", "fail" or "undecided"
    message: str
    comparison: MetricComparison | None = None
    insufficient: bool = False     # passed, but the interval cannot rule out a drop beyond max_drop


@dataclass
class GateResult:
    run: str
    baseline: str
    confidence: float
    checks: list[GateCheck]
    comparison: Comparison
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[GateCheck]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def exit_code(self) -> int:
        if self.failed:
            return 1
        return 2 if any(c.status == "undecided" for c in self.checks) else 0


# a score name, or an installed metric's namespaced id (``mypkg/cc``: langrag_eval.run.plugins)
_METRIC = re.compile(r"[a-z0-9_][a-z0-9_.-]*(/[a-z0-9_][a-z0-9_.-]*)?")


def parse_max_drop(specs: Sequence[str] | Mapping[str, float]) -> dict[str, float]:
    """``["accept_rate=0.02", "gr=0.05", "mypkg/cc=0.1"]`` (or a mapping) as ``{metric: allowed
    drop}``; metric names are case-insensitive. Raises ConfigError naming the bad spec."""
    items = list(specs.items()) if isinstance(specs, Mapping) else []
    if not isinstance(specs, Mapping):
        for spec in specs:
            name, sep, value = str(spec).partition("=")
            if not sep or not name.strip():
                raise ConfigError(f"--max-drop {spec!r}: expected METRIC=DROP, e.g. accept_rate=0.02")
            try:
                items.append((name, float(value)))
            except ValueError:
                raise ConfigError(f"--max-drop {spec!r}: {value!r} is not a number") from None
    out: dict[str, float] = {}
    for name, drop in items:
        metric = str(name).strip().lower()
        if not _METRIC.fullmatch(metric):
            raise ConfigError(f"--max-drop {name}: a metric is a score name, e.g. accept_rate, gr or "
                              "an installed package's mypkg/cc")
        if not 0.0 <= float(drop) < float("inf"):
            raise ConfigError(f"--max-drop {name}={drop}: the allowed drop must be a number >= 0")
        out[metric] = float(drop)
    if not out:
        raise ConfigError("give at least one --max-drop METRIC=DROP, e.g. --max-drop accept_rate=0.02")
    return out


def _pct(m: MetricComparison, x: float) -> str:
    return f"{100 * x:+.1f} pts" if m.kind == "binary" else f"{x:+.3f}"


def check(comparison: Comparison, max_drop: Mapping[str, float], *, min_n: int = 0) -> list[GateCheck]:
    """Apply the limits to a comparison computed at the gate's (adjusted) level; a metric scored in
    both runs on fewer than ``min_n`` items is undecided."""
    checks = []
    for metric, drop in max_drop.items():
        try:
            m = comparison.metric(metric)
        except ArgumentError:
            one_sided = {n for p in comparison.pairing.values()
                         for n in (*p.get("metrics_only_a", ()), *p.get("metrics_only_b", ()))}
            why = ("the two runs do not both have this metric" if metric in one_sided
                   else "unknown metric: neither run has it")
            raise ConfigError(f"--max-drop {metric}: {why}; compared: "
                              f"{', '.join(x.metric for x in comparison.metrics)}") from None
        if m.high is None or m.diff is None:
            why = "no item scored in both runs" if m.n == 0 else f"only {m.n} item(s) scored in both runs"
            checks.append(GateCheck(metric, drop, "undecided", f"cannot decide: {why}", m))
            continue
        if m.n < min_n:
            checks.append(GateCheck(metric, drop, "undecided", f"cannot decide: only {m.n} item(s) scored in "
                                    f"both runs, --min-n asks for {min_n}", m))
            continue
        low = _pct(m, m.low if m.low is not None else m.high)
        span = f"change {_pct(m, m.diff)}, interval [{low}, {_pct(m, m.high)}]"
        if m.high < -drop:
            checks.append(GateCheck(metric, drop, "fail", f"dropped by more than {_pct(m, drop)[1:]}: "
                                    f"{span}", m))
        elif m.low is not None and m.low < -drop:
            detectable = drop + (m.high - m.diff)
            checks.append(GateCheck(metric, drop, "pass", f"{span}; insufficient evidence: with n={m.n} the "
                                    f"interval still reaches drops larger than the allowed {_pct(m, drop)[1:]}; "
                                    f"the smallest drop this comparison could have detected is about "
                                    f"{_pct(m, detectable)[1:]} (more items narrow it; --min-n N requires "
                                    f"N items)", m, insufficient=True))
        else:
            checks.append(GateCheck(metric, drop, "pass", span, m))
    return checks


def _limits(max_drop: Sequence[str] | Mapping[str, float],
            confidence: float) -> tuple[dict[str, float], float]:
    limits = parse_max_drop(max_drop)
    if not 0.5 <= confidence < 1.0:
        raise ConfigError(f"--confidence {confidence}: expected a level from 0.5 to below 1, e.g. 0.95")
    return limits, 1.0 - (1.0 - confidence) / len(limits)


def gate_runs(store: RunStore, run: str, baseline: str, max_drop: Sequence[str] | Mapping[str, float], *,
              confidence: float = 0.95, seed: int = 0, resamples: int = 2000,
              agent: str | None = None, agent_b: str | None = None, min_n: int = 0) -> GateResult:
    """Gate ``run`` against ``baseline`` in ``store``: see the module docstring."""
    limits, level = _limits(max_drop, confidence)
    comparison = compare_runs(store, baseline, run, level=level, seed=seed, resamples=resamples, agent=agent,
                              agent_b=agent_b)
    return _result(comparison, limits, confidence, min_n=min_n)


def gate_observations(baseline: Mapping[str, Sequence[Observation]], run: Mapping[str, Sequence[Observation]],
                      max_drop: Sequence[str] | Mapping[str, float], *, confidence: float = 0.95,
                      seed: int = 0, resamples: int = 2000) -> GateResult:
    """:func:`gate_runs` on observations already loaded (see :func:`load_observations`)."""
    limits, level = _limits(max_drop, confidence)
    comparison = compare_observations(baseline, run, run_a="baseline", run_b="run", level=level, seed=seed,
                                      resamples=resamples)
    return _result(comparison, limits, confidence)


def _result(comparison: Comparison, limits: dict[str, float], confidence: float, *, min_n: int = 0) -> GateResult:
    notes = []
    for family, p in comparison.pairing.items():
        if p["only_a"] or p["only_b"]:
            notes.append(f"{family}: {p['only_a']} item(s) only in the baseline, "
                         f"{p['only_b']} only in the run")
        for side, key in (("baseline", "metrics_only_a"), ("run", "metrics_only_b")):
            if p.get(key):
                notes.append(f"{family}: only the {side} computed {', '.join(p[key])}; not compared")
        if p["by"] == "id":
            notes.append(f"{family}: paired by item id (a run has no item index: made before it existed)")
    for m in comparison.metrics:
        # Unscored items are left out of the quality metrics: a change that makes answers ungradable
        # could pass a gate on accept rate alone. Said aloud even when not gated.
        if is_scored_rate(m.metric) and m.metric not in limits and m.high is not None and m.high < 0:
            notes.append(f"WARNING: the run has more unscored items than the baseline ({m.metric} "
                         f"{_pct(m, m.diff or 0.0)}, interval up to {_pct(m, m.high)}); "
                         f"gate it with --max-drop {m.metric}=0")
    return GateResult(run=comparison.run_b, baseline=comparison.run_a, confidence=confidence,
                      checks=check(comparison, limits, min_n=min_n), comparison=comparison, notes=notes)


def junit_xml(result: GateResult) -> str:
    """The gate as a JUnit XML report: one test case per gated metric; a fail is a ``failure``,
    an undecided metric an ``error``."""
    suite = ET.Element("testsuite", name="langrag-eval gate", tests=str(len(result.checks)),
                       failures=str(len(result.failed)),
                       errors=str(sum(c.status == "undecided" for c in result.checks)), skipped="0")
    props = ET.SubElement(suite, "properties")
    for name, value in (("run", result.run), ("baseline", result.baseline),
                        ("confidence", str(result.confidence))):
        ET.SubElement(props, "property", name=name, value=value)
    for c in result.checks:
        family = c.comparison.family if c.comparison else "metric"
        case = ET.SubElement(suite, "testcase", classname=f"langrag_eval.gate.{family}",
                             name=f"{c.metric} drops by at most {c.max_drop:g}")
        if c.status == "fail":
            ET.SubElement(case, "failure", message=c.message, type="regression").text = c.message
        elif c.status == "undecided":
            ET.SubElement(case, "error", message=c.message, type="undecided").text = c.message
        else:
            ET.SubElement(case, "system-out").text = c.message
    root = ET.Element("testsuites", name="langrag-eval", tests=suite.get("tests", "0"),
                      failures=suite.get("failures", "0"), errors=suite.get("errors", "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def junit_error(message: str) -> str:
    """A JUnit XML report of a gate that could not run (bad input): one test case in error, so a
    CI system shows why instead of a missing file."""
    suite = ET.Element("testsuite", name="langrag-eval gate", tests="1", failures="0", errors="1",
                       skipped="0")
    case = ET.SubElement(suite, "testcase", classname="langrag_eval.gate", name="gate input")
    ET.SubElement(case, "error", message=message, type="bad-input").text = message
    root = ET.Element("testsuites", name="langrag-eval", tests="1", failures="0", errors="1")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
