"""Which games to play: every pair on every query, a seeded sample per query, or adaptively.

A game is a :class:`Matchup` ``(qid, agent_a, agent_b)`` with the two names in sorted order, so the
same game always has the same key in the run store.

The :class:`AdaptiveScheduler` plays a few games for every pair, fits Bradley-Terry, and then spends
further games only on neighbours in the current ranking whose order is not yet settled: the gap
``theta_x - theta_y`` is under ``z`` standard errors of that difference (the pair's intervals still
overlap). The default ``z`` 1.645 asks for one-sided 95% confidence that each neighbour is in the
right order. An unsettled pair plays directly while it has queries left, then both agents play a common
third agent. It stops when every neighbouring pair is settled, when the unsettled pairs have nothing
left to play, or at ``max_games``.

>>> data_pairs = {("a", "b"): ["q1", "q2"], ("a", "c"): ["q1"], ("b", "c"): ["q2"]}
>>> len(initial_games(data_pairs, per_pair=1, seed=0))
3
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..errors import ArgumentError
from ..runtime import synchronous
from .data import Problem, TournamentData
from .pairwise import GameRecord
from .ranking import bradley_terry

__all__ = [
    "AdaptiveScheduler",
    "Matchup",
    "all_games",
    "available_games",
    "initial_games",
    "sample_games",
    "unsettled_pairs",
]


class Matchup(NamedTuple):
    """One game to play: two agents' answers to query ``qid`` (named apart from
    :class:`langrag_eval.compare.pairing.Pairing`, two runs' items paired for a comparison)."""

    qid: str
    agent_a: str
    agent_b: str


def available_games(data: TournamentData) -> tuple[list[Matchup], int, list[Problem]]:
    """Every game whose two agents both answered the query; plus the number skipped because one
    did not, and one problem per (query, agent) without an answer."""
    agents = data.agents
    games: list[Matchup] = []
    skipped = 0
    problems: list[Problem] = []
    for qid in sorted(data.answers):
        present = data.answers[qid]
        for x, y in itertools.combinations(agents, 2):
            if x in present and y in present:
                games.append(Matchup(qid, x, y))
            else:
                skipped += 1
        if len(agents) >= 2:
            for agent in agents:
                if agent not in present:
                    problems.append(Problem(kind="missing_answer", message=(
                        f"agent {agent!r} has no valid answer for query {qid!r}; its "
                        f"{len(agents) - 1} game(s) there are skipped")))
    return games, skipped, problems


def all_games(data: TournamentData) -> list[Matchup]:
    return available_games(data)[0]


def sample_games(games: Sequence[Matchup], n_per_query: int, *, seed: int = 0) -> list[Matchup]:
    """At most ``n_per_query`` games per query, drawn without replacement; a query's draw depends only
    on the seed and its qid, so adding queries does not change the others' games."""
    if n_per_query < 1:
        raise ArgumentError("n_games_per_query must be at least 1")
    by_query: dict[str, list[Matchup]] = {}
    for g in games:
        by_query.setdefault(g.qid, []).append(g)
    out: list[Matchup] = []
    for qid in sorted(by_query):
        pool = by_query[qid]
        pick = random.Random(f"{seed}:{qid}").sample(pool, min(n_per_query, len(pool)))
        out.extend(sorted(pick))
    return out


