"""The HTML report of one run: a single self-contained file (inline CSS and SVG, no script, no
network) built from what the run store holds: the run's settings and judge, the artifacts that the
capabilities stored (``vrag``, ``thelma``, ``tournament``, ``grammar``), the judge's card (the run's
own ``judge_card`` when it is an audit, else the latest audit of the same judge in the store), the
Unscored judgments with their reasons, and usage. Every string that came from a model or a user is escaped by the template
engine (autoescape on); charts escape their own labels.

>>> from langrag_eval.runtime import RunStore
>>> store = RunStore(":memory:")
>>> run = store.open_run("demo", {"file": "x.csv"}, judge="scripted")
>>> store.put_artifact(run, "vrag", {"items": 1, "scored": 1, "distribution": {"4": 1},
...                                  "accept_rate": 1.0, "threshold": 4})
>>> "<script>" in build_report(store, run)
False
"""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..files import write_text_atomic
from ..audit.card import ARTIFACT as CARD, JudgeCard, rows as card_rows
from ..models import TINY_MODEL_WARNING
from ..runtime import RunStore
from ..runtime.items import current_judgments
from .svg import bar_chart, difference_chart, heatmap, interval_chart

__all__ = ["build_report", "write_report", "SECTIONS"]

SECTIONS = ("settings", "judge", "vrag", "thelma", "tournament", "grammar", "unscored", "usage")
_TINY_IDS = ("local:gemma-3-270m",)

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("langrag_eval.report", "templates"),
                          # artifacts from older or partial runs may lack optional keys: render "—"
                          autoescape=True, undefined=jinja2.ChainableUndefined,
                          trim_blocks=True, lstrip_blocks=True)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or isinstance(value, jinja2.Undefined):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "—" if not math.isfinite(value) else f"{value:.{digits}g}"
    return str(value)


def _pct(value: Any) -> str:
    return "—" if not isinstance(value, (int, float)) or not math.isfinite(value) else f"{value:.0%}"


_ENV.filters["fmt"] = _fmt
_ENV.filters["pct"] = _pct


def _vrag_charts(vrag: dict[str, Any]) -> dict[str, Markup]:
    dist = vrag.get("distribution") or {}
    charts = {"distribution": Markup(bar_chart([f"score {k}" for k in "12345"],
                                               [float(dist.get(k, 0)) for k in "12345"],
                                               title="Score distribution"))}
    subjects = vrag.get("subjects") or {}
    if subjects:
        names = sorted(subjects)
        charts["subjects"] = Markup(bar_chart(names, [float(subjects[n].get("accept_rate") or 0.0)
                                                      for n in names],
                                              title="Accept rate", max_value=1.0, color="#2e8b57"))
    agreement = vrag.get("agreement")
    if agreement and agreement.get("confusion"):
        names = agreement.get("names", ["judge", "human"])
        matrix = agreement["confusion"]
        total = sum(sum(r) for r in matrix) or 1
        labels = [str(x) for x in agreement.get("labels", range(1, len(matrix) + 1))]
        charts["confusion"] = Markup(heatmap([[c / total for c in row] for row in matrix], labels, labels,
                                             title=f"Confusion: rows {names[0]}, columns {names[1]}"))
    return charts


def _thelma_charts(thelma: dict[str, Any]) -> dict[str, Markup]:
    metrics = thelma.get("metrics") or {}
    keys = [k for k in metrics if metrics[k].get("mean") is not None]
    if not keys:
        return {}
    return {"means": Markup(interval_chart(
        [metrics[k].get("name", k) for k in keys], [metrics[k]["mean"] for k in keys],
        [max(0.0, metrics[k]["mean"] - (metrics[k].get("std") or 0.0)) for k in keys],
        [min(1.0, metrics[k]["mean"] + (metrics[k].get("std") or 0.0)) for k in keys],
        title="Mean ± one standard deviation"))}


def _tournament_charts(tour: dict[str, Any]) -> dict[str, Markup]:
    charts: dict[str, Markup] = {}
    ranking = tour.get("ranking") or []
    if ranking:
        charts["ranking"] = Markup(interval_chart(
            [r["agent"] for r in ranking], [r.get("bt_rating") or float("nan") for r in ranking],
            [r.get("bt_low") if r.get("bt_low") is not None else float("nan") for r in ranking],
            [r.get("bt_high") if r.get("bt_high") is not None else float("nan") for r in ranking],
            title="Bradley-Terry rating (Elo scale) with bootstrap interval"))
    matrix = tour.get("win_matrix") or {}
    agents = tour.get("agents") or sorted(matrix)
    if matrix and agents:
        rows = []
        for a in agents:
            row = []
            for b in agents:
                cell = (matrix.get(a) or {}).get(b)
                row.append(None if a == b or not cell or not cell.get("games") else cell.get("win"))
            rows.append(row)
        charts["wins"] = Markup(heatmap(rows, agents, agents, title="Win share: row agent against column"))
    return charts


