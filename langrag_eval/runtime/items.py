"""Item identity across runs: a digest of what an item asks (the question and, where there is one,
the reference answer), so two runs of different app variants can be paired item by item even when
their files number the rows differently.

A batch stores, beside its judgments, the artifact ``items/<task>``::

    {"version": 1, "task": "vrag",
     "items": [{"id": "q1", "key": "3f2a9c...", "subject": "Fraud" | null, "question": "..."}]}

in input order, stored in parts (:mod:`~langrag_eval.runtime.parts`): a run writes it as its
items come, never whole. ``key`` is :func:`content_key` of the question and the reference; ``question`` is
kept (cut to 300 characters) so a comparison can show what changed. Runs made before this artifact
existed have none; comparisons then pair by item id and say so.

>>> content_key("Capital of France?", "Paris") == content_key("  Capital of  France? ", "Paris\\n")
True
>>> content_key("Capital of France?", "Paris") == content_key("Capital of France?", "Lyon")
False
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from .parts import PartWriter, read_parts, stored_artifacts
from .store import RunStore

__all__ = ["ITEMS_PREFIX", "content_key", "current_judgments", "put_item_index", "get_item_index", "index_row",
           "item_index_writer", "CONTENTS_PREFIX", "put_item_contents_of",
           "CONTENTS", "content_row", "item_contents_writer"]

ITEMS_PREFIX = "items/"
# what an evaluator's item_content gave per item (a trajectory, a conversation), for the report
CONTENTS_PREFIX = "item_contents/"
_CONTENT_CHARS = 4000
# what a command read of each item (question, answer, contexts, reference ...), for the report's
# item browser: :mod:`langrag_eval.report.items` describes the artifact
CONTENTS = "item_contents"
_CONTEXT_CHARS = 1500  # characters kept of one context
_CONTEXTS = 8          # contexts kept per item
_QUESTION_CHARS = 300


def _norm(text: str | None) -> str:
    # Whitespace and Unicode form differ between exports of one dataset; the words do not.
    return " ".join(unicodedata.normalize("NFC", text or "").split())


def content_key(question: str | None, reference: str | None = None) -> str:
    """A stable 16-hex-digit digest of the question and reference, whitespace-insensitive."""
    payload = json.dumps([_norm(question), _norm(reference)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def index_row(item: str, question: str | None, reference: str | None, subject: str | None) -> dict[str, Any]:
    """One item's row of ``items/<task>``."""
    return {"id": str(item), "key": content_key(question, reference), "subject": subject or None,
            "question": _norm(question)[:_QUESTION_CHARS]}


def put_item_index(store: RunStore, run_id: str, task: str,
                   items: Iterable[tuple[str, str | None, str | None, str | None]]) -> None:
    """Store ``items/<task>`` from ``(id, question, reference, subject)`` tuples."""
    writer = item_index_writer(store, run_id, task)
    for row in items:
        writer.add(index_row(*row))
    writer.close()


def item_index_writer(store: RunStore, run_id: str, task: str, *, size: int = 1000) -> PartWriter:
    """A writer of ``items/<task>`` a part at a time (:mod:`~langrag_eval.runtime.parts`): add
    :func:`index_row` rows as items come, close at the end."""
    return PartWriter(store, run_id, ITEMS_PREFIX + task, {"version": 1, "task": task}, size=size)


def get_item_index(store: RunStore, run_id: str, task: str) -> dict[str, dict[str, Any]] | None:
    """``{item id: {"key", "subject", "question"}}`` for one task, or None when the run has no index."""
    view = stored_artifacts(store, run_id)
    head = view.get(ITEMS_PREFIX + task)
    if not isinstance(head, dict) or not isinstance(head.get("items"), list):
        return None
    return {str(r["id"]): r for r in read_parts(view, ITEMS_PREFIX + task)
            if isinstance(r, dict) and "id" in r and "key" in r}


def current_judgments(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    """The run's judgments of items still in its input: where a task has an index (``items/<task>``,
    or one per agent, ``items/<task>/<agent>``, keyed ``agent/id``), judgments of items the index
    no longer lists (rows removed before the run was continued) are left out."""
    indexes: dict[str, dict[str, dict[str, Any]] | None] = {}

    def index(name: str) -> dict[str, dict[str, Any]] | None:
        if name not in indexes:
            indexes[name] = get_item_index(store, run_id, name)
        return indexes[name]

    kept = []
    for j in store.judgments(run_id):
        task, item = j["task"], j["item"]
        own = index(task)
        if own is None and "/" in item:
            own = index(f"{task}/{item.split('/', 1)[0]}")
        if own is None or item in own:
            kept.append(j)
    return kept


def _bounded(value: Any) -> Any:
    """``value`` with every string cut to a length the report shows, however deep."""
    if isinstance(value, str):
        return value if len(value) <= _CONTENT_CHARS else value[:_CONTENT_CHARS] + f" … [{len(value) - _CONTENT_CHARS} more characters]"
    if isinstance(value, dict):
        return {str(k): _bounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_bounded(v) for v in value]
    return value


def put_item_contents_of(store: RunStore, run_id: str, task: str, rows: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Store ``item_contents/<task>`` from ``(id, content)`` pairs, texts cut to length, a part at a
    time; nothing when there is no pair."""
    writer: PartWriter | None = None
    for item, content in rows:
        if writer is None:
            writer = PartWriter(store, run_id, CONTENTS_PREFIX + task, {"version": 1, "task": task}, size=200)
        writer.add({**_bounded(content), "id": item})
    if writer is not None:
        writer.close()


def _cut(text: Any, limit: int = _CONTENT_CHARS) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"


def content_row(item: dict[str, Any] | Any) -> dict[str, Any]:
    """One item's stored row of ``item_contents``: the fields given (none that are None), texts cut
    to length."""
    row = {k: v for k, v in item.items() if v is not None}
    row["id"] = str(item["id"])
    row["contexts"] = [_cut(c, _CONTEXT_CHARS) for c in (row.get("contexts") or [])[:_CONTEXTS]]
    for field in ("question", "answer", "reference"):
        row[field] = _cut(row.get(field))
    return row


def item_contents_writer(store: RunStore, run_id: str, *, size: int = 1000) -> PartWriter:
    """A writer of the run's ``item_contents`` a part at a time: ``add(content_row(item))`` as the
    items come, ``close()`` at the end; a run of any size never holds them all."""
    return PartWriter(store, run_id, CONTENTS, {"version": 1}, size=size)
