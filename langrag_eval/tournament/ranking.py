"""Rankings from pairwise games: Elo averaged over shuffled tournaments, Bradley-Terry maximum
likelihood with bootstrap intervals, and the win / tie / loss matrix. Pure functions over plain data.

A game is ``(agent_a, agent_b, score_a)`` with ``score_a`` 1 (a won), 0.5 (tie) or 0 (b won).

Elo follows RAGElo's description (games shuffled, the final ratings averaged over many
tournaments) in floating point, with the standard expected score
``E_a = 1 / (1 + 10 ** ((R_b - R_a) / 400))`` and every tournament starting afresh. The paper states
no K and no initial rating: K 32, initial 1000 and the 400-point scale are our choices (the usual
chess ones). Ratings therefore centre on 1000. RAGElo's Table 6 (436-571) came from the May-2024
toolkit, which truncated ratings to integers after every game, so every rating drifted down (by
about 500 over 3,000 games); the order of the agents and the spread between them are comparable,
the absolute values are not. All tournaments
run at once as rows of one numpy array, so 500 tournaments of 3,000 games take a fraction of a
second; the game orders are streamed a block of steps at a time (:mod:`.orders`), so memory stays
bounded and time linear in games (500 tournaments of 950,000 games fit in a few hundred MB).

>>> games = [("x", "y", 1.0), ("x", "y", 0.5), ("y", "x", 0.0)]
>>> elo = elo_ratings(games, ["x", "y"], tournaments=10, seed=1)
>>> elo.mean["x"] > 1000 > elo.mean["y"]
True
>>> fit = bradley_terry(games + [("y", "x", 1.0)], ["x", "y"])
>>> round(fit.theta["x"] - fit.theta["y"], 3)  # x scores 2.5 of 4 games: log(2.5 / 1.5)
0.511
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import ArgumentError
from .orders import step_blocks

__all__ = [
    "BTFit",
    "BTIntervals",
    "EloResult",
    "Game",
    "bradley_terry",
    "bradley_terry_intervals",
    "elo_ratings",
    "elo_table",
    "elo_update",
    "expected_score",
    "outcome_counts",
    "win_matrix",
]

Game = tuple[str, str, float]
ELO_SCALE = 400.0 / math.log(10.0)  # one Bradley-Terry log-odds unit in Elo points
_STEPS = 1024   # Elo steps whose indices are expanded at once: 1024 x 500 tournaments x 8 B = 4 MB
_BOOT_BATCH = 32   # bootstrap resamples scored in one sparse product


def expected_score(r_a: float | np.ndarray, r_b: float | np.ndarray) -> float | np.ndarray:
    """Elo's expected score of a against b."""
    return 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))


def elo_update(r_a: float, r_b: float, score_a: float, k: float = 32.0) -> tuple[float, float]:
    """One game: both new ratings. The sum of the two ratings never changes.

    >>> elo_update(1000.0, 1000.0, 1.0)
    (1016.0, 984.0)
    """
    delta = k * (score_a - expected_score(r_a, r_b))
    return r_a + delta, r_b - delta


