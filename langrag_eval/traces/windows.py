"""Production traffic in time windows: which traces to score, each window's means with intervals,
and the windows whose metric fell against a baseline window.

Which traces are scored is decided by a digest of each trace id with a seed, never by the order they
were read: a trace kept once is kept again when the command runs over a longer export, so a re-run
pays only for new traces. ``rate`` keeps that share of traces; ``cap`` keeps at most that many per
window (per stratum when ``stratify`` names a metadata key), the ones with the lowest digests.

A window's items differ from the baseline's, so a drop is tested unpaired: the two-sided Mann-Whitney
U test per metric, Holm's adjustment across the metrics of a window, and a bootstrap interval of the
shift of the mean (:mod:`langrag_eval.stats.unpaired`). A window is flagged for a metric when its mean
is lower and the adjusted p-value is below ``alpha``.

>>> parse_window("1h"), parse_window("7d")
(datetime.timedelta(seconds=3600), datetime.timedelta(days=7))
>>> window_start("2026-11-28T06:40:00+00:00", parse_window("1h")).isoformat()
'2026-11-28T06:00:00+00:00'
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import ConfigError
from ..stats.intervals import mean_interval
from ..stats.paired import holm
from ..stats.unpaired import bootstrap_mean_shift, mann_whitney
from ..types import Sample

__all__ = ["choose", "compare_windows", "parse_window", "window_start"]

_SIZE = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_window(text: str) -> timedelta:
    """``30m``, ``1h``, ``1d``, ``1w`` as a duration; anything else is a one-line ConfigError."""
    m = _SIZE.match(text or "")
    if not m or int(m[1]) == 0:
        raise ConfigError(f"--window {text!r}: expected a positive number and a unit, e.g. 30m, 1h, 1d, 1w")
    return timedelta(**{_UNIT[m[2]]: int(m[1])})


def window_start(started: str | datetime, size: timedelta) -> datetime:
    """The start of the window holding ``started`` (windows are laid from the Unix epoch, in UTC)."""
    at = datetime.fromisoformat(started) if isinstance(started, str) else started
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    steps = (at - _EPOCH) // size
    return _EPOCH + steps * size


def _digest(trace_id: str, seed: int) -> float:
    raw = hashlib.sha256(f"{seed}:{trace_id}".encode()).digest()
    return int.from_bytes(raw[:8], "big") / 2**64


def choose(samples: Iterable[Sample], size: timedelta, *, rate: float = 1.0, cap: int | None = None,
           stratify: str | None = None, seed: int = 0) -> list[Sample]:
    """The samples to score, in their order; each has ``metadata["window"]`` set to its window's start.

    With ``cap``, each window (and stratum) keeps only its ``cap`` lowest digests as the samples
    stream by, so memory is bounded by ``cap`` times the windows and strata, whatever the export's size."""
    if not 0 < rate <= 1:
        raise ConfigError(f"--sample-rate {rate}: must lie in (0, 1]")
    if cap is not None and cap < 1:
        raise ConfigError(f"--max-per-window {cap}: must be at least 1")
    # per (window, stratum): a heap of (-digest, order, sample), its root the kept sample with the
    # highest digest, the first to go when a lower digest comes
    groups: dict[tuple[str, str], list[tuple[float, int, Sample]]] = defaultdict(list)
    for order, sample in enumerate(samples):
        d = _digest(str(sample.metadata.get("trace_id") or sample.id), seed)
        if d >= rate:
            continue
        window = window_start(sample.metadata["started"], size).isoformat()
        group = groups[(window, str(sample.metadata.get(stratify)) if stratify else "")]
        if cap is None or len(group) < cap:
            heapq.heappush(group, (-d, order, sample))
        elif -d > group[0][0]:
            heapq.heapreplace(group, (-d, order, sample))
    kept = sorted((order, window, sample) for (window, _), group in groups.items() for _, order, sample in group)
    return [s.model_copy(update={"metadata": {**s.metadata, "window": window}}) for _, window, s in kept]


def compare_windows(values: Mapping[str, Mapping[str, Sequence[float]]], *, baseline: str | None = None,
                    alpha: float = 0.05, seed: int = 0, bounds: tuple[float, float] = (0.0, 1.0)
                    ) -> list[dict[str, Any]]:
    """One row per window (in time order) from ``values[window][metric]`` (the scored values): each
    metric's mean with its interval and, against the baseline window (default: the first), the shift
    of the mean with its interval, the p-value, the Holm-adjusted p-value and whether it dropped.
    Intervals are kept within ``bounds``, the scale of the metrics (THELMA's lie in [0, 1])."""
    windows = sorted(values)
    if not windows:
        return []
    base = baseline or windows[0]
    if base not in values:
        raise ConfigError(f"--baseline {baseline!r}: no window starts there; windows: {', '.join(windows)}")
    rows = []
    for window in windows:
        metrics: dict[str, Any] = {}
        tests: list[tuple[str, float]] = []
        for metric, scored in values[window].items():
            estimate = mean_interval(list(scored))
            low, high = bounds
            entry: dict[str, Any] = {"n": estimate.n, "mean": estimate.value,
                                     "low": None if estimate.low is None else max(low, estimate.low),
                                     "high": None if estimate.high is None else min(high, estimate.high)}
            reference = list(values[base].get(metric, []))
            if window != base and reference and scored:
                test = mann_whitney(reference, list(scored))
                entry["shift"] = estimate.value - mean_interval(reference).value  # type: ignore[operator]
                entry["shift_interval"] = bootstrap_mean_shift(reference, list(scored), seed=seed)
                entry["p"] = None if test is None else test.p_value
                if test is not None:
                    tests.append((metric, test.p_value))
            metrics[metric] = entry
        for (metric, _), adjusted in zip(tests, holm([p for _, p in tests])):
            entry = metrics[metric]
            entry["p_holm"] = adjusted
            entry["dropped"] = adjusted < alpha and entry["shift"] < 0
        rows.append({"window": window, "baseline": window == base, "metrics": metrics,
                     "dropped": sorted(m for m, e in metrics.items() if e.get("dropped"))})
    return rows
