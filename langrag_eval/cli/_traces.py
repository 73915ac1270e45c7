"""`thelma --traces`: production traces read into samples, chosen per time window, and the windows'
THELMA means compared against a baseline window."""

from __future__ import annotations

import argparse
import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError

if TYPE_CHECKING:
    from ..types import Sample
# The readers and the statistics are imported when a command runs, so that `thelma --help` stays quick.

__all__ = ["add_trace_options", "format_windows", "trace_samples", "traces_digest", "window_rows"]


def add_trace_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("production traces (instead of FILE)")
    g.add_argument("--traces", metavar="PATH",
                   help="an OpenTelemetry export (OTLP JSON, one request per line, or a folder of them) "
                        "with the OpenInference or GenAI conventions, a LangSmith run export (list_runs as JSON / JSONL) "
                        "or a Langfuse export (traces with their observations, or observations)")
    g.add_argument("--trace-format", choices=("otlp", "langsmith", "langfuse"),
                   help="the export's format (default: read from its first record's keys)")
    g.add_argument("--window", default="1d", help="the window size: 30m, 1h, 1d, 1w (default 1d)")
    g.add_argument("--baseline", metavar="START",
                   help="the window that others are compared with, by its start as printed "
                        "(default: the first window)")
    g.add_argument("--sample-rate", type=float, default=1.0,
                   help="the share of traces scored, chosen by trace id (default 1: all)")
    g.add_argument("--max-per-window", type=int, help="at most this many traces per window (and stratum)")
    g.add_argument("--stratify", metavar="KEY", help="apply --max-per-window per value of this metadata key "
                                                     "(e.g. root: the root span's name)")
    g.add_argument("--alpha", type=float, default=0.05,
                   help="the family-wise error level for flagging a window's drop (default 0.05)")
    g.add_argument("--seed", type=int, default=0, help="the seed of trace sampling and intervals (default 0)")


def trace_samples(args: argparse.Namespace) -> tuple[list[Sample], list[DataError]]:
    """The samples to score from ``--traces`` and the problems met reading them."""
    from ..traces.formats import read_export_samples
    from ..traces.windows import choose, parse_window

    size = parse_window(args.window)
    problems: list[DataError] = []
    samples = read_export_samples(args.traces, getattr(args, "trace_format", None), problems=problems)
    chosen = choose(samples, size, rate=args.sample_rate, cap=args.max_per_window, stratify=args.stratify,
                    seed=args.seed)
    if not chosen and not problems:
        raise DataError("no complete trace in this export; nothing to score", path=args.traces)
    return chosen, problems


def traces_digest(path: str) -> str:
    from ..runtime.identity import file_digest
    from ..traces.otlp import trace_files

    h = hashlib.sha256()
    for f in trace_files(path):
        h.update(f"{f}\0{file_digest(f, what='trace export')}\0".encode())
    return h.hexdigest()


def window_rows(samples: list[Sample], results: list[Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Each window's metric means and its drops against the baseline, from the scored results."""
    from ..traces.windows import compare_windows

    window_of = {s.id: s.metadata["window"] for s in samples}
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        window = window_of.get(getattr(result, "id", None))
        if window is None:
            continue
        values[window]  # a window whose every item is unscored still shows
        for metric, value in result.score_values().items():
            if value is not None:
                values[window][metric].append(float(value))
    if args.baseline and args.baseline not in values:
        raise ConfigError(f"--baseline {args.baseline!r}: no window starts there; windows: "
                          f"{', '.join(sorted(values))}")
    return compare_windows(values, baseline=args.baseline, alpha=args.alpha, seed=args.seed)


def format_windows(rows: list[dict[str, Any]], counts: dict[str, int]) -> str:
    def num(x: float | None) -> str:
        return "   -" if x is None else f"{x:.3f}"
    lines = ["  windows (mean [95% interval]; a drop is flagged against the baseline window):"]
    for row in rows:
        tag = " (baseline)" if row["baseline"] else (
            f"  DROPPED: {', '.join(row['dropped'])}" if row["dropped"] else "")
        lines.append(f"  {row['window']}  {counts.get(row['window'], 0)} traces{tag}")
        for metric, m in row["metrics"].items():
            shift = ""
            if "shift" in m:
                p = m.get("p_holm")
                shift = f"  shift {m['shift']:+.3f}" + ("" if p is None else f", p (Holm) {p:.3g}")
            lines.append(f"    {metric:<5}{num(m['mean'])} [{num(m['low'])}, {num(m['high'])}] n={m['n']}{shift}")
    return "\n".join(lines)