def _encode(games: Sequence[Game], agents: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    index = {a: i for i, a in enumerate(agents)}
    if len(index) != len(agents):
        raise ArgumentError("agent names must be unique")
    n = len(games)
    try:
        # one pass per column through C-speed iterators, checked as arrays; "+ 0.0" refuses text
        a = np.fromiter((index.get(g[0], -1) for g in games), np.int64, count=n)
        b = np.fromiter((index.get(g[1], -1) for g in games), np.int64, count=n)
        s = np.fromiter((g[2] + 0.0 for g in games), np.float64, count=n)
    except (TypeError, ValueError, IndexError):
        return _encode_one_by_one(games, index)
    if (a < 0).any() or (b < 0).any() or (a == b).any() or not np.isin(s, (0.0, 0.5, 1.0)).all():
        return _encode_one_by_one(games, index)
    return a, b, s


def _encode_one_by_one(games: Sequence[Game], index: dict[str, int]
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The slow path: game by game, raising on the first bad one with its position."""
    a = np.empty(len(games), dtype=np.int64)
    b = np.empty(len(games), dtype=np.int64)
    s = np.empty(len(games), dtype=np.float64)
    for n, (x, y, score) in enumerate(games):
        if x not in index or y not in index:
            raise ArgumentError(f"game {n} names an agent not in the list: {x!r} vs {y!r}")
        if x == y:
            raise ArgumentError(f"game {n} pits {x!r} against itself")
        if score not in (0.0, 0.5, 1.0):
            raise ArgumentError(f"game {n} has score {score!r}; expected 0, 0.5 or 1")
        a[n], b[n], s[n] = index[x], index[y], score
    return a, b, s


@dataclass(frozen=True)
class EloResult:
    """Final ratings averaged over tournaments, their spread across tournaments (the part of the
    uncertainty that comes from game order) and the 2.5 / 97.5 percentiles."""

    mean: dict[str, float]
    std: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    tournaments: int
    games: int


def elo_ratings(games: Sequence[Game], agents: Sequence[str], *, k: float = 32.0,
                initial: float = 1000.0, tournaments: int = 500, seed: int = 0) -> EloResult:
    """Play every game once per tournament in a fresh random order; average the final ratings."""
    if tournaments < 1:
        raise ArgumentError("tournaments must be at least 1")
    a, b, s = _encode(games, agents)
    n_games = len(games)
    n = len(agents)
    flat = np.full(tournaments * n, float(initial))   # tournament t's ratings at [t * n, (t + 1) * n)
    if n_games:
        # Games with the same (a, b, score) are interchangeable, so an order is kept as a sequence of
        # kinds: small codes that bound the orders' memory (see .orders).
        kinds, kind_of = np.unique((a * n + b) * 3 + (s * 2).astype(np.int64), return_inverse=True)
        kind_a, kind_b, kind_s = kinds // 3 // n, kinds // 3 % n, (kinds % 3) / 2.0
        base = (np.arange(tournaments) * n)[None, :]
        scale = math.log(10.0) / 400.0
        blocks = step_blocks(kind_of.reshape(-1), len(kinds), tournaments=tournaments,
                             rng=np.random.default_rng(seed))
        for block in blocks:
            for at in range(0, len(block), _STEPS):
                # step g plays, in every tournament at once, that tournament's g-th game; flat indices
                # and contiguous rows per step keep the inner loop to a few 1-D gathers and scatters
                part = block[at:at + _STEPS]
                fa, fb, gs = kind_a[part] + base, kind_b[part] + base, kind_s[part]
                for g in range(len(part)):
                    ia, ib = fa[g], fb[g]
                    ra, rb = flat[ia], flat[ib]
                    delta = k * (gs[g] - 1.0 / (1.0 + np.exp((rb - ra) * scale)))
                    flat[ia] = ra + delta
                    flat[ib] = rb - delta
    ratings = flat.reshape(tournaments, n)
    mean, std = ratings.mean(axis=0), ratings.std(axis=0)
    low, high = np.percentile(ratings, [2.5, 97.5], axis=0)
    pick = lambda v: {agent: float(v[i]) for i, agent in enumerate(agents)}
    return EloResult(mean=pick(mean), std=pick(std), low=pick(low), high=pick(high),
                     tournaments=tournaments, games=n_games)


# ---------------------------------------------------------------- Bradley-Terry


def _score_matrix(a: np.ndarray, b: np.ndarray, s: np.ndarray, n: int) -> np.ndarray:
    """W[i, j]: points i scored against j, a tie counting half a win for each side."""
    w = np.zeros((n, n))
    np.add.at(w, (a, b), s)
    np.add.at(w, (b, a), 1.0 - s)
    return w


def _fit(w: np.ndarray, prior: float | None, tol: float = 1e-10, max_iter: int = 200
         ) -> tuple[np.ndarray, np.ndarray, bool]:
    """Newton's method on the log-likelihood, theta centred at zero. Returns theta, the Fisher
    information and whether a pseudo-tie prior had to be added for the maximum to exist."""
    n = w.shape[0]
    regularised = False
    if prior is None:
        # The maximum exists only when every agent can reach every other through "scored against"
        # edges; otherwise an unbeaten agent's strength runs to infinity.
        strong, _ = connected_components(w > 0, directed=True, connection="strong")
        if strong > 1:
            prior, regularised = 0.1, True
    if prior:
        w = w + prior * 0.5 * (1.0 - np.eye(n))
    total = w + w.T
    theta = np.zeros(n)

    def loglik(t: np.ndarray) -> float:
        d = t[:, None] - t[None, :]
        return float(np.sum(w * -np.logaddexp(0.0, -d)))

    current = loglik(theta)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = (w - total * p).sum(axis=1)
        info = total * p * (1.0 - p)
        fisher = np.diag(info.sum(axis=1)) - info
        # fisher is a graph Laplacian (null space: constant shifts); pin the gauge with 1 1^T / n.
        step = np.linalg.solve(fisher + np.ones((n, n)) / n, grad)
        scale = 1.0
        while scale > 1e-6:
            candidate = theta + scale * step
            candidate -= candidate.mean()
            value = loglik(candidate)
            if value >= current - 1e-12:
                break
            scale /= 2
        theta, improvement, current = candidate, value - current, value
        if np.max(np.abs(scale * step)) < tol or improvement < tol * 1e-3:
            break
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    info = total * p * (1.0 - p)
    fisher = np.diag(info.sum(axis=1)) - info
    return theta, fisher, regularised


@dataclass(frozen=True)
class BTFit:
    """Bradley-Terry strengths: ``theta`` (log-odds, centred at 0), ``rating`` (the same on the Elo
    scale around ``initial``), ``se`` from the Fisher information scaled by the Pearson
    ``dispersion`` of the scores, and whether a small pseudo-tie prior was needed because some agent
    never lost (or never won), so the plain maximum is infinite."""

    theta: dict[str, float]
    rating: dict[str, float]
    se: dict[str, float]
    covariance: list[list[float]]
    agents: tuple[str, ...]
    regularised: bool
    dispersion: float = 1.0

    def se_difference(self, x: str, y: str) -> float:
        """Standard error of ``theta[x] - theta[y]``."""
        i, j = self.agents.index(x), self.agents.index(y)
        c = self.covariance
        return math.sqrt(max(c[i][i] + c[j][j] - 2 * c[i][j], 0.0))


def bradley_terry(games: Sequence[Game], agents: Sequence[str], *, prior: float | None = None,
                  initial: float = 1000.0) -> BTFit:
    """Maximum-likelihood Bradley-Terry strengths; ties count as half a win for each side.

    ``prior`` adds that many pseudo-ties between every pair; by default one (0.1) is added only
    when the plain maximum does not exist.
    """
    return _bradley_terry(*_encode(games, agents), tuple(agents), prior=prior, initial=initial)


def _bradley_terry(a: np.ndarray, b: np.ndarray, s: np.ndarray, names: tuple[str, ...], *,
                   prior: float | None, initial: float) -> BTFit:
    theta, fisher, regularised = _fit(_score_matrix(a, b, s, len(names)), prior)
    dispersion = _dispersion(theta, a, b, s)
    cov = dispersion * np.linalg.pinv(fisher) if len(s) else np.zeros((len(names), len(names)))
    return BTFit(theta={x: float(theta[i]) for i, x in enumerate(names)},
                 rating={x: float(initial + ELO_SCALE * theta[i]) for i, x in enumerate(names)},
                 se={x: float(math.sqrt(max(cov[i, i], 0.0))) for i, x in enumerate(names)},
                 covariance=cov.tolist(), agents=names, regularised=regularised, dispersion=dispersion)


def _dispersion(theta: np.ndarray, a: np.ndarray, b: np.ndarray, s: np.ndarray) -> float:
    """Pearson dispersion of the game scores around the fitted odds. A tie scores 0.5, so games with
    many ties vary less than the win/loss coin the Fisher information assumes; scaling the covariance
    by this factor (quasi-likelihood) keeps the standard errors honest. Floored at 0.25 so a few
    identical outcomes cannot claim certainty; 1 when there are too few games to estimate it."""
    n, k = len(s), len(theta)
    if n <= k:
        return 1.0
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    phi = float(np.sum((s - p) ** 2 / np.maximum(p * (1 - p), 1e-12)) / (n - (k - 1)))
    return max(phi, 0.25)


@dataclass(frozen=True)
class BTIntervals:
    """Bootstrap percentile intervals for Bradley-Terry ratings (Elo scale), resampling queries."""

    fit: BTFit
    low: dict[str, float]
    high: dict[str, float]
    level: float
    n_boot: int


def bradley_terry_intervals(games: Sequence[Game], agents: Sequence[str], groups: Sequence[str],
                            *, n_boot: int = 200, level: float = 0.95, seed: int = 0,
                            initial: float = 1000.0) -> BTIntervals:
    """Fit once on all games, then refit on ``n_boot`` resamples of the groups (queries) drawn with
    replacement: games of one query share the query's difficulty, so they are resampled together."""
    if len(groups) != len(games):
        raise ArgumentError("groups must name one query per game")
    a, b, s = _encode(games, agents)
    fit = _bradley_terry(a, b, s, tuple(agents), prior=None, initial=initial)
    n = len(agents)
    keys = sorted(set(groups))
    if not keys or n_boot < 1:
        return BTIntervals(fit, dict(fit.rating), dict(fit.rating), level, 0)
    position = {g: i for i, g in enumerate(keys)}
    gi = np.array([position[g] for g in groups], dtype=np.int64)
    # Each query's points per ordered pair as a sparse (pair, query) matrix: memory grows with the
    # games played, not with queries x agents^2. A resample's score matrix is that matrix times the
    # resample's query counts; every entry is a multiple of 0.5, so the sums are exact in any order.
    per_query = csr_matrix((np.concatenate([s, 1.0 - s]),
                            (np.concatenate([a * n + b, b * n + a]), np.concatenate([gi, gi]))),
                           shape=(n * n, len(keys)))
    rng = np.random.default_rng(seed)
    draws = np.empty((n_boot, n))
    uniform = np.full(len(keys), 1.0 / len(keys))
    for start in range(0, n_boot, _BOOT_BATCH):
        # one pass over the sparse matrix scores a batch of resamples (drawn in the same order)
        counts = np.stack([rng.multinomial(len(keys), uniform)
                           for _ in range(min(_BOOT_BATCH, n_boot - start))], axis=1)
        scores = per_query @ counts.astype(np.float64)
        for j in range(counts.shape[1]):
            theta, _, _ = _fit(scores[:, j].reshape(n, n), None)
            draws[start + j] = initial + ELO_SCALE * theta
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(draws, [tail, 100 - tail], axis=0)
    return BTIntervals(fit=fit, low={x: float(lo[i]) for i, x in enumerate(agents)},
                       high={x: float(hi[i]) for i, x in enumerate(agents)}, level=level,
                       n_boot=n_boot)


# ---------------------------------------------------------------- tables


def outcome_counts(games: Sequence[Game], agents: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
    """``counts[x][y] = {"win", "tie", "loss"}``: x's record against y (both directions filled)."""
    counts = {x: {y: {"win": 0, "tie": 0, "loss": 0} for y in agents if y != x} for x in agents}
    for x, y, score in games:
        key = {1.0: ("win", "loss"), 0.5: ("tie", "tie"), 0.0: ("loss", "win")}[score]
        counts[x][y][key[0]] += 1
        counts[y][x][key[1]] += 1
    return counts


def win_matrix(games: Sequence[Game], agents: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """The paper's Table 5: for each ordered pair, the share of their games x won, tied and lost,
    plus the number of games; and each agent's average win share over its opponents."""
    counts = outcome_counts(games, agents)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for x in agents:
        row: dict[str, dict[str, float]] = {}
        for y, c in counts[x].items():
            n = c["win"] + c["tie"] + c["loss"]
            row[y] = {"games": n, "win": c["win"] / n if n else 0.0, "tie": c["tie"] / n if n else 0.0,
                      "loss": c["loss"] / n if n else 0.0}
        played = [v["win"] for v in row.values() if v["games"]]
        row["average"] = {"win": sum(played) / len(played) if played else 0.0}
        table[x] = row
    return table


def elo_table(elo: EloResult) -> list[dict[str, float | str | int]]:
    """The paper's Table 6: agents by mean Elo, best first, with the spread across tournaments."""
    order = sorted(elo.mean, key=lambda x: -elo.mean[x])
    return [{"rank": i + 1, "agent": x, "elo": elo.mean[x], "std": elo.std[x], "low": elo.low[x],
             "high": elo.high[x]} for i, x in enumerate(order)]
