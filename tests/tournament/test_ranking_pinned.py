"""Elo and the Bradley-Terry bootstrap give the same numbers for the same seed as the implementation
they replaced (which built every tournament's game order at once, (tournaments x games) arrays).

``data/pinned_rankings.json`` holds that implementation's outputs for the inputs ``_cases`` draws; it
was recorded before the orders were streamed, and must never be re-recorded from the code under test.
The comparison allows 1e-9 Elo points: numpy may choose another SIMD ``exp`` kernel on another CPU,
which can move the last bit; on one machine the streamed and in-memory paths agree bit for bit (see
test_ranking_streaming.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langrag_eval.tournament.ranking import bradley_terry_intervals, elo_ratings

PINNED = Path(__file__).parent / "data" / "pinned_rankings.json"


def _cases() -> list[dict[str, Any]]:
    """Seeded random tournaments: 2-9 agents, 0-3,000 games, ties, unbeaten and idle agents."""
    rng = np.random.default_rng(20261122)
    cases = []
    for i in range(12):
        n_agents = int(rng.integers(2, 10))
        agents = [f"agent-{j}" for j in range(n_agents)]
        n_games = 0 if i == 0 else int(rng.choice([1, 7, 60, 400, 3000]))
        n_queries = max(1, n_games // max(1, n_agents))
        tie = float(rng.uniform(0.0, 0.5))
        strength = rng.normal(0.0, 1.0, n_agents)
        active = n_agents if i % 4 else max(2, n_agents - 1)   # the last agent idle every 4th case
        games, groups = [], []
        for _ in range(n_games):
            x, y = rng.choice(active, size=2, replace=False)
            p = 1.0 / (1.0 + np.exp(strength[y] - strength[x]))
            u = rng.random()
            score = 0.5 if u < tie else (1.0 if rng.random() < p else 0.0)
            if i % 5 == 1:
                score = 1.0 if x < y else 0.0   # a strict order: agent-0 unbeaten
            games.append((agents[x], agents[y], score))
            groups.append(f"q{int(rng.integers(n_queries))}")
        cases.append({"agents": agents, "games": games, "groups": groups,
                      "tournaments": int(rng.choice([1, 3, 50, 200])), "seed": int(rng.integers(1000)),
                      "k": float(rng.choice([16.0, 32.0])), "initial": float(rng.choice([1000.0, 1500.0])),
                      "n_boot": int(rng.choice([1, 20, 60]))})
    return cases


def _outputs(case: dict[str, Any]) -> dict[str, Any]:
    elo = elo_ratings(case["games"], case["agents"], k=case["k"], initial=case["initial"],
                      tournaments=case["tournaments"], seed=case["seed"])
    boot = bradley_terry_intervals(case["games"], case["agents"], case["groups"], n_boot=case["n_boot"],
                                   seed=case["seed"], initial=case["initial"])
    return {"elo": {"mean": elo.mean, "std": elo.std, "low": elo.low, "high": elo.high},
            "bt": {"rating": boot.fit.rating, "se": boot.fit.se, "low": boot.low, "high": boot.high}}


@pytest.mark.parametrize("index", range(12))
def test_ratings_equal_the_pinned_outputs_for_the_same_seed(index: int) -> None:
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))[index]
    got = _outputs(_cases()[index])
    for part in ("elo", "bt"):
        for field, values in pinned[part].items():
            assert got[part][field] == pytest.approx(values, abs=1e-9, rel=0), (part, field)
