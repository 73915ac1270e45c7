"""Small inline-SVG charts for the HTML report: no JavaScript, no network, every label escaped.

>>> "<script>" in bar_chart(["<script>"], [1.0])
False
"""

from __future__ import annotations

import html
import math
from typing import Sequence

__all__ = ["bar_chart", "difference_chart", "heatmap", "interval_chart", "measure_bar", "time_series"]

_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


# embeddings, overrides and isolates: SVG text has no <bdi>, so a label that holds one (U+202E in
# an agent's name) would reorder the labels after it; they are dropped from labels
_BIDI = dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def _e(text: object) -> str:
    return html.escape(str(text).translate(_BIDI), quote=True)


def _num(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def _tick(v: float, span: float) -> str:
    """An axis label precise enough that the two ends of a narrow axis read differently."""
    digits = max(0, min(6, 2 - math.floor(math.log10(span)))) if span > 0 else 1
    return f"{v:,.{digits}f}"


def _percent(v: float) -> str:
    return f"{v:.0%}"


def bar_chart(labels: Sequence[str], values: Sequence[float], *, title: str = "", width: int = 420,
              bar_height: int = 22, color: str = "#3b6ea8", max_value: float | None = None,
              percent: bool = False) -> str:
    """Horizontal bars, one per label, value printed at the bar's end (as a percentage with
    ``percent``, for shares on 0..1)."""
    show = _percent if percent else _num
    top = max_value if max_value is not None else max([v for v in values if math.isfinite(v)] or [1.0])
    top = top or 1.0
    label_w, pad = 150, 6
    height = len(labels) * (bar_height + pad) + (24 if title else 4)
    y0 = 20 if title else 2
    rows = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" {_FONT}>']
    if title:
        rows.append(f'<text x="0" y="14" font-weight="bold">{_e(title)}</text>')
    for i, (label, value) in enumerate(zip(labels, values)):
        y = y0 + i * (bar_height + pad)
        w = max(0.0, (width - label_w - 60) * (value / top)) if math.isfinite(value) else 0.0
        rows.append(f'<text x="0" y="{y + bar_height * 0.7:.1f}">{_e(str(label)[:28])}</text>')
        rows.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_height}" fill="{color}">'
                    f'<title>{_e(label)}: {show(value)}</title></rect>')
        rows.append(f'<text x="{label_w + w + 4:.1f}" y="{y + bar_height * 0.7:.1f}">{show(value)}</text>')
    rows.append("</svg>")
    return "".join(rows)


def heatmap(matrix: Sequence[Sequence[float | None]], row_labels: Sequence[str], col_labels: Sequence[str],
            *, title: str = "", cell: int = 52, fmt: str = "{:.0%}",
            notes: Sequence[Sequence[str]] | None = None, empty: str = "") -> str:
    """A matrix of shares (0..1) as coloured cells. A None cell is grey and shows ``empty`` (the
    diagonal is always grey, marked with a dash); ``notes``: a second, smaller line per cell."""
    label_w, head_h = 130, 100
    width = label_w + cell * len(col_labels) + head_h  # room for the last column's slanted label
    height = head_h + cell * len(row_labels) + (20 if title else 0)
    y0 = head_h + (20 if title else 0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" {_FONT}>']
    if title:
        out.append(f'<text x="0" y="14" font-weight="bold">{_e(title)}</text>')
    for j, label in enumerate(col_labels):
        x = label_w + j * cell + cell / 2
        out.append(f'<text transform="translate({x:.1f},{y0 - 6}) rotate(-40)">{_e(str(label)[:20])}'
                   f'<title>{_e(label)}</title></text>')
    for i, label in enumerate(row_labels):
        y = y0 + i * cell
        out.append(f'<text x="0" y="{y + cell * 0.6:.1f}">{_e(str(label)[:18])}<title>{_e(label)}</title></text>')
        for j in range(len(col_labels)):
            v = matrix[i][j]
            x = label_w + j * cell
            if v is None or not math.isfinite(v):
                text = "—" if i == j and row_labels[i] == col_labels[j] else empty
                out.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="#e4e4e4"/>')
                if text:
                    out.append(f'<text x="{x + cell / 2 - 1:.1f}" y="{y + cell * 0.58:.1f}" text-anchor="middle" '
                               f'fill="#666" font-size="10">{_e(text)}</text>')
                continue
            shade = int(255 - 175 * max(0.0, min(1.0, v)))
            note = notes[i][j] if notes is not None else ""
            out.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                       f'fill="rgb({shade},{shade + 20 if shade < 235 else 255},255)">'
                       f'<title>{_e(row_labels[i])} vs {_e(col_labels[j])}: {fmt.format(v)}'
                       f'{" (" + _e(note) + ")" if note else ""}</title></rect>')
            out.append(f'<text x="{x + cell / 2 - 1:.1f}" y="{y + cell * (0.45 if note else 0.58):.1f}" '
                       f'text-anchor="middle">{_e(fmt.format(v))}</text>')
            if note:
                out.append(f'<text x="{x + cell / 2 - 1:.1f}" y="{y + cell * 0.78:.1f}" text-anchor="middle" '
                           f'font-size="10" fill="#444">{_e(note)}</text>')
    out.append("</svg>")
    return "".join(out)


