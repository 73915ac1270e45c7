"""The items of a run, one record each, for the report's item browser: what was asked and answered
(question, answer, contexts, reference, agent), and every score the run's evaluators gave it, read by
name from the typed scores stored with each judgment (``"scores"``, see
:func:`~langrag_eval.runtime.batch.judgment_payload`): the value on its scale, the pass call where
the capability makes one, the reason, or the Unscored cause. No capability's result shape is read,
so an evaluator with new score names (a THELMA metric registered from outside, say) shows with no
edit here. The judge's reply (``raw``) is shown where a result keeps one.

The judgments in the run store hold the judge's side. The content of each item is stored by the
command that read it, as the artifact ``item_contents``, in parts as the items come
(:mod:`~langrag_eval.runtime.parts`)::

    {"version": 1, "parts": n, "items": [{"id": str, "question": str, "answer": str, "contexts": [str],
                                          "reference": str | null, "agent": str | null, "subject": str | null,
                                          "human": {"score": str, "value": float, "passed": bool | null} | null}]}

``human`` is a person's own judgment of the item on the score named ``score`` (vRAG-Eval's
``grade``, say): the browser marks the items where the judge's pass call on that score differs.
The browser groups items by agent, else by subject.

The items are the judgments of every task whose items are indexed (``items/<task>``, what
:meth:`~langrag_eval.evaluator.Evaluator.index_item` stores through ``evaluate_many`` or
:func:`langrag_eval.run.evaluate`; tournament games, agent runs and a judge audit's batteries are
not items), one task per family (the one with the most judgments), as :mod:`langrag_eval.compare`
reads them. A run with ``item_contents`` lists its items even before they are judged.

>>> from langrag_eval.results import ScoreScale
>>> from langrag_eval.runtime import RunStore, put_item_index
>>> store = RunStore(":memory:")
>>> run = store.open_run("grade", {}, judge="scripted")
>>> put_item_contents(store, run, [{"id": "q1", "question": "Why?", "answer": "Because.", "contexts": []}])
>>> scores = [ScoreScale(1, 5).score("grade", 2, passed=False, reason="vague").model_dump()]
>>> store.put_judgment(run, "q1", "vrag", {"scores": scores}, scored=True)
>>> put_item_index(store, run, "vrag", [("q1", "Why?", None, None)])
>>> [(r["id"], r["scores"][0]["name"], r["scores"][0]["value"], r["status"]) for r in browser_items(store, run)]
[('q1', 'grade', 2.0, 'failed')]
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from ..results import Score
from ..run.batch import DECLARED_PREFIX
from ..runtime.items import CONTENTS, CONTENTS_PREFIX, ITEMS_PREFIX, content_row, current_judgments, item_contents_writer
from ..runtime.parts import is_part, read_parts
from .steps import conversation_of_simulation, display_steps

__all__ = ["CONTENTS", "STATUSES", "content_row", "item_contents_writer", "put_item_contents", "browser_items",
           "group_label", "items_json"]

# an item's status, worst first: nothing scored; a score below its pass mark; some scores missing
# (never shown as passed: what was not scored did not pass); every pass call made passed; scored
# with no pass call to make; not judged (yet)
STATUSES = ("unscored", "failed", "incomplete", "passed", "scored", "unjudged")
_TEXT = 4000       # characters kept of one question, answer, reference, reply or reason
_REASON = 600      # characters kept of one score's reason
_DIGITS = re.compile(r"(\d+)")


def _cut(text: Any, limit: int = _TEXT) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"


def put_item_contents(store: Any, run_id: str, items: Iterable[Mapping[str, Any]]) -> None:
    """Store what each item asked and answered (see the module's docstring), replacing what the
    run held."""
    writer = item_contents_writer(store, run_id)
    for item in items:
        writer.add(content_row(item))
    writer.close()


def _family(task: str) -> str:
    from ..compare.observations import family_of  # the one naming of a task's family

    return family_of(task)


def _questions(artifacts: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, data in artifacts.items():
        if name.startswith(ITEMS_PREFIX) and isinstance(data, dict):
            for r in data.get("items") or []:
                if isinstance(r, dict) and "id" in r:
                    out.setdefault(str(r["id"]), r)
    return out


def _item_tasks(judgments: list[dict[str, Any]], artifacts: Mapping[str, Any]) -> set[str]:
    """The tasks whose judgments are the run's items, one per family."""
    tasks = Counter(j["task"] for j in judgments)
    indexes = [n[len(ITEMS_PREFIX):] for n in artifacts if n.startswith(ITEMS_PREFIX)]
    indexed = {t for t in tasks if any(n == t or n.startswith(t + "/") for n in indexes)}
    chosen: dict[str, str] = {}
    for task in tasks:  # judgment order: the first family judged comes first
        if task in indexed:
            family = _family(task)
            if family not in chosen or tasks[task] > tasks[chosen[family]]:
                chosen[family] = task
    return set(chosen.values())


def _score(family: str, stored: Any) -> dict[str, Any] | None:
    """One stored :class:`~langrag_eval.results.Score` as the browser shows it; None for anything
    that does not read as one."""
    try:
        s = Score.model_validate(stored)
    except ValidationError:
        return None
    return {"family": family, "name": s.name, "value": s.value, "low": s.low, "high": s.high,
            "binary": s.binary, "higher_is_better": s.higher_is_better, "passed": s.passed,
            "reason": _cut(s.reason, _REASON), "cause": s.cause}


def _unscored(where: str, cause: Any, reason: Any) -> str:
    reason = _cut(reason, _REASON)
    return f"{where}: {cause or 'unscored'}" + (f": {reason}" if reason else "")


def _worth(score: dict[str, Any]) -> float:
    """A scored score on 0 (worst) .. 1 (best), whatever its scale and direction."""
    share = (score["value"] - score["low"]) / (score["high"] - score["low"])
    return share if score["higher_is_better"] else 1.0 - share


def group_label(artifacts: Mapping[str, Any]) -> str:
    """What the browser's grouping of items is called: ``agent`` where the items' contents name
    agents or a stored summary is grouped by agent (``group_by``), else ``subject``."""
    if any(isinstance(r, dict) and r.get("agent") for r in read_parts(artifacts, CONTENTS)):
        return "agent"
    return "agent" if any(isinstance(a, dict) and a.get("group_by") == "agent" for a in artifacts.values()) \
        else "subject"


def browser_items(store: Any, run_id: str, *, artifacts: Mapping[str, Any] | None = None,
                  flips: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """One record per item of the run, worst first: nothing scored, then a score below its pass
    mark, then by the mean of its scores on 0..1. ``flips``: ``{item id: "lost" | "gained"}``
    against a baseline."""
    artifacts = artifacts if artifacts is not None else store.artifacts(run_id)
    contents = {str(r["id"]): r for r in read_parts(artifacts, CONTENTS) if isinstance(r, dict) and "id" in r}
    for name in [n for n in artifacts if n.startswith(CONTENTS_PREFIX) and not is_part(n)]:
        for r in read_parts(artifacts, name):  # an evaluator's own content: a trajectory, a conversation
            if isinstance(r, dict) and "id" in r:
                merged = contents.setdefault(str(r["id"]), {})
                merged.update({k: v for k, v in r.items() if k not in merged or merged[k] in (None, "", [])})
    index = _questions(artifacts)
    rows: dict[str, dict[str, Any]] = {}

    def row(item: str) -> dict[str, Any]:
        if item not in rows:
            c, ix = contents.get(item, {}), index.get(item, {})
            human = c.get("human")
            rows[item] = {"id": item, "agent": c.get("agent") or c.get("subject") or ix.get("subject"),
                          "question": c.get("question") or ix.get("question"), "answer": c.get("answer"),
                          "contexts": c.get("contexts") or [], "reference": c.get("reference"),
                          "human": human if isinstance(human, dict) and human.get("score") else None,
                          "scores": [], "replies": [], "unscored": [], "flip": None}
            if c.get("trajectory"):
                rows[item]["trajectory"] = display_steps(c["trajectory"])
                if c.get("reference_trajectory"):
                    rows[item]["reference_trajectory"] = display_steps(c["reference_trajectory"])
            if c.get("turns"):
                rows[item]["turns"] = c["turns"]
                rows[item]["conversation"] = {k: c[k] for k in ("goal", "persona", "role", "goal_met", "error")
                                              if c.get(k) is not None}
        return rows[item]

    for item in contents:
        row(item)
    judgments = current_judgments(store, run_id)
    for j in judgments:  # a simulated conversation is stored whole, as the run's judgment of its persona
        shown = conversation_of_simulation(j)
        if shown is not None:
            contents.setdefault(str(j["item"]), {"id": str(j["item"]), **shown})
            row(str(j["item"]))
    tasks = _item_tasks(judgments, artifacts)
    # each item's scores in the order the run declared its evaluators, not the order they finished
    # in (a run's evaluators judge at once)
    order = {n[len(DECLARED_PREFIX):]: i
             for i, n in enumerate(n for n in artifacts if n.startswith(DECLARED_PREFIX))}
    judgments = sorted(judgments, key=lambda j: order.get(j["task"], order.get(_family(j["task"]), len(order))))
    for j in judgments:
        if j["task"] not in tasks:
            continue
        family, result = _family(j["task"]), j["result"] if isinstance(j["result"], dict) else {}
        r = row(str(j["item"]))
        scores = [s for s in map(lambda s: _score(family, s), result.get("scores") or []) if s is not None]
        r["scores"] += scores
        if isinstance(result.get("raw"), str) and result["raw"]:
            r["replies"].append({"family": family, "text": _cut(result["raw"])})
        r["unscored"] += [_unscored(f"{family}/{s['name']}", s["cause"], s["reason"])
                          for s in scores if s["value"] is None]
        if not j["scored"] and not scores:  # an evaluator without named scores: the item's own cause
            r["unscored"].append(_unscored(family, result.get("cause"), result.get("reason")))
    for item, direction in (flips or {}).items():
        if item in rows:
            rows[item]["flip"] = direction
    for r in rows.values():
        scored = [s for s in r["scores"] if s["value"] is not None]
        calls = [s["passed"] for s in scored if s["passed"] is not None]
        missing = [s for s in r["scores"] if s["value"] is None]
        r["status"] = ("unjudged" if not r["scores"] and not r["unscored"] else
                       "unscored" if not scored else
                       "failed" if False in calls else
                       "incomplete" if missing or len(r["unscored"]) > len(missing) else
                       "passed" if calls else "scored")
        causes = Counter(str(s["cause"] or "unscored") for s in missing)
        r["incomplete"] = ({"k": len(missing), "n": len(r["scores"]), "cause": causes.most_common(1)[0][0]}
                           if missing else None)
        # a failed score's reason first, else the first scored one's, else why it is unscored
        r["reason"] = next((s["reason"] for s in sorted(scored, key=lambda s: s["passed"] is not False)
                            if s["reason"]), None) or (r["unscored"][0] if r["unscored"] else None)
        r["worth"] = sum(map(_worth, scored)) / len(scored) if scored else None
        human = r["human"]
        r["disagrees"] = human is not None and isinstance(human.get("passed"), bool) and any(
            s["name"] == human["score"] and s["passed"] is not None and s["passed"] != human["passed"]
            for s in scored)
    return sorted(rows.values(), key=_badness)


def _badness(r: dict[str, Any]) -> tuple:
    # ids in natural order (q2 before q10) within one level of badness
    natural = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(r["id"]) if part)
    return (STATUSES.index(r["status"]) if r["status"] in ("unscored", "failed", "incomplete") else 3,
            r["worth"] if r["worth"] is not None else 2.0, natural)


# what a score is unless it says otherwise: left out of the page's JSON, which the browser fills in
_SCORE_DEFAULTS = {"binary": False, "higher_is_better": True, "passed": None, "reason": None, "cause": None}


def _compact(item: dict[str, Any]) -> dict[str, Any]:
    """One item as the page carries it: what the browser derives (the sort's worth, the row's
    reason) left out, each score without its default fields, and a reason the score before it in
    the same family gave already (vRAG's two scores share one) marked ``same_reason`` instead."""
    out = {k: v for k, v in item.items() if k not in ("worth", "reason")}
    scores, before = [], None
    for s in item["scores"]:
        short = {k: v for k, v in s.items() if k not in _SCORE_DEFAULTS or v != _SCORE_DEFAULTS[k]}
        if before is not None and before["family"] == s["family"] and s["reason"] and before["reason"] == s["reason"]:
            del short["reason"]
            short["same_reason"] = True
        scores.append(short)
        before = s
    out["scores"] = scores
    return out


def items_json(items: list[dict[str, Any]]) -> str:
    """The items as JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>``
    or ``&`` appears literally, so no text from a model or a user can close the element. Fields a
    score leaves at their default are left out (the browser restores them)."""
    text = json.dumps([_compact(i) for i in items], ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
