"""Rank fusion as pure functions: reciprocal rank fusion and score normalisation + weighted mean.

RRF (Cormack, Clarke and Büttcher, SIGIR 2009; the RAG-Fusion paper's fusion step):
``score(d) = sum_i weight_i / (k + rank_i(d))`` with ranks counted **from 1** and ``k = 60`` by
default, the same convention as OpenSearch's score-ranker processor (``rank_constant``). A document
is identified by its id; a repeated id inside one ranking is dropped before ranks are counted. Ties are broken by the
best rank the document reached anywhere, then by the earliest ranking it reached it in, so the
result is deterministic.

How this differs from what the frameworks ship:

- LangChain ``EnsembleRetriever`` (langchain_classic): same formula ``weight / (rank + c)``, rank from
  1, ``c = 60``, but documents are deduplicated by their *text* (``page_content``) unless ``id_key``
  names a metadata field; two chunks with equal text collapse into one, and one chunk whose text was
  post-processed differently by two retrievers counts twice. Here the chunk id is the key.
- LlamaIndex ``QueryFusionRetriever``: its default mode ``simple`` is not RRF at all (max score after
  dedup). In ``reciprocal_rerank`` mode it uses ``1 / (rank + 60)`` with rank **from 0** (the top hit
  gets 1/60, not 1/61), hard-codes k, ignores ``retriever_weights``, and deduplicates by a content hash.
- OpenSearch score-ranker: identical formula and ranks; it fuses per shard-merged sub-query result
  lists of the hybrid query, which is what ``EmbeddedBackend`` reproduces for ``server_rrf``.

Normalisation + combination reproduces OpenSearch's normalization processor: each sub-result list is
normalised on its own (``min_max``: ``(s - min) / (max - min)``, 0 becomes 0.001 and a list whose
scores are all equal gives 1.0; ``l2``: ``s / sqrt(sum s^2)``), then the weighted arithmetic mean is
taken **over all the lists, a document missing from one counting 0 there**: the rule of the
server's ``ArithmeticMeanScoreCombinationTechnique`` (neural-search fills every sub-query's score
with 0.0 before the hits are read, since 2023), checked against a live OpenSearch 2.19 node. The
older rule, which leaves a list that lacks the document out of its mean together with that list's
weight, is kept by name: ``missing="skip"``.

>>> rrf([["a", "b", "c"], ["b", "a"]])[0]
('a', 0.03252247488101534)
>>> [d for d, _ in rrf([["a", "b"], ["b", "c"]], weights=[1.0, 2.0])]
['b', 'c', 'a']
>>> normalize([3.0, 2.0, 1.0])
[1.0, 0.5, 0.001]
>>> combine_normalized([[("a", 4.0), ("b", 2.0)], [("b", 0.9), ("c", 0.8)]])
[('b', 0.5005), ('a', 0.5), ('c', 0.0005)]
>>> combine_normalized([[("a", 4.0), ("b", 2.0)], [("b", 0.9), ("c", 0.8)]], missing="skip")
[('a', 1.0), ('b', 0.5005), ('c', 0.001)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from ..errors import ConfigError
from ..types import Document

__all__ = ["MIN_SCORE", "Missing", "combine_documents", "combine_normalized", "normalize", "rrf", "rrf_documents"]

# How a document absent from one normalised list counts in the weighted mean: "zero" (the server's
# rule, the default) or "skip" (left out of the mean together with that list's weight).
Missing = Literal["zero", "skip"]

# OpenSearch's min_max keeps the lowest hit just above zero so it still counts in the mean.
MIN_SCORE = 0.001


def _check_weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    weights = [float(w) for w in weights]
    if len(weights) != n:
        raise ConfigError(f"got {len(weights)} weights for {n} result lists; give one weight per list")
    if any(w < 0 or not math.isfinite(w) for w in weights):
        raise ConfigError(f"weights must be finite and non-negative, got {weights}")
    return weights


def _order(scores: dict[str, float], first_seen: dict[str, tuple[int, int]]) -> list[tuple[str, float]]:
    # first_seen[id] = (best rank, index of the list where it was reached): a total, stable order.
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))


def rrf(rankings: Sequence[Sequence[str]], *, k: int = 60,
        weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of ranked id lists; returns ``(id, fused score)`` best first.

    >>> rrf([["x"], ["x"]], k=1)
    [('x', 1.0)]
    """
    if k < 1:
        raise ConfigError(f"RRF rank constant k must be at least 1, got {k}")
    ws = _check_weights(weights, len(rankings))
    scores: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for list_index, (ranking, weight) in enumerate(zip(rankings, ws)):
        rank = 0
        seen_here: set[str] = set()
        for doc_id in ranking:
            if doc_id in seen_here:  # a duplicate inside one list keeps only its best rank
                continue
            seen_here.add(doc_id)
            rank += 1
            if doc_id in scores:
                scores[doc_id] += weight / (k + rank)
                if rank < first_seen[doc_id][0]:
                    first_seen[doc_id] = (rank, list_index)
            else:
                scores[doc_id] = weight / (k + rank)
                first_seen[doc_id] = (rank, list_index)
    return _order(scores, first_seen)


