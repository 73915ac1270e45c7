"""The report's tournament game browser: every game the run played, its query, the two answers, the
judge's verdict in each order with the judge's reply (its reasons) and the documents shown, read
from the stored game judgments (task ``tournament/game``) and the tournament's
``tournament_contents`` (:func:`langrag_eval.tournament.run.store_contents`).

A verdict is read from the order it was given in: judged "forward", agent a's answer was shown as A;
"backward", agent b's was. ``[[A]]`` names the answer shown first, ``[[C]]`` is a tie.

>>> verdict_words("A", "forward", "x", "y"), verdict_words("A", "backward", "x", "y"), verdict_words("C", "forward", "x", "y")
('x better', 'y better', 'tie')
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..runtime.parts import read_parts

__all__ = ["GAMES_SHOWN", "games_view", "verdict_words"]

GAMES_SHOWN = 500  # games drawn in the page; the rest are counted
_TASK = "tournament/game"


def verdict_words(verdict: str | None, order: str, agent_a: str, agent_b: str) -> str:
    """What a verdict in one order says, by agent name."""
    if verdict is None:
        return "not asked in this order"
    first, second = (agent_a, agent_b) if order == "forward" else (agent_b, agent_a)
    return {"A": f"{first} better", "B": f"{second} better", "C": "tie"}.get(verdict, f"unread verdict {verdict!r}")


def _pair(item: str) -> list[str]:
    try:
        parts = json.loads(item)
    except ValueError:
        return []
    return [str(p) for p in parts] if isinstance(parts, list) else []


def games_view(store: Any, run_id: str, artifacts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The games of the run with what the judge saw and said, worst-judged (unscored) first, then
    by query; None when the run played no game."""
    contents = {str(r["qid"]): r for r in read_parts(artifacts, "tournament_contents")
                if isinstance(r, dict) and "qid" in r}
    games = []
    for j in store.judgments(run_id, _TASK):
        result = j["result"] if isinstance(j["result"], dict) else {}
        parts = _pair(j["item"])
        qid = str(result.get("qid") or (parts[0] if parts else ""))
        a = str(result.get("agent_a") or (parts[1] if len(parts) > 1 else ""))
        b = str(result.get("agent_b") or (parts[2] if len(parts) > 2 else ""))
        c = contents.get(qid) or {}
        answers = c.get("answers") or {}
        docs = c.get("documents") or {}
        shown = result.get("documents") or []
        outcome = result.get("outcome")
        games.append({
            "qid": qid, "query": c.get("query"), "agent_a": a, "agent_b": b,
            "answer_a": answers.get(a), "answer_b": answers.get(b), "scored": j["scored"],
            "outcome": ("unscored" if not j["scored"] else "tie" if outcome == "tie"
                        else f"{a} wins" if outcome == "a" else f"{b} wins" if outcome == "b" else "—"),
            "verdicts": [{"order": order, "first": first, "verdict": result.get(order),
                          "words": verdict_words(result.get(order), order, a, b),
                          "reply": result.get(f"raw_{order}")}
                         for order, first in (("forward", a), ("backward", b))
                         if j["scored"] and (result.get(order) is not None or result.get(f"raw_{order}"))],
            "cause": None if j["scored"] else f"{result.get('cause') or 'unscored'}: {result.get('reason') or ''}",
            "documents": [{"id": str(d), "text": docs.get(str(d))} for d in shown],
            "dropped": result.get("dropped") or 0})
    if not games:
        return None
    games.sort(key=lambda g: (g["scored"], g["qid"], g["agent_a"], g["agent_b"]))
    agents = sorted({g["agent_a"] for g in games} | {g["agent_b"] for g in games})
    return {"games": games[:GAMES_SHOWN], "total": len(games), "agents": agents,
            "has_contents": bool(contents)}
