"""What the report says in words about each capability's stored summary: settings as a reader
types them (no Python literal, no template text), the key to THELMA's abbreviations, and what a
tournament's figures mean when they cannot separate the agents (equal ratings, no games, all ties,
one agent, the same MRR for everyone).

>>> plain_settings({"confidence": False, "examples": [], "data": None, "tasks": ["pairwise", "bias"]})
{'confidence': 'no', 'examples': 'none', 'tasks': 'pairwise, bias'}
>>> plain_settings({"prompt": "Grade it. {{ rubric }}"})
{'prompt': 'a template of 22 characters (kept in the run store)'}
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["plain", "plain_settings", "thelma_view", "tournament_view"]


def plain(value: Any) -> str:
    """A setting's value in words: yes/no, "none" for an empty list, lists joined by commas,
    mappings as ``key: value`` pairs; template text is described instead of shown."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple, set)):
        shown = [plain(v) for v in value if v is not None]
        return ", ".join(shown) if shown else "none"
    if isinstance(value, dict):
        shown = [f"{k}: {plain(v)}" for k, v in value.items() if v not in (None, [], {}, "")]
        return "; ".join(shown) if shown else "none"
    text = str(value)
    if "{{" in text or "{%" in text or len(text) > 300:
        return f"a template of {len(text):,} characters (kept in the run store)" if "{{" in text or "{%" in text \
            else f"{len(text):,} characters of text (kept in the run store)"
    return text


def plain_settings(settings: dict[str, Any]) -> dict[str, str]:
    """The run's settings as rows of the report, the unset ones left out."""
    return {str(k): plain(v) for k, v in settings.items() if v is not None}


def thelma_view(thelma: dict[str, Any]) -> dict[str, Any]:
    """The key to the metrics' abbreviations and the notes the figures need."""
    metrics = thelma.get("metrics") or {}
    key = [(k.upper(), m.get("name") or k) for k, m in metrics.items()]
    few = [k.upper() for k, m in metrics.items() if 0 < (m.get("n") or 0) < 5]
    by_sample = (thelma.get("diagnosis") or {}).get("by_sample") or []
    overlap = sum(d.get("share") or 0 for d in by_sample) > 1.0 + 1e-9
    return {"key": key, "few": few, "overlap": overlap}


def _equal(values: list[float]) -> bool:
    return bool(values) and all(abs(v - values[0]) < 1e-6 for v in values)


def tournament_view(tour: dict[str, Any]) -> dict[str, Any]:
    """Ranks that tie equal ratings and leave unranked an agent that played no game, and the
    sentences that replace a picture with nothing to show."""
    ranking = [dict(r) for r in tour.get("ranking") or []]
    games = tour.get("games") or {}
    for r in ranking:
        r["games"] = sum(int(r.get(k) or 0) for k in ("wins", "ties", "losses"))
    played = [r for r in ranking if r["games"]]
    ratings = [r["bt_rating"] for r in played if isinstance(r.get("bt_rating"), (int, float))
               and math.isfinite(r["bt_rating"])]
    separated = len(played) > 1 and not _equal(ratings)
    position = 0
    previous = None
    for i, r in enumerate(sorted(played, key=lambda r: -(r.get("bt_rating") or 0.0))):
        if previous is None or abs((r.get("bt_rating") or 0.0) - previous) >= 1e-6:
            position = i + 1
        previous = r.get("bt_rating") or 0.0
        r["shown_rank"] = position
    counts: dict[int, int] = {}
    for r in played:
        counts[r["shown_rank"]] = counts.get(r["shown_rank"], 0) + 1
    for r in ranking:
        if not r["games"]:
            r["shown_rank"] = "not ranked (no game)"
        elif counts[r["shown_rank"]] > 1:
            r["shown_rank"] = f"{r['shown_rank']} (tied)"
    ranking.sort(key=lambda r: (not r["games"], -(r.get("bt_rating") or 0.0)))
    notes = []
    if len(ranking) < 2:
        notes.append("Only one agent took part: there is nobody to rank it against.")
    elif not played:
        notes.append("No game was played, so no agent is ranked (see what was left out below).")
    elif not separated:
        notes.append(f"Every agent that played has the same rating ({ratings[0]:,.0f}): the "
                     f"{games.get('played', 0)} games separated no agent, so no ranking is drawn."
                     if ratings else "No rating could be computed from the games played.")
    if played and all(r.get("wins", 0) == 0 and r.get("losses", 0) == 0 for r in played):
        notes.append("Every game ended in a tie (position flips count as ties).")
    retrieval = tour.get("retrieval") or {}
    per_agent = retrieval.get("per_agent") or {}
    mrr = [(m.get("mrr") or {}).get("very") for m in per_agent.values()]
    if len(per_agent) > 1 and all(isinstance(v, (int, float)) for v in mrr) and _equal(mrr):  # type: ignore[arg-type]
        notes.append(f"Every agent has the same MRR@{retrieval.get('k')} ({mrr[0]:.2f}): on these queries "
                     "the measure does not tell the agents' retrieval apart.")
    return {"ranking": ranking, "played": bool(played), "separated": separated, "notes": notes}
