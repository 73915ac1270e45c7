"""Side-by-side with peers: langrag-eval against ragas, LlamaIndex and RAGElo on the same workloads,
the same scripted judge and the same concurrency, measured in one run.

    python benchmarks/peers.py            # 500 / 6x100 / 1,000 items, 100 ms a call, concurrency 16
    python benchmarks/peers.py --quick    # a small smoke run
    python benchmarks/peers.py --latency 0.05 --concurrency 32 --json figures.json

The peers live in their own virtual environment (benchmarks/.peers-venv, made on first use by
benchmarks/peers/setup_peers.sh; never dependencies of the project) and run as a subprocess
(benchmarks/peers/run_peer.py); our side runs here (benchmarks/peers/ours.py). Both sides plug the
judge of benchmarks/peers/scripted_judge.py into their own LLM interface: a fixed latency per call
(asyncio.sleep), the same decisions worded in each framework's output format, tokens counted as
len/4 of the prompt and reply text the framework exchanged.

Workloads: (1) groundedness / faithfulness of 500 HaluEval answers (3 claims each): THELMA ``gr``
per claim and batched vs ragas faithfulness vs LlamaIndex FaithfulnessEvaluator; (2) a round-robin
tournament of 6 agents x 100 queries: ours vs RAGElo, with the ranking each makes of the same
verdicts; (3) rubric grading of 1,000 answers: VragGrader vs LlamaIndex CorrectnessEvaluator;
(4) each workload again, warm: ours against the same run store, peers with their defaults.
Orchestration efficiency is achieved calls/s divided by concurrency / latency (1.0 = every slot
busy all the time). Only the evaluation call is timed on either side, not imports or data loading.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from itertools import combinations
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "peers"))

import ours
from scripted_judge import AGENTS, CLAIMS, HALUEVAL, strengths

VENV = HERE / ".peers-venv"


def peer(workload: str, framework: str, spec: dict[str, Any], python: Path) -> dict[str, Any]:
    """Run one peer workload in the peers' interpreter; its figures come back as JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps({**spec, "workload": workload, "framework": framework}))
        env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "PYTHONWARNINGS": "ignore"}
        done = subprocess.run([str(python), str(HERE / "peers" / "run_peer.py"), str(spec_path), str(out_path)],
                              env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-15:])
            return {"framework": framework, "error": f"exit {done.returncode}:\n{tail}"}
        return json.loads(out_path.read_text())


# ------------------------------------------------------------------ figures

def _eff(run: dict[str, Any], spec: dict[str, Any]) -> float | None:
    if not run["calls"] or not spec["latency"]:
        return None
    return run["calls"] / run["wall"] / (spec["concurrency"] / spec["latency"])