def interval_chart(labels: Sequence[str], mids: Sequence[float], lows: Sequence[float],
                   highs: Sequence[float], *, title: str = "", width: int = 460,
                   bounds: tuple[float, float] | None = None, percent: bool = False) -> str:
    """Points with horizontal confidence intervals (rankings with their uncertainty), a legend
    below. ``bounds``: the axis's ends (default: the data's, widened when every value is equal);
    ``percent``: shares on 0..1 labelled as percentages."""
    finite = [v for v in list(lows) + list(highs) + list(mids) if math.isfinite(v)]
    lo, hi = bounds if bounds is not None else (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi - lo < 1e-9:  # every value equal: centre them on an axis that still reads
        pad = max(abs(lo) * 0.01, 1.0)
        lo, hi = lo - pad, hi + pad
    span = hi - lo
    label_w, row = 190, 24
    y0 = 22 if title else 4
    height = y0 + row * len(labels) + 36
    plot_w = width - label_w - 20

    def x(v: float) -> float:
        return label_w + plot_w * (v - lo) / span

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" {_FONT}>']
    if title:
        out.append(f'<text x="0" y="14" font-weight="bold">{_e(title)}</text>')
    bottom = y0 + row * len(labels)
    out.append(f'<line x1="{label_w}" x2="{label_w + plot_w}" y1="{bottom}" y2="{bottom}" stroke="#999"/>')
    for i, label in enumerate(labels):
        y = y0 + i * row + row / 2
        out.append(f'<text x="0" y="{y + 4:.1f}">{_e(str(label)[:30])}</text>')
        if all(math.isfinite(v) for v in (lows[i], highs[i])):
            out.append(f'<line x1="{x(lows[i]):.1f}" x2="{x(highs[i]):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                       'stroke="#555" stroke-width="2"/>')
            for end in (lows[i], highs[i]):
                out.append(f'<line x1="{x(end):.1f}" x2="{x(end):.1f}" y1="{y - 5:.1f}" y2="{y + 5:.1f}" '
                           'stroke="#555" stroke-width="2"/>')
        if math.isfinite(mids[i]):
            show = _percent if percent else _num
            out.append(f'<circle cx="{x(mids[i]):.1f}" cy="{y:.1f}" r="5" fill="#c0392b">'
                       f'<title>{_e(label)}: {show(mids[i])} [{show(lows[i])}, {show(highs[i])}]</title>'
                       '</circle>')
    tick = _percent if percent else (lambda v: _tick(v, span))
    out.append(f'<text x="{label_w}" y="{bottom + 14}">{tick(lo)}</text>')
    out.append(f'<text x="{label_w + plot_w / 2:.1f}" y="{bottom + 14}" text-anchor="middle">'
               f'{tick((lo + hi) / 2)}</text>')
    out.append(f'<text x="{width - 20}" y="{bottom + 14}" text-anchor="end">{tick(hi)}</text>')
    out.append(f'<circle cx="{label_w + 5}" cy="{height - 8}" r="4" fill="#c0392b"/>'
               f'<text x="{label_w + 14}" y="{height - 4}" font-size="11">estimate</text>'
               f'<line x1="{label_w + 80}" x2="{label_w + 110}" y1="{height - 8}" y2="{height - 8}" '
               f'stroke="#555" stroke-width="2"/><text x="{label_w + 116}" y="{height - 4}" font-size="11">'
               'interval</text>')
    out.append("</svg>")
    return "".join(out)


def measure_bar(value: float | None, low: float | None, high: float | None, threshold: float | None,
                direction: str | None, *, width: int = 180) -> str:
    """One share (0..1) of the judge card: its interval as a bar, the estimate as a dot, the
    threshold as a vertical tick; green when the whole interval is on the right side of the
    threshold, red when the estimate is on the wrong side, amber otherwise.

    >>> "<circle" in measure_bar(0.8, 0.7, 0.9, 0.6, "min")
    True
    """
    h, pad = 18, 4

    def x(v: float) -> float:
        return pad + (width - 2 * pad) * max(0.0, min(1.0, v))

    def good(v: float) -> bool:
        return v >= threshold if direction == "min" else v <= threshold  # type: ignore[operator]

    color = "#777"
    if threshold is not None and direction in ("min", "max") and value is not None:
        color = ("#2e8b57" if low is not None and high is not None and good(low) and good(high)
                 else "#c0392b" if not good(value) else "#d39e00")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{h}" viewBox="0 0 {width} {h}" class="measure">',
           f'<rect x="{pad}" y="{h / 2 - 1}" width="{width - 2 * pad}" height="2" fill="#ddd"/>']
    if low is not None and high is not None:
        out.append(f'<rect x="{x(low):.1f}" y="{h / 2 - 4}" width="{max(1.0, x(high) - x(low)):.1f}" height="8" '
                   f'fill="{color}" opacity="0.45"/>')
    if threshold is not None:
        out.append(f'<line x1="{x(threshold):.1f}" x2="{x(threshold):.1f}" y1="1" y2="{h - 1}" stroke="#222" '
                   'stroke-width="2"/>')
    if value is not None:
        out.append(f'<circle cx="{x(value):.1f}" cy="{h / 2}" r="4" fill="{color}"/>')
    out.append("</svg>")
    return "".join(out)


def difference_chart(labels: Sequence[str], diffs: Sequence[float | None], lows: Sequence[float | None],
                     highs: Sequence[float | None], *, title: str = "", width: int = 520,
                     unit: str = "", min_half: float = 0.05) -> str:
    """Differences (B - A) with their intervals around a zero line: red where the whole interval
    lies below zero, green where above, grey where it spans zero. Missing values are left blank.

    >>> "<line" in difference_chart(["accept_rate"], [-0.08], [-0.12], [-0.04])
    True
    """
    values = [v for v in list(diffs) + list(lows) + list(highs) if v is not None and math.isfinite(v)]
    bound = max(max([abs(v) for v in values] + [0.0]) * 1.1, min_half)
    label_w, row = 170, 24
    y0 = 22 if title else 4
    height = y0 + row * len(labels) + 20
    plot_w = width - label_w - 20

    def x(v: float) -> float:
        return label_w + plot_w * (v + bound) / (2 * bound)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" {_FONT}>']
    if title:
        out.append(f'<text x="0" y="14" font-weight="bold">{_e(title)}</text>')
    out.append(f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{y0}" y2="{height - 18}" stroke="#999" '
               'stroke-dasharray="4 3"/>')
    for i, label in enumerate(labels):
        y = y0 + i * row + row / 2
        out.append(f'<text x="0" y="{y + 4:.1f}">{_e(str(label)[:26])}</text>')
        lo, hi, mid = lows[i], highs[i], diffs[i]
        if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
            color = "#c0392b" if hi < 0 else "#2e8b57" if lo > 0 else "#555"
            out.append(f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                       f'stroke="{color}" stroke-width="3"/>')
        if mid is not None and math.isfinite(mid):
            span = "" if lo is None or hi is None else f" [{_num(lo)}, {_num(hi)}]"
            out.append(f'<circle cx="{x(mid):.1f}" cy="{y:.1f}" r="5" fill="#222">'
                       f'<title>{_e(label)}: {_num(mid)}{_e(unit)}{span}</title></circle>')
    out.append(f'<text x="{label_w}" y="{height - 2}">{_num(-bound)}</text>')
    out.append(f'<text x="{x(0):.1f}" y="{height - 2}" text-anchor="middle">0</text>')
    out.append(f'<text x="{width - 20}" y="{height - 2}" text-anchor="end">{_num(bound)}</text>')
    out.append("</svg>")
    return "".join(out)


def time_series(labels: Sequence[str], means: Sequence[float | None], lows: Sequence[float | None],
                highs: Sequence[float | None], *, flagged: Sequence[bool] = (), baseline: int | None = None,
                title: str = "", width: int = 560, height: int = 200,
                bounds: tuple[float, float] = (0.0, 1.0)) -> str:
    """One metric over time windows: each window's mean (a dot, joined by a line) with its interval
    (a vertical bar); a flagged window in red with a triangle above it, the baseline window ringed.
    Labels are the windows' starts, shown at the two ends and under flagged windows.

    >>> svg = time_series(["d1", "d2"], [0.9, 0.4], [0.8, 0.3], [1.0, 0.5], flagged=[False, True], baseline=0)
    >>> svg.count('class="window flagged"'), svg.count('class="window"')
    (1, 1)
    """
    lo, hi = bounds
    left, right, top, bottom = 36, 12, 22 if title else 8, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(1, len(labels))

    def x(i: int) -> float:
        return left + plot_w * ((i + 0.5) / n)

    def y(v: float) -> float:
        return top + plot_h * (1 - (min(hi, max(lo, v)) - lo) / (hi - lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="series" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {_FONT}>']
    if title:
        out.append(f'<text x="0" y="14" font-weight="bold">{_e(title)}</text>')
    for v in (lo, (lo + hi) / 2, hi):
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e4e4e4"/>'
                   f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10">{_tick(v, hi - lo)}</text>')
    points = [(x(i), y(m)) for i, m in enumerate(means) if m is not None and math.isfinite(m)]
    if len(points) > 1:
        out.append('<polyline fill="none" stroke="#3b6ea8" stroke-width="1.5" points="'
                   + " ".join(f"{a:.1f},{b:.1f}" for a, b in points) + '"/>')
    for i, label in enumerate(labels):
        m, l, h = means[i], lows[i], highs[i]
        bad = bool(flagged[i]) if i < len(flagged) else False
        color = "#c0392b" if bad else "#3b6ea8"
        out.append(f'<g class="window{" flagged" if bad else ""}">')
        if l is not None and h is not None and math.isfinite(l) and math.isfinite(h):
            out.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(h):.1f}" y2="{y(l):.1f}" stroke="{color}" '
                       'stroke-width="2"/>')
        if m is not None and math.isfinite(m):
            span = "" if l is None or h is None else f" [{_num(l)}, {_num(h)}]"
            note = " (flagged: dropped against the baseline)" if bad else " (baseline)" if i == baseline else ""
            ring = ' stroke="#222" stroke-width="2"' if i == baseline else ""
            out.append(f'<circle cx="{x(i):.1f}" cy="{y(m):.1f}" r="{5 if bad else 4}" fill="{color}"{ring}>'
                       f'<title>{_e(label)}: {_num(m)}{span}{note}</title></circle>')
        if bad:
            out.append(f'<path d="M{x(i) - 5:.1f},{top + 2} L{x(i) + 5:.1f},{top + 2} L{x(i):.1f},{top + 10} Z" '
                       f'fill="#c0392b"/>')
        out.append("</g>")
        if bad or i in (0, len(labels) - 1):
            anchor = "start" if i == 0 else "end" if i == len(labels) - 1 else "middle"
            fill = ' fill="#c0392b"' if bad else ""
            out.append(f'<text x="{x(i):.1f}" y="{height - 20}" text-anchor="{anchor}" font-size="10"{fill}>'
                       f'{_e(str(label)[:16])}</text>')
    out.append(f'<circle cx="{left + 5}" cy="{height - 6}" r="4" fill="#3b6ea8"/><text x="{left + 13}" '
               f'y="{height - 2}" font-size="11">mean, 95 % interval</text>'
               f'<path d="M{left + 150},{height - 10} L{left + 160},{height - 10} L{left + 155},{height - 2} Z" '
               f'fill="#c0392b"/><text x="{left + 165}" y="{height - 2}" font-size="11">flagged drop</text>')
    out.append("</svg>")
    return "".join(out)
