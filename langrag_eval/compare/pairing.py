"""Pairing the items of two runs: by content identity (question and reference) when both runs
stored an item index, else by item id. Repeated keys (the same question asked twice) pair in order:
the first occurrence with the first, the second with the second.

>>> from langrag_eval.compare.observations import Observation
>>> a = [Observation(id="1", key="k1"), Observation(id="2", key="k2")]
>>> b = [Observation(id="x", key="k2"), Observation(id="y", key="k3")]
>>> p = pair(a, b)
>>> [(x.id, y.id) for x, y in p.pairs], [o.id for o in p.only_a], [o.id for o in p.only_b], p.by
([('2', 'x')], ['1'], ['y'], 'content')
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .observations import Observation

__all__ = ["Pairing", "pair"]


@dataclass(frozen=True)
class Pairing:
    pairs: list[tuple[Observation, Observation]]
    only_a: list[Observation]
    only_b: list[Observation]
    by: str          # "content" or "id"
    repeated: int    # keys seen more than once in a run (paired in order)


def _keys(items: Sequence[Observation], by: str) -> list[str]:
    seen: dict[str, int] = defaultdict(int)
    out = []
    for o in items:
        base = (o.key if by == "content" else o.id) or o.id
        seen[base] += 1
        out.append(f"{base}#{seen[base]}")
    return out


def pair(a: Sequence[Observation], b: Sequence[Observation]) -> Pairing:
    """Pair ``a``'s items with ``b``'s, keeping ``a``'s order."""
    by = "content" if all(o.key for o in a) and all(o.key for o in b) and a and b else "id"
    ka, kb = _keys(a, by), _keys(b, by)
    index_b = dict(zip(kb, b))
    keys_a = set(ka)
    pairs = [(o, index_b[k]) for k, o in zip(ka, a) if k in index_b]
    repeated = sum(1 for k in set(ka) | set(kb) if not k.endswith("#1"))
    return Pairing(pairs=pairs, only_a=[o for k, o in zip(ka, a) if k not in index_b],
                   only_b=[o for k, o in zip(kb, b) if k not in keys_a], by=by, repeated=repeated)
