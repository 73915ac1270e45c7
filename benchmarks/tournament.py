"""Tournament simulation: how well Elo, Bradley-Terry and adaptive scheduling recover a known ranking,
what each costs in judge calls, and how fast 500 Elo tournaments run.

Six agents have known Bradley-Terry strengths (Elo scale, 50 points apart by default). For every
(query, pair of agents) a scripted judge holds one opinion drawn from those strengths (a tie with
probability ``--tie``, else a win drawn by the Bradley-Terry odds); each call it answers with that
opinion, except that with probability ``--noise`` it names the answer shown first (position bias),
so the both-orders rule turns some games into ties. The games go through the real runtime:
``arun_tournament`` -> ``PairwiseEvaluator`` -> ``Judge`` -> ``ScriptedModel``. The agents retrieve no
documents here, so every judge call is a game call.

For each seed it reports Kendall tau between recovered and true ranking (Bradley-Terry and Elo) and
the judge calls spent, for four schedules: full round robin, a random half (7 of 15 pairs per query),
the adaptive scheduler held to half the round-robin games, and the adaptive scheduler left to run
until its stopping rule is met. Then it times ``elo_ratings`` for 500 tournaments over 6 agents x 200 queries x 15
games.

With ``--agents N`` it measures scale instead: a round robin of N agents over a fifth of ``--queries``
and over all of them (random scores), 500 Elo tournaments and a 200-resample Bradley-Terry bootstrap,
each size in a fresh process so that its peak RSS is its own. Time per game should stay flat from
one size to the next and the peak should not grow with tournaments x games.

    python benchmarks/tournament.py                      # 10 seeds, 200 queries
    python benchmarks/tournament.py --seeds 3 --gap 30 --noise 0.3
    python benchmarks/tournament.py --agents 20 --queries 5000   # 1,000 and 5,000 queries
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import multiprocessing
import os
import re
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.tournament import (
    TournamentConfig, TournamentData, bradley_terry_intervals, elo_ratings, arun_tournament,
)

__all__ = ["main", "scale", "simulate", "time_elo"]

AGENTS = ["rag-knn", "fusion-knn", "rag-bm25", "rag-hybrid", "fusion-hybrid", "fusion-bm25"]


def _uniform(*parts: Any) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def make_judge(strength: dict[str, float], *, seed: int, noise: float, tie: float):
    """A reply function that answers from ``strength`` (Elo scale) with position-bias noise."""
    pattern = re.compile(r"answer of (\S+) to (\S+)")

    def reply(prompt: str) -> str:
        agent_a, qid = pattern.search(prompt.split("<answer_a>")[1]).groups()
        agent_b, _ = pattern.search(prompt.split("<answer_b>")[1]).groups()
        x, y = sorted((agent_a, agent_b))
        u = _uniform(seed, "opinion", qid, x, y)
        p_x = 1 / (1 + 10 ** ((strength[y] - strength[x]) / 400))
        winner = None if u < tie else (x if (u - tie) / (1 - tie) < p_x else y)
        shown_first = agent_a
        if _uniform(seed, "bias", qid, agent_a, agent_b) < noise:
            return "Position-biased look.\n[[A]]"
        verdict = "C" if winner is None else ("A" if winner == shown_first else "B")
        return f"Weighed both.\n[[{verdict}]]"
    return reply


def _data(queries: int) -> TournamentData:
    return TournamentData.from_records(
        {"qid": f"q{q}", "query": f"question {q}", "agent": a, "answer": f"answer of {a} to q{q}"}
        for q in range(queries) for a in AGENTS)


def _tau(scores: dict[str, float], strength: dict[str, float]) -> float:
    return float(kendalltau([scores[a] for a in AGENTS], [strength[a] for a in AGENTS]).statistic)


SCHEDULES = ("round_robin", "sample_half", "adaptive_half", "adaptive")


async def simulate(seed: int, *, queries: int, gap: float, noise: float, tie: float,
                   adaptive: dict[str, Any]) -> dict[str, Any]:
    """One seed: the same judge under four schedules. ``sample_half`` plays 7 of the 15 pairs per
    query at random; ``adaptive_half`` is the adaptive scheduler held to half the round-robin games;
    ``adaptive`` runs until its stopping rule says settled (or nothing is left to play)."""
    strength = {a: i * gap for i, a in enumerate(AGENTS)}
    data = _data(queries)
    half = queries * 15 // 2
    configs = {
        "round_robin": TournamentConfig(schedule="all", seed=seed, n_boot=100),
        "sample_half": TournamentConfig(schedule="sample", n_games_per_query=7, seed=seed, n_boot=100),
        "adaptive_half": TournamentConfig(schedule="adaptive", seed=seed, n_boot=100, max_games=half, **adaptive),
        "adaptive": TournamentConfig(schedule="adaptive", seed=seed, n_boot=100, **adaptive),
    }
    out: dict[str, Any] = {"seed": seed}
    for name, config in configs.items():
        model = ScriptedModel(make_judge(strength, seed=seed, noise=noise, tie=tie))
        result = await arun_tournament(data, Judge(model, concurrency=64), config, concurrency=64)
        s = result.summary
        bt = {r["agent"]: r["bt_rating"] for r in s["ranking"]}
        elo = {r["agent"]: r["elo"] for r in s["ranking"]}
        out[name] = {"tau_bt": _tau(bt, strength), "tau_elo": _tau(elo, strength), "calls": model.calls,
                     "games": s["games"]["played"], "position_flips": s["games"]["position_flips"],
                     "stopped": (s["adaptive"] or {}).get("stopped")}
    return out


def time_elo(queries: int = 200, tournaments: int = 500, repeats: int = 5) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    games = [(x, y, float(rng.choice([0.0, 0.5, 1.0])))
             for _ in range(queries) for x, y in itertools.combinations(AGENTS, 2)]
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        elo_ratings(games, AGENTS, tournaments=tournaments, seed=r)
        times.append(time.perf_counter() - start)
    return {"games": len(games), "tournaments": tournaments, "seconds": times, "best": min(times),
            "median": statistics.median(times)}


def _rss_mib(peak: bool) -> float:
    """This process's peak or current resident set, in MiB (VmHWM or VmRSS: ru_maxrss would start
    at the parent's peak, which Linux carries into a child across exec)."""
    field = "VmHWM:" if peak else "VmRSS:"
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(field)) / 1024


