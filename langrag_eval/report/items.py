"""The items of a run, one record each, for the report's item browser: what was asked and answered
(question, answer, contexts, reference, agent), what the judge replied and why, the score, any
Unscored cause, THELMA's scores, the human grade, and whether the item flipped against a baseline.

The judgments in the run store hold the judge's side. The content of each item is stored by the
command that read it, as the artifact ``item_contents``, in parts as the items come
(:mod:`~langrag_eval.runtime.parts`)::

    {"version": 1, "parts": n, "items": [{"id": str, "question": str, "answer": str, "contexts": [str],
                                          "reference": str | null, "agent": str | null,
                                          "subject": str | null, "human": int | null}]}

The browser groups items by agent, else by subject.

A run without it (made by library code) still lists every judged item, with the question from its
item index where there is one.

>>> from langrag_eval.runtime import RunStore
>>> store = RunStore(":memory:")
>>> run = store.open_run("grade", {}, judge="scripted")
>>> put_item_contents(store, run, [{"id": "q1", "question": "Why?", "answer": "Because.", "contexts": []}])
>>> store.put_judgment(run, "q1", "vrag", {"score": 2, "accepted": False, "reason": "vague"}, scored=True)
>>> [(r["id"], r["score"], r["status"]) for r in browser_items(store, run)]
[('q1', 2, 'rejected')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..runtime.items import ITEMS_PREFIX, current_judgments
from ..runtime.parts import PartWriter, read_parts

__all__ = ["CONTENTS", "content_row", "item_contents_writer", "put_item_contents", "browser_items", "items_json"]

CONTENTS = "item_contents"
_TEXT = 4000       # characters kept of one question, answer, reference, reply or reason
_CONTEXT = 1500    # characters kept of one context
_CONTEXTS = 8      # contexts kept per item
_DIGITS = re.compile(r"(\d+)")


def _cut(text: Any, limit: int = _TEXT) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"


def content_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """One item's stored row: the fields given (none that are None), texts cut to length."""
    row = {k: v for k, v in item.items() if v is not None}
    row["id"] = str(item["id"])
    row["contexts"] = [_cut(c, _CONTEXT) for c in (row.get("contexts") or [])[:_CONTEXTS]]
    for field in ("question", "answer", "reference"):
        row[field] = _cut(row.get(field))
    return row


def item_contents_writer(store: Any, run_id: str, *, size: int = 1000) -> PartWriter:
    """A writer of the run's ``item_contents`` a part at a time: ``add(content_row(item))`` as the
    items come, ``close()`` at the end; a run of any size never holds them all."""
    return PartWriter(store, run_id, CONTENTS, {"version": 1}, size=size)


def put_item_contents(store: Any, run_id: str, items: Iterable[Mapping[str, Any]]) -> None:
    """Store what each item asked and answered (see the module's docstring), replacing what the
    run held."""
    writer = item_contents_writer(store, run_id)
    for item in items:
        writer.add(content_row(item))
    writer.close()


def _questions(artifacts: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, data in artifacts.items():
        if name.startswith(ITEMS_PREFIX) and isinstance(data, dict):
            for r in data.get("items") or []:
                if isinstance(r, dict) and "id" in r:
                    out.setdefault(str(r["id"]), r)
    return out


def browser_items(store: Any, run_id: str, *, artifacts: Mapping[str, Any] | None = None,
                  flips: Mapping[str, str] | None = None, threshold: int = 4) -> list[dict[str, Any]]:
    """One record per item of the run, worst first: unscored, then rejected, then by score and
    THELMA mean. ``flips``: ``{item id: "lost" | "gained"}`` against a baseline."""
    artifacts = artifacts if artifacts is not None else store.artifacts(run_id)
    contents = {str(r["id"]): r for r in read_parts(artifacts, CONTENTS) if isinstance(r, dict) and "id" in r}
    index = _questions(artifacts)
    vrag = artifacts.get("vrag") or {}
    threshold = int(vrag.get("threshold") or threshold)
    rows: dict[str, dict[str, Any]] = {}

    def row(item: str) -> dict[str, Any]:
        if item not in rows:
            c, ix = contents.get(item, {}), index.get(item, {})
            rows[item] = {"id": item, "agent": c.get("agent") or c.get("subject") or ix.get("subject"),
                          "question": c.get("question") or ix.get("question"), "answer": c.get("answer"),
                          "contexts": c.get("contexts") or [], "reference": c.get("reference"),
                          "human": c.get("human"), "score": None, "accepted": None, "reason": None,
                          "reply": None, "unscored": [], "thelma": {}, "flip": None}
        return rows[item]

    for item in contents:
        row(item)
    for j in current_judgments(store, run_id):
        if not str(j["task"]).startswith("vrag"):
            continue
        r, result = row(str(j["item"])), j["result"] if isinstance(j["result"], dict) else {}
        r["reply"] = _cut(result.get("raw"))
        if j["scored"] and isinstance(result.get("score"), (int, float)):
            r["score"], r["accepted"] = result["score"], result.get("accepted")
            r["reason"] = _cut(result.get("reason"))
        else:
            r["unscored"].append(f"grade: {result.get('cause', 'unscored')}: {_cut(result.get('reason'), 600)}")
    for sample in (artifacts.get("thelma") or {}).get("samples") or []:
        if not isinstance(sample, dict) or sample.get("id") is None:
            continue
        r = row(str(sample["id"]))
        r["thelma"] = {m: v for m, v in (sample.get("scores") or {}).items() if v is not None}
        for metric, info in (sample.get("unscored") or {}).items():
            r["unscored"].append(f"{metric}: {info.get('cause', '')}: {_cut(info.get('reason'), 600)}")
    for item, direction in (flips or {}).items():
        if item in rows:
            rows[item]["flip"] = direction
    for r in rows.values():
        r["status"] = ("unscored" if r["unscored"] and r["score"] is None else
                       "rejected" if r["accepted"] is False else "accepted" if r["accepted"] else "scored")
        r["disagrees"] = (r["human"] is not None and r["accepted"] is not None
                          and (r["human"] >= threshold) != bool(r["accepted"]))
    return sorted(rows.values(), key=_badness)


def _badness(r: dict[str, Any]) -> tuple:
    thelma = list(r["thelma"].values())
    mean = sum(thelma) / len(thelma) if thelma else 2.0
    # ids in natural order (q2 before q10) within one level of badness
    natural = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(r["id"]) if part)
    return ({"unscored": 0, "rejected": 1}.get(r["status"], 2), r["score"] if r["score"] is not None else 9,
            mean, natural)


def items_json(items: list[dict[str, Any]]) -> str:
    """The items as JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>``
    or ``&`` appears literally, so no text from a model or a user can close the element."""
    text = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
