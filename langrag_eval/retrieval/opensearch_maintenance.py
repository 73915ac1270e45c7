"""Listing and removing the chunks of an OpenSearch index: what re-indexing a changed corpus needs
(see :func:`langrag_eval.retrieval.ingest.aingest`). Plans of calls, run by the backend's drivers.

>>> plan = remove_plan("docs", [], 500)
>>> next(plan, "no call for nothing to remove")
'no call for nothing to remove'
"""

from __future__ import annotations

from .opensearch_transport import Call, Plan

__all__ = ["ids_plan", "remove_plan"]


def ids_plan(index: str) -> Plan[list[str]]:
    """The ids of every chunk in ``index`` (a scroll, 1,000 at a time, ids only)."""
    exists = yield Call("indices.exists", {"index": index}, "check the index")
    if not exists:
        return []
    body = {"query": {"match_all": {}}, "_source": False, "size": 1000, "sort": ["_doc"]}
    reply = yield Call("search", {"index": index, "body": body, "scroll": "2m"}, "list chunk ids")
    found: list[str] = []
    while reply["hits"]["hits"]:
        found += [hit["_id"] for hit in reply["hits"]["hits"]]
        reply = yield Call("scroll", {"body": {"scroll_id": reply["_scroll_id"], "scroll": "2m"}},
                           "list chunk ids")
    yield Call("clear_scroll", {"body": {"scroll_id": reply["_scroll_id"]}}, "end the id listing")
    return found


def remove_plan(index: str, ids: list[str], bulk_size: int) -> Plan[int]:
    """Delete ``ids`` from ``index`` in bulk requests; how many the cluster removed."""
    removed = 0
    for start in range(0, len(ids), bulk_size):
        body = [{"delete": {"_id": i}} for i in ids[start:start + bulk_size]]
        reply = yield Call("bulk", {"index": index, "body": body}, "bulk-delete chunks")
        removed += sum(1 for item in reply.get("items", []) if item.get("delete", {}).get("result") == "deleted")
    if ids:
        yield Call("indices.refresh", {"index": index}, "refresh the index")
    return removed