def scale(agents: int, queries: int, tournaments: int = 500, n_boot: int = 200) -> dict[str, Any]:
    """Time and peak memory of Elo and the Bradley-Terry bootstrap over a random round robin."""
    names = [f"agent-{i:02d}" for i in range(agents)]
    pairs = list(itertools.combinations(names, 2))
    scores = np.random.default_rng(0).choice([0.0, 0.5, 1.0], size=queries * len(pairs)).tolist()
    games = [(x, y, s) for (x, y), s in zip(pairs * queries, scores)]
    groups = [f"q{n // len(pairs)}" for n in range(len(games))]
    data_mib = _rss_mib(peak=False)
    start = time.perf_counter()
    elo_ratings(games, names, tournaments=tournaments, seed=0)
    elo_s = time.perf_counter() - start
    elo_peak = _rss_mib(peak=True)
    start = time.perf_counter()
    bradley_terry_intervals(games, names, groups, n_boot=n_boot, seed=0)
    bt_s = time.perf_counter() - start
    return {"agents": agents, "queries": queries, "games": len(games), "tournaments": tournaments,
            "n_boot": n_boot, "elo_s": elo_s, "bt_s": bt_s, "data_mib": data_mib,
            "elo_peak_mib": elo_peak, "peak_mib": _rss_mib(peak=True)}