def _fmt(value: Any, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def _ratio(a: float, b: float) -> str:
    return "-" if not b else f"{a / b:.2f}"


def table(title: str, sides: list[dict[str, Any]], spec: dict[str, Any], items: int,
          score: str = "mean score right / hallucinated") -> None:
    print(f"\n{title}")
    print(f"{'side':<36}{'run':<6}{'wall s':>8}{'calls':>7}{'/item':>7}{'prompt tok':>12}{'compl tok':>11}"
          f"{'calls/s':>9}{'eff.':>6}{'cpu ms/call':>12}{'peak':>6}  {score}")
    for side in sides:
        if "error" in side:
            print(f"{side['framework']:<36}FAILED  {side['error'].splitlines()[-1]}")
            continue
        for label, run in zip(("cold", "warm"), side["runs"]):
            s = run.get("scores")
            scored = ""
            if s is not None:
                scored = f"{_fmt(s['mean_right'], '.3f')} / {_fmt(s['mean_hallucinated'], '.3f')}"
                scored += f"  ({s['unscored']} unscored)" if s["unscored"] else ""
            rate = run["calls"] / run["wall"] if run["calls"] else None
            cpu = run["cpu"] / run["calls"] * 1000 if run["calls"] else None
            print(f"{side['framework']:<36}{label:<6}{run['wall']:>8.2f}{run['calls']:>7}"
                  f"{run['calls'] / items:>7.2f}{run['prompt_tokens']:>12,}{run['completion_tokens']:>11,}"
                  f"{_fmt(rate, '.1f'):>9}{_fmt(_eff(run, spec), '.2f'):>6}{_fmt(cpu, '.2f'):>12}"
                  f"{run['peak']:>6}  {scored}")


def ratios(ours_sides: list[dict[str, Any]], peers: list[dict[str, Any]], spec: dict[str, Any]) -> None:
    print(f"  ratios ours / peer (same run; < 1: ours is faster or cheaper){'':<4}"
          f"{'wall':>7}{'calls':>7}{'prompt':>8}{'compl.':>8}{'tokens':>8}{'eff.':>7}{'warm wall':>11}")
    for o in ours_sides:
        for p in peers:
            if "error" in p or "error" in o:
                continue
            oc, pc = o["runs"][0], p["runs"][0]
            oe, pe = _eff(oc, spec), _eff(pc, spec)
            print(f"  {o['framework'] + ' / ' + p['framework']:<68}{_ratio(oc['wall'], pc['wall']):>7}"
                  f"{_ratio(oc['calls'], pc['calls']):>7}{_ratio(oc['prompt_tokens'], pc['prompt_tokens']):>8}"
                  f"{_ratio(oc['completion_tokens'], pc['completion_tokens']):>8}"
                  f"{_ratio(oc['prompt_tokens'] + oc['completion_tokens'], pc['prompt_tokens'] + pc['completion_tokens']):>8}"
                  f"{_ratio(oe or 0, pe or 0):>7}{_ratio(o['runs'][1]['wall'], p['runs'][1]['wall']):>11}")


def kendall_tau(order: list[str], truth: dict[str, float]) -> float:
    """Kendall tau between a ranking (best first) and true strengths (no ties among them)."""
    position = {a: i for i, a in enumerate(order)}
    pairs = list(combinations(truth, 2))
    agree = sum(1 if (position[x] < position[y]) == (truth[x] > truth[y]) else -1 for x, y in pairs)
    return agree / len(pairs)


def _outcomes(games: list[list[str]]) -> dict[tuple[str, frozenset[str]], str]:
    """(query, pair) -> winning agent or "tie", whichever agent was shown first."""
    return {(q, frozenset((a, b))): {"A": a, "B": b, "C": "tie"}[w] for q, a, b, w in games}


def tournament_report(ours_side: dict[str, Any], ragelo: dict[str, Any]) -> None:
    truth = strengths()
    true_order = sorted(AGENTS, key=lambda a: -truth[a])
    print(f"  true order (scripted strengths): {' > '.join(true_order)}")
    rows = []
    if "error" not in ours_side:
        cold = ours_side["runs"][0]
        rows += [("ours Bradley-Terry (default ranking)", cold["ranking"]), ("ours Elo (500 shuffles)", cold["elo_ranking"])]
    if "error" not in ragelo:
        rows.append(("RAGElo Elo (10 shuffles, default)", ragelo["runs"][0]["ranking"]))
        rows.append(("RAGElo Elo, warm re-run", ragelo["runs"][1]["ranking"]))
    for name, order in rows:
        print(f"  {name:<38} tau {kendall_tau(order, truth):+.2f}  {' > '.join(order)}")
    if "error" not in ours_side and "error" not in ragelo:
        a, b = _outcomes(ours_side["runs"][0]["games"]), _outcomes(ragelo["runs"][0]["games"])
        same = sum(a[k] == b.get(k) for k in a)
        print(f"  games: ours {len(a)}, RAGElo {len(b)}; same outcome on {same} of {len(a)} (query, pair)")


# ------------------------------------------------------------------ main

def ensure_peers(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating the peers' environment in {venv} (benchmarks/peers/setup_peers.sh) ...", flush=True)
        subprocess.run(["bash", str(HERE / "peers" / "setup_peers.sh")], check=True,
                       env={**os.environ, "PEERS_VENV": str(venv)})
    return python


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="40 samples, 6 queries, 80 answers")
    p.add_argument("--latency", type=float, default=0.1, help="seconds a scripted call takes (default 0.1)")
    p.add_argument("--concurrency", type=int, default=16, help="calls in flight, both sides (default 16)")
    p.add_argument("--data", type=Path, default=HALUEVAL, help="HaluEval QA JSONL")
    p.add_argument("--peers-venv", type=Path, default=VENV)
    p.add_argument("--only", choices=["faithfulness", "tournament", "grading"], nargs="+")
    p.add_argument("--json", type=Path, help="write every figure to this file")
    args = p.parse_args(argv)
    python = ensure_peers(args.peers_venv)
    n = {"faithfulness": 40, "tournament": 6, "grading": 80} if args.quick else \
        {"faithfulness": 500, "tournament": 100, "grading": 1000}
    base = {"concurrency": args.concurrency, "latency": args.latency, "data": str(args.data)}
    wanted = args.only or ["faithfulness", "tournament", "grading"]
    print(f"scripted judge: {args.latency * 1000:.0f} ms a call; concurrency {args.concurrency} on both sides "
          f"(ideal {args.concurrency / args.latency:.0f} calls/s); load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    figures: dict[str, Any] = {"settings": {**base, "n": n}}

    if "faithfulness" in wanted:
        spec = {**base, "n": n["faithfulness"]}
        mine = [asyncio.run(ours.faithfulness(spec)), asyncio.run(ours.faithfulness(spec, batched=True))]
        theirs = [peer("faithfulness", "ragas", spec, python), peer("faithfulness", "llamaindex", spec, python)]
        table(f"1. Groundedness / faithfulness: {spec['n']} samples, {CLAIMS} claims an answer "
              "(scores: right answers 1.0; hallucinated 0.667 per claim, 0 for a whole-response judge)",
              mine + theirs, spec, spec["n"])
        ratios(mine, theirs, spec)
        figures["faithfulness"] = mine + theirs
    if "tournament" in wanted:
        spec = {**base, "n": n["tournament"]}
        mine_t, ragelo = asyncio.run(ours.tournament(spec)), peer("tournament", "ragelo", spec, python)
        games = spec["n"] * len(list(combinations(AGENTS, 2)))
        table(f"2. Pairwise tournament: {len(AGENTS)} agents x {spec['n']} queries = {games} games, "
              "every game in both orders (/item = calls a game)", [mine_t, ragelo], spec, games, score="")
        ratios([mine_t], [ragelo], spec)
        tournament_report(mine_t, ragelo)
        figures["tournament"] = [mine_t, ragelo]
    if "grading" in wanted:
        spec = {**base, "n": n["grading"]}
        mine_g, llama = asyncio.run(ours.grading(spec)), peer("grading", "llamaindex", spec, python)
        table(f"3. Rubric grading: {spec['n']} answers against their label (scores: right 5, hallucinated 2)",
              [mine_g, llama], spec, spec["n"])
        ratios([mine_g], [llama], spec)
        figures["grading"] = [mine_g, llama]

    print("\n4. Warm re-runs are the 'warm' rows above. What each side allows and caches:")
    print("  langrag-eval: Judge(concurrency=C) bounds calls in flight; a re-run of the same run reads "
          "finished items from the run store (SQLite) and makes no call")
    seen = set()
    for side in (s for group in figures.values() if isinstance(group, list) for s in group):
        if "concurrency" in side and side["framework"] not in seen:
            seen.add(side["framework"])
            print(f"  {side['framework']}: {side['concurrency']}; cache: {side['cache']}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.json:
        for group in figures.values():
            for side in group if isinstance(group, list) else []:
                for run in side.get("runs", []):
                    run.pop("games", None)
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
