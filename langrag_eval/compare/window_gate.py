"""The regression gate over monitoring windows: did the latest window of a ``thelma --traces`` run
fall below its baseline window by more than allowed, with confidence?

The two windows hold different traces, so they are compared unpaired (as the windows' drop flags
are): per gated metric, a seeded bootstrap interval of the shift of the mean, each window resampled
on its own, at the gate's Bonferroni-adjusted level, with the two-sided Mann-Whitney p-value beside
it. The rule is the gate's (:mod:`.gate`): a metric fails when even the favourable end of its
interval lies below ``-max_drop``; a window with no scored item, or fewer than ``min_n``, leaves the
metric undecided. The values come from the run's stored summary (each item's scores and window).

>>> from langrag_eval.runtime import RunStore
>>> store = RunStore(":memory:")
>>> run = store.open_run("thelma", {})
>>> samples = [{"id": f"{w}{i}", "window": w, "scores": {"sp1": 1.0 if w == "a" else 0.0}}
...            for w in ("a", "b") for i in range(20)]
>>> store.put_artifact(run, "thelma", {"windows": [{"window": "a", "baseline": True}], "samples": samples})
>>> result = gate_latest_window(store, run, {"sp1": 0.1})
>>> result.exit_code, result.baseline, result.run
(1, 'window a', 'window b')
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from ..runtime import RunStore
from ..stats.unpaired import bootstrap_mean_shift, mann_whitney
from .compare import Comparison, MetricComparison
from .gate import GateResult, _limits, check

__all__ = ["gate_latest_window", "window_values"]


def window_values(store: RunStore, run: str) -> tuple[dict[str, dict[str, list[float]]], str | None, str]:
    """``values[window][metric]`` from a monitoring run's stored summary, the window it was compared
    against, and the run's full id. A run that was not made with ``--traces`` is a ConfigError."""
    run_id = store.run(run)["id"]
    summary = next((a for a in store.artifacts(run_id).values()
                    if isinstance(a, Mapping) and isinstance(a.get("windows"), list)), None)
    if summary is None or not any("window" in s for s in summary.get("samples") or []):
        raise ConfigError(f"run {run_id} has no time windows: gate a window of a `thelma --traces ... --window` run")
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item in summary["samples"]:
        window = item.get("window")
        if window is None:
            continue
        values[window]  # a window whose every item is unscored is still a window
        for metric, value in (item.get("scores") or {}).items():
            if value is not None:
                values[window][metric].append(float(value))
    baseline = next((w["window"] for w in summary["windows"] if w.get("baseline")), None)
    return values, baseline, run_id


def _metric(metric: str, base: Sequence[float], latest: Sequence[float], *, level: float, seed: int,
            resamples: int) -> MetricComparison:
    row: dict[str, Any] = dict(metric=metric, family="thelma", kind="score", pairs=0, n=min(len(base), len(latest)),
                               unscored_a=0, unscored_b=0, level=level)
    if not base or not latest:
        return MetricComparison(**row)
    interval = bootstrap_mean_shift(list(base), list(latest), level=level, resamples=resamples, seed=seed)
    test = mann_whitney(list(base), list(latest))
    mean_a, mean_b = statistics.fmean(base), statistics.fmean(latest)
    return MetricComparison(**row, mean_a=mean_a, mean_b=mean_b, diff=mean_b - mean_a,
                            low=interval[0] if interval else None, high=interval[1] if interval else None,
                            test="mann-whitney", p_value=None if test is None else test.p_value)


def gate_latest_window(store: RunStore, run: str, max_drop: Sequence[str] | Mapping[str, float], *,
                       baseline_window: str | None = None, confidence: float = 0.95, seed: int = 0,
                       resamples: int = 2000, min_n: int = 0) -> GateResult:
    """Gate the latest window of monitoring run ``run`` against its baseline window (or
    ``baseline_window``, a window's start as printed): see the module docstring."""
    limits, level = _limits(max_drop, confidence)
    values, stored_baseline, run_id = window_values(store, run)
    windows = sorted(values)
    base = baseline_window or stored_baseline or windows[0]
    if base not in values:
        raise ConfigError(f"--baseline {base!r}: no window of run {run_id} starts there; windows: {', '.join(windows)}")
    latest = windows[-1]
    if latest == base:
        raise ConfigError(f"run {run_id}: the latest window {latest} is the baseline window; nothing to gate "
                          "(name an earlier window with --baseline)")
    metrics = list(dict.fromkeys([*values[base], *values[latest]]))
    comparison = Comparison(run_a=base, run_b=latest, level=level, seed=seed, resamples=resamples,
                            metrics=[_metric(m, values[base].get(m, []), values[latest].get(m, []), level=level,
                                             seed=seed, resamples=resamples) for m in metrics])
    notes = [f"run {run_id}: window {latest} ({_count(values[latest])} scored) against baseline window {base} "
             f"({_count(values[base])} scored); the windows hold different traces: compared unpaired "
             "(bootstrap interval of the shift of the mean, Mann-Whitney p)"]
    for m in comparison.metrics:
        if m.metric in limits and m.p_value is not None:
            notes.append(f"{m.metric}: Mann-Whitney p {m.p_value:.3g}")
    return GateResult(run=f"window {latest}", baseline=f"window {base}", confidence=confidence,
                      checks=check(comparison, limits, min_n=min_n), comparison=comparison, notes=notes)


def _count(window: Mapping[str, list[float]]) -> str:
    return ", ".join(f"{m} {len(v)}" for m, v in window.items()) or "none"
