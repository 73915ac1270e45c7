"""Pooling synthetic queries: drop near-duplicates, then sample each generator by quota (RAGElo
section 4: 200 of 840 pooled queries, 100 from GPT-4 and 50/30/20 from three Claude 3 models).

Near-duplicates are found greedily in pool order: a query is dropped when it is similar enough to
one already kept. Similarity is the Jaccard overlap of normalised token sets (Unicode NFKC, case
folded, punctuation removed), or the cosine of embeddings when an embedder is given.

>>> from langrag_eval.synth.queries import SyntheticQuery
>>> pool = [SyntheticQuery(id=str(i), text=t, passage_id="p#1", doc_id="p", generator="g", prompt="synth/queries")
...         for i, t in enumerate(["What is the IP rating?", "what is the IP rating", "Who leads the project?"])]
>>> kept, dropped = drop_near_duplicates(pool)
>>> [q.text for q in kept], [(d.id, d.duplicate_of) for d in dropped]
(['What is the IP rating?', 'Who leads the project?'], [('1', '0')])
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..models.embeddings import Embedder, cosine_matrix
from ..errors import ConfigError

__all__ = [
    "Duplicate",
    "QuotaResult",
    "drop_near_duplicates",
    "jaccard",
    "normalise_query",
    "sample_by_quota",
    "token_set",
]

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalise_query(text: str) -> str:
    """NFKC, case-folded, punctuation removed, whitespace collapsed.

    >>> normalise_query("  What's the IP-rating?? ")
    'what s the ip rating'
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCT.sub(" ", text).split())


def token_set(text: str) -> frozenset[str]:
    return frozenset(normalise_query(text).split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|; two empty sets are identical (1.0)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class Duplicate(BaseModel):
    """A dropped query, the kept query it duplicates, and how similar they were."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    generator: str
    duplicate_of: str
    similarity: float


def drop_near_duplicates(queries: Sequence, *, threshold: float = 0.8, embedder: Embedder | None = None,
                         embedding_threshold: float = 0.92) -> tuple[list, list[Duplicate]]:
    """Keep the first of each set of near-duplicates, in pool order. Items need ``id``, ``text``
    and ``generator``. Exact matches after normalisation always count as duplicates."""
    if not 0 < threshold <= 1 or not 0 < embedding_threshold <= 1:
        raise ConfigError("similarity thresholds must lie in (0, 1]")
    kept: list = []
    dropped: list[Duplicate] = []
    exact: dict[str, int] = {}
    sets: list[frozenset[str]] = []
    vectors = None
    if embedder is not None and queries:
        vectors = np.asarray(embedder.embed([q.text for q in queries]), dtype=np.float32)
    kept_index: list[int] = []
    for i, q in enumerate(queries):
        norm = normalise_query(q.text)
        if norm in exact:
            first = kept[exact[norm]]
            dropped.append(Duplicate(id=q.id, text=q.text, generator=q.generator, duplicate_of=first.id,
                                     similarity=1.0))
            continue
        best, best_sim = -1, 0.0
        if vectors is not None and kept_index:
            sims = cosine_matrix(vectors[i:i + 1], vectors[kept_index])[0]
            j = int(np.argmax(sims))
            if float(sims[j]) >= embedding_threshold:
                best, best_sim = j, float(sims[j])
        elif vectors is None:
            tokens = frozenset(norm.split())
            for j, other in enumerate(sets):
                sim = jaccard(tokens, other)
                if sim >= threshold and sim > best_sim:
                    best, best_sim = j, sim
        if best >= 0:
            dropped.append(Duplicate(id=q.id, text=q.text, generator=q.generator,
                                     duplicate_of=kept[best].id, similarity=round(best_sim, 4)))
            continue
        exact[norm] = len(kept)
        kept.append(q)
        kept_index.append(i)
        sets.append(frozenset(norm.split()))
    return kept, dropped


class QuotaResult(BaseModel):
    """Per generator: how many were available, asked for, selected, and the shortfall."""

    available: dict[str, int]
    quotas: dict[str, int | None]
    selected: dict[str, int]
    shortfall: dict[str, int]


def sample_by_quota(queries: Sequence, quotas: Mapping[str, int | None] | None, *,
                    seed: int = 0) -> tuple[list, QuotaResult]:
    """Draw ``quotas[generator]`` queries from each generator's pool (seeded, without replacement);
    a quota of None, or no quotas at all, keeps every query of that generator. Generators missing
    from a given quota table contribute nothing. Output keeps pool order."""
    rng = random.Random(seed)
    by_gen: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        by_gen.setdefault(q.generator, []).append(i)
    table: dict[str, int | None] = dict(quotas) if quotas is not None else {g: None for g in by_gen}
    for g, n in table.items():
        if n is not None and n < 0:
            raise ConfigError(f"quota for {g} must not be negative")
    chosen: set[int] = set()
    selected: dict[str, int] = {}
    shortfall: dict[str, int] = {}
    for g, quota in table.items():
        pool = by_gen.get(g, [])
        take = pool if quota is None or quota >= len(pool) else rng.sample(pool, quota)
        chosen.update(take)
        selected[g] = len(take)
        shortfall[g] = 0 if quota is None else max(0, quota - len(pool))
    result = QuotaResult(available={g: len(by_gen.get(g, [])) for g in sorted(set(by_gen) | set(table))},
                         quotas=table, selected=selected, shortfall=shortfall)
    return [q for i, q in enumerate(queries) if i in chosen], result