def _scale_report(agents: int, queries: int) -> int:
    sizes = sorted({max(1, queries // 5), queries})
    rows = []
    for q in sizes:   # a fresh process per size: the peak is a high-water mark
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows.append(pool.submit(scale, agents, q).result())
    print(f"scale: {agents} agents round robin, 500 Elo tournaments, 200 bootstrap resamples "
          f"({os.cpu_count()} CPUs, 1-min load average {os.getloadavg()[0]:.1f})")
    print(f"{'queries':>8} {'games':>9} {'Elo s':>8} {'us/game':>8} {'BT s':>7} {'data MiB':>9} "
          f"{'Elo peak':>9} {'peak MiB':>9}")
    for r in rows:
        print(f"{r['queries']:>8} {r['games']:>9} {r['elo_s']:>8.2f} {r['elo_s'] / r['games'] * 1e6:>8.2f} "
              f"{r['bt_s']:>7.2f} {r['data_mib']:>9.0f} {r['elo_peak_mib']:>9.0f} {r['peak_mib']:>9.0f}")
    if len(rows) == 2:
        print(f"time per game, largest / smallest: Elo {rows[1]['elo_s'] / rows[1]['games'] / (rows[0]['elo_s'] / rows[0]['games']):.2f}, "
              f"Bradley-Terry {rows[1]['bt_s'] / rows[1]['games'] / (rows[0]['bt_s'] / rows[0]['games']):.2f} "
              f"(1.00 is linear)")
    ok = all(r["peak_mib"] < 1024 for r in rows)
    print(f"target (peak RSS under 1 GiB at every size): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--gap", type=float, default=50.0, help="Elo points between neighbouring agents")
    p.add_argument("--noise", type=float, default=0.15, help="share of calls that just name answer A")
    p.add_argument("--tie", type=float, default=0.1, help="share of (query, pair) opinions that are ties")
    p.add_argument("--adaptive-initial", type=int, default=10)
    p.add_argument("--adaptive-batch", type=int, default=10)
    p.add_argument("--adaptive-z", type=float, default=1.645)
    p.add_argument("--json", default=None, help="write all figures to this file")
    p.add_argument("--agents", type=int, default=None,
                   help="measure Elo and Bradley-Terry time and peak memory for a round robin of this many "
                        "agents at a fifth of --queries and at --queries, instead of the simulation")
    args = p.parse_args(argv)
    if args.agents is not None:
        return _scale_report(args.agents, args.queries)
    adaptive = {"adaptive_initial": args.adaptive_initial, "adaptive_batch": args.adaptive_batch,
                "adaptive_z": args.adaptive_z}
    runs = [asyncio.run(simulate(s, queries=args.queries, gap=args.gap, noise=args.noise, tie=args.tie,
                                 adaptive=adaptive)) for s in range(args.seeds)]
    print(f"{args.seeds} seeds, 6 agents {args.gap:g} Elo apart, {args.queries} queries, "
          f"position-bias noise {args.noise}, tie opinions {args.tie}, adaptive z {args.adaptive_z}")
    print("Kendall tau (Bradley-Terry / Elo) and judge calls per schedule:")
    print(f"{'seed':>4}" + "".join(f"  {name:>24}" for name in SCHEDULES) + "  adaptive stopped")
    for r in runs:
        cells = "".join(f"  {r[n]['tau_bt']:6.3f} / {r[n]['tau_elo']:6.3f} {r[n]['calls']:6d}c" for n in SCHEDULES)
        print(f"{r['seed']:>4}{cells}  {r['adaptive']['stopped']}")
    for label, agg in (("mean", statistics.mean), ("min", min)):
        cells = "".join(f"  {agg(r[n]['tau_bt'] for r in runs):6.3f} / {agg(r[n]['tau_elo'] for r in runs):6.3f} "
                        f"{agg(r[n]['calls'] for r in runs):6.0f}c" for n in SCHEDULES)
        print(f"{label:>4}{cells}")
    rr = statistics.mean(r["round_robin"]["calls"] for r in runs)
    target = all(r["adaptive_half"]["tau_bt"] >= 0.9 and r["adaptive_half"]["calls"] <= rr / 2 for r in runs)
    print(f"target (adaptive with at most half the round-robin calls reaches tau >= 0.9, every seed): "
          f"{'met' if target else 'NOT met'}; unbudgeted adaptive used "
          f"{statistics.mean(r['adaptive']['calls'] for r in runs) / rr:.2f} of the round-robin calls")
    timing = time_elo(queries=args.queries)
    print(f"Elo: {timing['tournaments']} tournaments x {timing['games']} games: best {timing['best']:.3f} s, "
          f"median {timing['median']:.3f} s of {len(timing['seconds'])} runs (target < 1 s)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"args": vars(args), "runs": runs, "elo_timing": timing}, fh, indent=2)
    return 0 if target and timing["best"] < 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())

