"""The HTML report of one run: a single self-contained file (inline CSS, SVG and one script, the
item browser's, allowed by its hash alone; no network) built from what the run store holds: the run's settings and judge, the sections its evaluators
declared (:mod:`langrag_eval.report.sections`, each drawn from what its capability stored), the judge's card (the run's
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
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..files.writing import write_text_atomic
from ..audit.card import ARTIFACT as CARD, JudgeCard, rows as card_rows
from ..models import TINY_MODEL_WARNING
from ..results import Summary
from ..runtime import RunStore
from ..runtime.items import current_judgments
from ..run.session import SUMMARY_PREFIX
from .headline import headline
from .items import browser_items, group_label, items_json
from .sections import ENV as _ENV, drawn_sections, registered_anchors
from .svg import difference_chart, measure_bar
from .views import plain_settings

__all__ = ["build_report", "write_report", "SECTIONS"]

# the answer first: the summary (and a comparison), the scores by evaluator, then the sections the
# run's evaluators declared (:mod:`.sections`: the package's own below, in the order a run that held
# them all stored them), the items; the run's settings, the judge's card and usage come last
_FIRST, _LAST = ("summary", "scores"), ("items", "unscored", "judge", "settings", "usage")
SECTIONS = (*_FIRST, *registered_anchors(), *_LAST)
_TITLES = {"summary": "summary", "settings": "settings", "scores": "scores", "comparison": "comparison",
           "judge": "judge card", "items": "items", "unscored": "unscored", "usage": "usage"}
_SCRIPT = (Path(__file__).parent / "templates" / "browser.js").read_text(encoding="utf-8")
# the page runs this one script and nothing else (Content-Security-Policy by its hash)
_SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode()
_TINY_IDS = ("local:gemma-3-270m",)

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
    Each section the run's evaluators declared is drawn (:mod:`langrag_eval.report.sections`).
    Sections with nothing to show are left out of the page and its navigation."""
    run = store.run(run_id)
    run_id = run["id"]
    artifacts = store.artifacts(run_id)
    usage = store.usage(run_id)
    judge = run.get("judge") or ", ".join(usage["models"]) or "none recorded"
    models = list(usage["models"]) + [judge]
    warning = TINY_MODEL_WARNING if any(m.startswith(_TINY_IDS) or m == "local" for m in models) else None
    comparison = _comparison(store, run_id, baseline) if baseline is not None else None
    flips = {str(f["b"]["id"]): f["direction"] for f in (comparison or {}).get("flips", [])}
    items = browser_items(store, run_id, artifacts=artifacts, flips=flips)
    summaries = _summaries(artifacts)
    context = {
        "run": run, "judge": judge, "warning": warning,
        "created": _dt.datetime.fromtimestamp(run["created"], _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "status": run_status(store, run),
        "headline": headline(artifacts, summaries=summaries, comparison=comparison),
        "settings": plain_settings(artifacts.get("settings") or run.get("config") or {}),
        "judge_card": _card_context(judge_card(store, run_id, judge)),
        "unscored": _unscored(store, run_id), "usage": usage, "summaries": summaries,
        "comparison": comparison,
        "items": items, "items_json": Markup(items_json(items)), "script": Markup(_SCRIPT),
        "script_hash": _SCRIPT_HASH,
        "agents": sorted({i["agent"] for i in items if i["agent"]}),
        "group_label": group_label(artifacts),
    }
    # each section an evaluator of the run declared, in the order the run stored them
    context["drawn"] = drawn_sections(store, run_id, artifacts, {"items": items})
    present = {"summary": True, "settings": True, "scores": bool(summaries), "comparison": comparison is not None,
               "judge": True, "items": bool(items), "unscored": bool(context["unscored"]),
               "usage": bool(usage["total"]["calls"] or usage["total"]["cached"])}
    first = (_FIRST[0], "comparison", *_FIRST[1:])  # a comparison is the answer a baseline asks
    context["sections"] = ([(s, _TITLES[s]) for s in first if present[s]]
                           + [(d.anchor, d.title) for d in context["drawn"]]
                           + [(s, _TITLES[s]) for s in _LAST if present[s]])
    return _ENV.get_template("report.html.j2").render(**context)


def write_report(store: RunStore, run_id: str, path: str | Path, *, baseline: str | None = None) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, build_report(store, run_id, baseline=baseline))
    return out