def _unscored(store: RunStore, run_id: str, artifacts: dict[str, Any]) -> list[dict[str, str]]:
    items = []
    for j in current_judgments(store, run_id):
        if j["scored"]:
            continue
        result = j["result"] if isinstance(j["result"], dict) else {}
        items.append({"item": j["item"], "task": j["task"], "cause": str(result.get("cause", "")),
                      "reason": str(result.get("reason", ""))})
    thelma = artifacts.get("thelma") or {}
    for sample in thelma.get("samples") or []:
        for metric, info in (sample.get("unscored") or {}).items():
            items.append({"item": str(sample.get("id")), "task": f"thelma/{metric}",
                          "cause": str(info.get("cause", "")), "reason": str(info.get("reason", ""))})
    seen, unique = set(), []
    for it in items:
        key = (it["item"], it["task"], it["reason"])
        if key not in seen:
            seen.add(key)
            unique.append(it)
    return unique


def _comparison(store: RunStore, run_id: str, baseline: str) -> dict[str, Any]:
    from ..compare import compare_runs  # only reports with a baseline need the statistics

    c = compare_runs(store, baseline, run_id)
    data = c.as_dict()
    charts = []
    for title, rows in (("Rates and 0-1 scores: run minus baseline, 95 % interval",
                         [m for m in c.metrics if m.metric != "grade"]),
                        ("Mean grade (1-5): run minus baseline, 95 % interval",
                         [m for m in c.metrics if m.metric == "grade"])):
        if rows:
            charts.append(Markup(difference_chart(
                [m.metric for m in rows], [m.diff for m in rows], [m.low for m in rows],
                [m.high for m in rows], title=title)))
    data["charts"] = charts
    return data


def judge_card(store: RunStore, run_id: str, judge: str) -> tuple[JudgeCard, str] | None:
    """The card shown for a run: its own, or the newest finished audit of ``judge`` in the store,
    with the id of the audit run it came from."""
    own = store.get_artifact(run_id, CARD)
    if own is not None:
        return JudgeCard.model_validate(own), run_id
    for r in store.runs():  # newest first
        if r["kind"] == "judge-audit" and r["judge"] == judge and r["finished"]:
            data = store.get_artifact(r["id"], CARD)
            if data is not None:
                return JudgeCard.model_validate(data), r["id"]
    return None


def _card_context(found: tuple[JudgeCard, str] | None) -> dict[str, Any] | None:
    if found is None:
        return None
    card, source = found
    return {"card": card, "source": source, "rows": card_rows(card)}


def build_report(store: RunStore, run_id: str, *, baseline: str | None = None) -> str:
    """The report of run ``run_id`` (a unique prefix works) as one HTML string; with ``baseline``
    (another run), a comparison section: differences with intervals, flipped and unscored items."""
    run = store.run(run_id)
    run_id = run["id"]
    artifacts = store.artifacts(run_id)
    usage = store.usage(run_id)
    judge = run.get("judge") or ", ".join(usage["models"]) or "none recorded"
    models = list(usage["models"]) + [judge]
    warning = TINY_MODEL_WARNING if any(m.startswith(_TINY_IDS) or m == "local" for m in models) else None
    context = {
        "run": run, "judge": judge, "warning": warning,
        "created": _dt.datetime.fromtimestamp(run["created"], _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "settings": artifacts.get("settings") or run.get("config") or {},
        "judge_card": _card_context(judge_card(store, run_id, judge)),
        "vrag": artifacts.get("vrag"), "thelma": artifacts.get("thelma"),
        "tournament": artifacts.get("tournament"), "grammar": artifacts.get("grammar"),
        "unscored": _unscored(store, run_id, artifacts), "usage": usage,
        "charts": {"vrag": _vrag_charts(artifacts["vrag"]) if artifacts.get("vrag") else {},
                   "thelma": _thelma_charts(artifacts["thelma"]) if artifacts.get("thelma") else {},
                   "tournament": (_tournament_charts(artifacts["tournament"])
                                  if artifacts.get("tournament") else {})},
        "sections": SECTIONS,
        "comparison": None,
    }
    if baseline is not None:
        context["comparison"] = _comparison(store, run_id, baseline)
        context["sections"] = SECTIONS[:1] + ("comparison",) + SECTIONS[1:]
    return _ENV.get_template("report.html.j2").render(**context)


def write_report(store: RunStore, run_id: str, path: str | Path, *, baseline: str | None = None) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, build_report(store, run_id, baseline=baseline))
    return out