def normalize(scores: Sequence[float], method: Literal["min_max", "l2"] = "min_max") -> list[float]:
    """Normalise one result list's scores as OpenSearch's normalization processor does.

    >>> normalize([3.0, 4.0], "l2")
    [0.6, 0.8]
    >>> normalize([2.5])
    [1.0]
    """
    values = [float(s) for s in scores]
    if not values:
        return []
    if method == "min_max":
        low, high = min(values), max(values)
        if high == low:
            return [1.0] * len(values)
        out = [(s - low) / (high - low) for s in values]
        return [MIN_SCORE if v == 0.0 else v for v in out]
    if method == "l2":
        norm = math.sqrt(sum(s * s for s in values))
        return [s / norm if norm > 0 else 0.0 for s in values]
    raise ConfigError(f"normalization {method!r} is unknown; use 'min_max' or 'l2'")


def combine_normalized(results: Sequence[Sequence[tuple[str, float]]], *,
                       method: Literal["min_max", "l2"] = "min_max",
                       weights: Sequence[float] | None = None,
                       missing: Missing = "zero") -> list[tuple[str, float]]:
    """Normalise each ``(id, score)`` list, then take the weighted arithmetic mean per id over all
    lists, an id missing from a list counting 0 there (``missing="skip"``: over the lists
    containing it); returns ``(id, combined score)`` best first."""
    if missing not in ("zero", "skip"):
        raise ConfigError(f"missing={missing!r} is unknown; use 'zero' (the server's rule) or 'skip'")
    ws = _check_weights(weights, len(results))
    totals: dict[str, float] = {}
    weight_sums: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for list_index, (result, weight) in enumerate(zip(results, ws)):
        ids = [doc_id for doc_id, _ in result]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"result list {list_index} holds the same id twice; deduplicate it first")
        for rank, (doc_id, norm) in enumerate(zip(ids, normalize([s for _, s in result], method)), 1):
            totals[doc_id] = totals.get(doc_id, 0.0) + weight * norm
            weight_sums[doc_id] = weight_sums.get(doc_id, 0.0) + weight
            first_seen[doc_id] = min(first_seen.get(doc_id, (rank, list_index)), (rank, list_index))
    if missing == "zero":
        weight_sums = dict.fromkeys(totals, sum(ws))
    combined = {d: (totals[d] / weight_sums[d] if weight_sums[d] > 0 else 0.0) for d in totals}
    return _order(combined, first_seen)


def _rebuild(fused: list[tuple[str, float]], results: Sequence[Sequence[Document]],
             k: int | None) -> list[Document]:
    by_id: dict[str, Document] = {}
    for result in results:
        for doc in result:
            by_id.setdefault(doc.id, doc)
    top = fused if k is None else fused[:k]
    return [by_id[doc_id].model_copy(update={"score": score}) for doc_id, score in top]


def rrf_documents(results: Sequence[Sequence[Document]], *, k: int = 60,
                  weights: Sequence[float] | None = None, top_k: int | None = None) -> list[Document]:
    """:func:`rrf` over lists of documents (ranked best first); ``score`` becomes the fused score.

    >>> a, b = Document(id="a", text="A", score=9.0), Document(id="b", text="B", score=1.0)
    >>> [(d.id, round(d.score, 5)) for d in rrf_documents([[a, b], [b]])]
    [('b', 0.03252), ('a', 0.01639)]
    """
    return _rebuild(rrf([[d.id for d in r] for r in results], k=k, weights=weights), results, top_k)


def combine_documents(results: Sequence[Sequence[Document]], *, method: Literal["min_max", "l2"] = "min_max",
                      weights: Sequence[float] | None = None, top_k: int | None = None,
                      missing: Missing = "zero") -> list[Document]:
    """:func:`combine_normalized` over lists of scored documents; ``score`` becomes the combined score."""
    for result in results:
        for doc in result:
            if doc.score is None:
                raise ConfigError(f"document {doc.id!r} has no score; normalisation needs scored results")
    pairs = [[(d.id, float(d.score)) for d in r] for r in results]  # type: ignore[arg-type]
    return _rebuild(combine_normalized(pairs, method=method, weights=weights, missing=missing),
                    results, top_k)
