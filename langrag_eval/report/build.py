"""The HTML report of one run: a single self-contained file (inline CSS, SVG and one script, the
item browser's, allowed by its hash alone; no network) built from what the run store holds: the run's settings and judge, the artifacts that the
capabilities stored (``vrag``, ``thelma``, ``tournament``, ``grammar``), the judge's card (the run's
own ``judge_card`` when it is an audit, else the latest audit of the same judge in the store), the
Unscored judgments with their reasons, every item (question, answer, contexts, the judge's reply,
and each of its scores by name, read from the typed scores stored with the judgments) in a browser,
and usage. Every string that came from a model or a user is escaped by the
template engine (autoescape on); charts escape their own labels; the items travel as JSON in which
``<``, ``>`` and ``&`` are escaped, and the browser sets them as text, never as markup.

>>> from langrag_eval.runtime import RunStore, put_item_index
>>> store = RunStore(":memory:")
>>> run = store.open_run("demo", {"file": "x.csv"}, judge="scripted")
>>> store.put_artifact(run, "vrag", {"items": 1, "scored": 1, "distribution": {"4": 1},
...                                  "accept_rate": 1.0, "threshold": 4})
>>> from langrag_eval.results import ScoreScale
>>> grade = ScoreScale(1, 5).score("grade", 4, passed=True, reason="</script>")
>>> store.put_judgment(run, "q1", "vrag", {"scores": [grade.model_dump()]}, scored=True)
>>> put_item_index(store, run, "vrag", [("q1", "Why?", None, None)])
>>> html = build_report(store, run)
>>> "<script>" in html, html.count("<script")
(False, 2)
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import math
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..files.writing import write_text_atomic
from ..audit.card import ARTIFACT as CARD, JudgeCard, rows as card_rows
from ..models import TINY_MODEL_WARNING
from ..results import Summary
from ..runtime import RunStore
from ..runtime.items import current_judgments
from ..runtime.parts import read_parts
from .games import games_view
from .headline import headline, thelma_intervals
from .monitoring import windows_view
from .items import CONTENTS, browser_items, items_json
from .svg import bar_chart, difference_chart, heatmap, interval_chart, measure_bar
from .views import plain_settings, thelma_view, tournament_view

__all__ = ["build_report", "write_report", "SECTIONS"]

# the answer first: the summary, then each capability's figures, the items; the run's settings and
# the judge's card (collapsed) and usage come last
SECTIONS = ("summary", "scores", "vrag", "thelma", "windows", "tournament", "grammar", "items", "unscored", "judge",
            "settings", "usage")
_TITLES = {"summary": "summary", "settings": "settings", "scores": "scores", "comparison": "comparison",
           "judge": "judge card", "vrag": "vRAG-Eval", "thelma": "THELMA", "windows": "monitoring",
           "tournament": "tournament", "grammar": "GRAMMAR", "items": "items", "unscored": "unscored",
           "usage": "usage"}
_SCRIPT = (Path(__file__).parent / "templates" / "browser.js").read_text(encoding="utf-8")
# the page runs this one script and nothing else (Content-Security-Policy by its hash)
_SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode()
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
# where no <bdi> can go (the page's <title>): embeddings, overrides and isolates dropped
_ENV.filters["nobidi"] = lambda text: str(text).translate(
    dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
_ENV.filters["pct"] = _pct


def _vrag_charts(vrag: dict[str, Any]) -> dict[str, Markup]:
    dist = vrag.get("distribution") or {}
    charts = {"distribution": Markup(bar_chart([f"score {k}" for k in "12345"],
                                               [float(dist.get(k, 0)) for k in "12345"],
                                               title="Score distribution"))}
    subjects = {k: v for k, v in (vrag.get("subjects") or {}).items() if v.get("scored")}
    if subjects:
        from ..stats.intervals import wilson  # the report alone needs it

        names = sorted(subjects)
        shares = [wilson(int(subjects[n].get("accepted") or 0), int(subjects[n]["scored"])) for n in names]
        charts["subjects"] = Markup(interval_chart(
            [f"{n} (n={e.n})" for n, e in zip(names, shares)], [e.value for e in shares],
            [e.low for e in shares], [e.high for e in shares], bounds=(0.0, 1.0), percent=True,
            title=f"Accept rate per {vrag.get('group_by') or 'subject'}, 95 % Wilson interval"))
    agreement = vrag.get("agreement")
    if agreement and agreement.get("confusion"):
        names = agreement.get("names", ["judge", "human"])
        matrix = agreement["confusion"]
        total = sum(sum(r) for r in matrix) or 1
        labels = [str(x) for x in agreement.get("labels", range(1, len(matrix) + 1))]
        charts["confusion"] = Markup(heatmap([[c / total for c in row] for row in matrix], labels, labels,
                                             title=f"Confusion: rows {names[0]}, columns {names[1]}"))
    return charts


def _thelma_charts(thelma: dict[str, Any], intervals: dict[str, tuple[float | None, float | None, str]]
                   ) -> dict[str, Markup]:
    metrics = thelma.get("metrics") or {}
    # an interval from fewer than five scores says little: those metrics are in the table only
    keys = [k for k in metrics if metrics[k].get("mean") is not None and (metrics[k].get("n") or 0) >= 5]
    if not keys:
        return {}

    def end(k: str, i: int) -> float:
        v = intervals.get(k, (None, None, ""))[i]
        return float("nan") if v is None else float(v)
    methods = {intervals.get(k, (None, None, ""))[2] for k in keys}
    how = "bootstrap" if methods == {"bootstrap"} else "bootstrap or Student's t"
    return {"means": Markup(interval_chart(
        [f"{k.upper()} {metrics[k].get('name', '')}" for k in keys], [metrics[k]["mean"] for k in keys],
        [end(k, 0) for k in keys], [end(k, 1) for k in keys],
        title=f"Mean with its 95 % confidence interval ({how}), 0 to 1", bounds=(0.0, 1.0)))}


def _tournament_charts(tour: dict[str, Any], view: dict[str, Any]) -> dict[str, Markup]:
    """Drawn only where they carry information; ``view`` says in words what they would not show."""
    charts: dict[str, Markup] = {}
    ranking = [r for r in view["ranking"] if r["games"]]
    if view["separated"] and len(ranking) > 1:
        charts["ranking"] = Markup(interval_chart(
            [r["agent"] for r in ranking], [r.get("bt_rating") or float("nan") for r in ranking],
            [r.get("bt_low") if r.get("bt_low") is not None else float("nan") for r in ranking],
            [r.get("bt_high") if r.get("bt_high") is not None else float("nan") for r in ranking],
            title="Bradley-Terry rating (Elo scale) with 95 % bootstrap interval"))
    matrix = tour.get("win_matrix") or {}
    agents = tour.get("agents") or sorted(matrix)
    if matrix and len(agents) > 1 and view["played"]:
        rows, notes = [], []
        for a in agents:
            row, note = [], []
            for b in agents:
                cell = (matrix.get(a) or {}).get(b)
                played = a != b and cell and cell.get("games")
                row.append(cell.get("win") if played else None)
                note.append(f"tie {cell.get('tie', 0):.0%}" if played and cell.get("tie") else "")
            rows.append(row)
            notes.append(note)
        charts["wins"] = Markup(heatmap(rows, agents, agents, notes=notes, empty="no game",
                                        title="Share of games the row agent won against the column"))
    return charts


def _unscored(store: RunStore, run_id: str) -> list[dict[str, str]]:
    """Every judgment not made: a whole item once (its task), else each unscored score of a judged
    item (``family/score``), read from the typed scores stored with the judgments."""
    from ..compare.observations import family_of  # the report's naming of a task's scores

    items = []
    for j in current_judgments(store, run_id):
        result = j["result"] if isinstance(j["result"], dict) else {}
        if not j["scored"]:
            items.append({"item": j["item"], "task": j["task"], "cause": str(result.get("cause", "")),
                          "reason": str(result.get("reason", ""))})
            continue
        for score in result.get("scores") or []:
            if isinstance(score, dict) and score.get("value") is None and score.get("cause"):
                items.append({"item": j["item"], "task": f"{family_of(j['task'])}/{score.get('name')}",
                              "cause": str(score["cause"]), "reason": str(score.get("reason") or "")})
    seen, unique = set(), []
    for it in items:
        key = (it["item"], it["task"], it["reason"])
        if key not in seen:
            seen.add(key)
            unique.append(it)
    return unique


def _comparison(store: RunStore, run_id: str, baseline: str) -> dict[str, Any]:
    from ..compare import compare_runs  # only reports with a baseline need the statistics

    from ..compare.observations import is_scored_rate

    c = compare_runs(store, baseline, run_id)
    data = c.as_dict()

    def unit(m: Any) -> bool:  # a rate, or a score whose means lie on 0..1
        return m.kind == "binary" or all(v is None or 0.0 <= v <= 1.0 for v in (m.mean_a, m.mean_b))

    charts = []
    # the axis's least half-width: 5 points on a 0-1 scale, a quarter of a point on wider ones
    for title, rows, least in (("Rates and 0-1 scores: run minus baseline, 95 % interval",
                                [m for m in c.metrics if unit(m)], 0.05),
                               ("Scores on wider scales: run minus baseline, 95 % interval",
                                [m for m in c.metrics if not unit(m)], 0.25)):
        if rows:
            charts.append(Markup(difference_chart(
                [m.metric for m in rows], [m.diff for m in rows], [m.low for m in rows],
                [m.high for m in rows], title=title, min_half=least)))
    data["charts"] = charts
    for f in data["flips"]:  # what else moved on the flipped item: its scores on their own scales
        a, b = f["a"]["values"], f["b"]["values"]
        f["changes"] = [(m, a[m], b[m]) for m in a if m in b and a[m] != b[m] and m != f["metric"]
                        and not is_scored_rate(m)]
    return data


def run_status(store: RunStore, run: dict[str, Any]) -> dict[str, str]:
    """What the run is doing, in words: finished (when), running (a process holds its lease) or
    stopped (when it last stored a result; the same command resumes it)."""
    def when(t: float | None) -> str:
        return "—" if t is None else _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if run.get("finished"):
        return {"word": "finished", "detail": f"at {when(run['finished'])}"}
    last = store.last_write(run["id"])
    holder = store.lease_holder(run["id"]) if hasattr(store, "lease_holder") else None
    if holder is not None:
        return {"word": "running", "detail": f"process {holder['pid']} on {holder['host']}; last result stored "
                                             f"{when(last)}; the figures below are partial"}
    return {"word": f"stopped at {when(last or run['created'])}",
            "detail": "not finished: the figures below are partial; the same command resumes it"}


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
    rows = card_rows(card)
    for row, m in zip(rows, card.measures):
        e = m.estimate
        row["status"] = {"ok": "meets", "MISS": "misses"}.get(row["status"], "for information")
        row["bar"] = (Markup(measure_bar(e.value, e.low, e.high, m.threshold, m.direction))
                      if m.unit == "share" and e.value is not None else "")
    return {"card": card, "source": source, "rows": rows}


SUMMARY_PREFIX = "summary/"


def _summaries(artifacts: dict[str, Any]) -> list[dict[str, Any]]:
    """Every evaluator's typed summary stored with the run (``summary/<evaluator id>``, as
    ``langrag-eval run`` stores them), read by score name: one table for any evaluator, the
    package's own or an installed package's, with no knowledge of which it is."""
    out = []
    for name, data in sorted(artifacts.items()):
        if not name.startswith(SUMMARY_PREFIX) or not isinstance(data, dict):
            continue
        try:
            summary = Summary.model_validate(data)
        except ValueError:  # an artifact of another shape under the prefix: not a summary, not shown
            continue
        out.append({"evaluator": name[len(SUMMARY_PREFIX):], "summary": summary,
                    "unscored": ", ".join(f"{c} {n}" for c, n in sorted(summary.unscored.items()))})
    return out


def build_report(store: RunStore, run_id: str, *, baseline: str | None = None) -> str:
    """The report of run ``run_id`` (a unique prefix works) as one HTML string; with ``baseline``
    (another run), a comparison section: differences with intervals, flipped and unscored items.
    Sections with nothing to show are left out of the page and its navigation."""
    run = store.run(run_id)
    run_id = run["id"]
    artifacts = store.artifacts(run_id)
    usage = store.usage(run_id)
    judge = run.get("judge") or ", ".join(usage["models"]) or "none recorded"
    models = list(usage["models"]) + [judge]
    warning = TINY_MODEL_WARNING if any(m.startswith(_TINY_IDS) or m == "local" for m in models) else None
    vrag, thelma, tour = artifacts.get("vrag"), artifacts.get("thelma"), artifacts.get("tournament")
    tour_view = tournament_view(tour) if tour else None
    comparison = _comparison(store, run_id, baseline) if baseline is not None else None
    flips = {str(f["b"]["id"]): f["direction"] for f in (comparison or {}).get("flips", [])}
    items = browser_items(store, run_id, artifacts=artifacts, flips=flips)
    summaries = _summaries(artifacts)
    intervals = thelma_intervals(thelma) if thelma else {}
    context = {
        "run": run, "judge": judge, "warning": warning,
        "created": _dt.datetime.fromtimestamp(run["created"], _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "status": run_status(store, run),
        "headline": headline(artifacts, summaries=summaries, tournament_view=tour_view, comparison=comparison),
        "thelma_intervals": intervals,
        "windows": windows_view(thelma, {i["id"]: i["question"] for i in items})
                   if thelma and thelma.get("windows") else None,
        "settings": plain_settings(artifacts.get("settings") or run.get("config") or {}),
        "judge_card": _card_context(judge_card(store, run_id, judge)),
        "vrag": vrag, "thelma": thelma, "thelma_view": thelma_view(thelma) if thelma else None,
        "tournament": tour, "tournament_view": tour_view,
        "game_browser": games_view(store, run_id, artifacts) if tour else None, "grammar": artifacts.get("grammar"),
        "unscored": _unscored(store, run_id), "usage": usage, "summaries": summaries,
        "charts": {"vrag": _vrag_charts(vrag) if vrag else {},
                   "thelma": _thelma_charts(thelma, intervals) if thelma else {},
                   "tournament": _tournament_charts(tour, tour_view) if tour else {}},
        "comparison": comparison,
        "items": items, "items_json": Markup(items_json(items)), "script": Markup(_SCRIPT),
        "script_hash": _SCRIPT_HASH,
        "agents": sorted({i["agent"] for i in items if i["agent"]}),
        "group_label": "agent" if any(isinstance(r, dict) and r.get("agent") for r in read_parts(artifacts, CONTENTS))
                       or (vrag or {}).get("group_by") == "agent" else "subject",
    }
    present = {"summary": True, "windows": bool((thelma or {}).get("windows")), "settings": True, "scores": bool(context["summaries"]), "comparison": comparison is not None, "judge": True, "vrag": bool(vrag),
               "thelma": bool(thelma), "tournament": bool(tour), "grammar": bool(artifacts.get("grammar")),
               "items": bool(items), "unscored": bool(context["unscored"]),
               "usage": bool(usage["total"]["calls"] or usage["total"]["cached"])}
    order = SECTIONS[:1] + ("comparison",) + SECTIONS[1:]  # a comparison is the answer a baseline asks
    context["sections"] = [(s, _TITLES[s]) for s in order if present[s]]
    return _ENV.get_template("report.html.j2").render(**context)


def write_report(store: RunStore, run_id: str, path: str | Path, *, baseline: str | None = None) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, build_report(store, run_id, baseline=baseline))
    return out