def _by_pair(games: Sequence[Matchup]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for g in games:
        out.setdefault((g.agent_a, g.agent_b), []).append(g.qid)
    return out


def initial_games(candidates: dict[tuple[str, str], list[str]], *, per_pair: int, seed: int
                  ) -> list[Matchup]:
    """``per_pair`` games for every pair, on queries drawn at random (seeded)."""
    out: list[Matchup] = []
    for (x, y), qids in sorted(candidates.items()):
        pick = random.Random(f"{seed}:{x}:{y}").sample(sorted(qids), min(per_pair, len(qids)))
        out.extend(Matchup(q, x, y) for q in pick)
    return out


def unsettled_pairs(records: Sequence[GameRecord], agents: Sequence[str], *, z: float
                    ) -> tuple[list[tuple[str, str]], list[str]]:
    """Neighbours in the current Bradley-Terry ranking whose order is not yet clear, and the ranking."""
    fit = bradley_terry([(r.agent_a, r.agent_b, r.score_a) for r in records], agents)
    order = sorted(agents, key=lambda a: -fit.theta[a])
    open_pairs = []
    for upper, lower in itertools.pairwise(order):
        gap = fit.theta[upper] - fit.theta[lower]
        if gap < z * fit.se_difference(upper, lower):
            open_pairs.append(tuple(sorted((upper, lower))))
    return open_pairs, order  # type: ignore[return-value]


Play = Callable[[list[Matchup]], Awaitable[list[Any]]]


@dataclass
class AdaptiveScheduler:
    """Spends judge calls where the ranking is uncertain. ``play`` runs a list of games and returns
    their records (``GameRecord`` or ``Unscored``) in order."""

    initial_per_pair: int = 10
    batch_per_pair: int = 10
    z: float = 1.645
    max_games: int | None = None
    seed: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""

    @staticmethod
    def _routes(pair: tuple[str, str], order: Sequence[str],
                remaining: dict[tuple[str, str], list[str]]) -> list[tuple[str, list[tuple[str, str]]]]:
        """Ways to learn more about ``pair``, best first: direct games while queries remain; then games
        of both agents against the same third agent (nearest in the ranking first), which compare
        them through that common opponent."""
        x, y = pair
        routes: list[tuple[str, list[tuple[str, str]]]] = []
        if remaining.get(pair):
            routes.append(("direct", [pair]))
        rank = {a: i for i, a in enumerate(order)}
        middle = (rank[x] + rank[y]) / 2
        for w in sorted((a for a in order if a not in pair), key=lambda a: abs(rank[a] - middle)):
            legs = [tuple(sorted((x, w))), tuple(sorted((y, w)))]
            if all(remaining.get(leg) for leg in legs):  # type: ignore[arg-type]
                routes.append((w, legs))  # type: ignore[arg-type]
        return routes

    async def arun(self, games: Sequence[Matchup], agents: Sequence[str], play: Play
                   ) -> list[tuple[Matchup, Any]]:
        candidates = _by_pair(games)
        rng = random.Random(self.seed)
        remaining = {pair: rng.sample(sorted(q), len(q)) for pair, q in sorted(candidates.items())}
        budget = self.max_games if self.max_games is not None else len(games)
        batch = initial_games(candidates, per_pair=self.initial_per_pair, seed=self.seed)[:budget]
        for g in batch:
            remaining[(g.agent_a, g.agent_b)].remove(g.qid)
        played: list[tuple[Matchup, Any]] = []
        if not batch:
            self.stopped = "no games"
        while batch:
            records = await play(batch)
            played.extend(zip(batch, records))
            scored = [r for _, r in played if isinstance(r, GameRecord)]
            open_pairs, order = unsettled_pairs(scored, agents, z=self.z)
            self.rounds.append({"games": len(batch), "total": len(played), "ranking": order,
                                "unsettled": [list(p) for p in open_pairs]})
            if not open_pairs:
                self.stopped = "settled"
                return played
            left = budget - len(played)
            batch = []
            for pair in open_pairs:
                for _, legs in self._routes(pair, order, remaining)[:1]:
                    per_leg = max(1, self.batch_per_pair // len(legs))
                    for leg in legs:
                        take = remaining[leg][:max(0, min(per_leg, left - len(batch)))]
                        remaining[leg] = remaining[leg][len(take):]
                        batch.extend(Matchup(q, *leg) for q in take)
            if not batch:
                pending = any(self._routes(p, order, remaining) for p in open_pairs)
                self.stopped = "budget" if pending else "exhausted"
        return played

    def run(self, games: Sequence[Matchup], agents: Sequence[str], play: Play) -> list[tuple[Matchup, Any]]:
        """:meth:`arun` from synchronous code."""
        return synchronous(self.arun)(games, agents, play)
