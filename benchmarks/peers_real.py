"""Side-by-side with peers, each through its real OpenAI client: langrag-eval's ``openai:`` judge (and
its ``grade`` command as users run it) against ragas, LlamaIndex and RAGElo, all talking HTTP to the
local OpenAI-compatible server of benchmarks/fake_openai.py (a fixed latency per request, requests
and tokens counted per client). benchmarks/peers.py is the in-process view of the same workloads.

    python benchmarks/peers_real.py                       # 100 ms, concurrency 16, 3 interleaved runs
    python benchmarks/peers_real.py --quick               # a small smoke run

Set up the peers' environment once (never dependencies of the project)::

    bash benchmarks/peers/setup_peers.sh                  # benchmarks/.peers-venv

Workloads (the HaluEval samples of benchmarks/peers/scripted_judge.py): rubric grading of 300
answers, VragGrader vs LlamaIndex ``CorrectnessEvaluator``, plus ``langrag-eval grade`` as a whole
process; groundedness of 100 answers, THELMA ``gr`` (batched, and per claim) vs ragas
``Faithfulness``; a round-robin tournament of 6 agents x 30 queries vs RAGElo pairwise + Elo. Each
side runs in its own process with its own API key; each run is timed around the evaluation call
(the CLI row: the whole process). Printed per side: median wall of the runs, requests, prompt tokens
per request (about four characters a token, counted by the server), client CPU ms per request, and
the ratio ours / peer of the median walls.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "peers"))

from scripted_judge import HALUEVAL, grading_samples  # noqa: E402

VENV = HERE / ".peers-venv"
MODEL = "gpt-4o-mini"
# (workload, our side, peer framework, samples)
PAIRS = [("grading", "ours-grading", "llamaindex", 300),
         ("grading", "ours-grade-cli", "llamaindex", 300),
         ("faithfulness", "ours-thelma-batched", "ragas", 100),
         ("faithfulness", "ours-thelma-per-claim", "ragas", 100),
         ("tournament", "ours-tournament", "ragelo", 30)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, data: bytes | None = None) -> Any:
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method="POST" if data else "GET")) as r:
        return json.loads(r.read())


def ours_side(side: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Our side, in this interpreter (a subprocess of the driver): the library through ``openai:``."""
    import ours

    spec = {**spec, "judge": f"openai:{spec['model']}", "runs": 1}
    work = {"ours-grading": ours.grading, "ours-tournament": ours.tournament,
            "ours-thelma-batched": lambda s: ours.faithfulness(s, batched=True),
            "ours-thelma-per-claim": ours.faithfulness}[side]
    out = asyncio.run(work(spec))
    run = out["runs"][0]
    return {"framework": out["framework"], "wall": run["wall"], "cpu": run["cpu"],
            **{k: run[k] for k in ("scores", "ranking") if k in run}}


def grade_cli(spec: dict[str, Any], env: dict[str, str], tmp: Path) -> dict[str, Any]:
    """``langrag-eval grade FILE --judge openai:MODEL`` as a user runs it: the whole process."""
    data = tmp / "grade.csv"
    with open(data, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["id", "question", "answer", "label"])
        w.writeheader()
        for s in grading_samples(Path(spec["data"]), spec["n"]):
            w.writerow({k: s[k] for k in ("id", "question", "answer", "label")})
    out = tmp / f"grades-{time.monotonic_ns()}.jsonl"
    cli = Path(sys.executable).with_name("langrag-eval")
    command = [str(cli)] if cli.exists() else [sys.executable, "-m", "langrag_eval.cli"]
    start = time.perf_counter()
    done = subprocess.run([*command, "grade", str(data), "--judge", f"openai:{spec['model']}",
                           "--concurrency", str(spec["concurrency"]), "--out", str(out),
                           "--store", str(tmp / f"runs-{time.monotonic_ns()}.sqlite")],
                          env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: graded, some answers rejected or unscored
        return {"framework": "langrag-eval grade (CLI)", "error": done.stderr.strip().splitlines()[-3:]}
    return {"framework": "langrag-eval grade (CLI, whole process)", "wall": wall, "cpu": None}


def run_side(side: str, workload: str, spec: dict[str, Any], base: str, tmp: Path) -> dict[str, Any]:
    key = f"{side}-{time.monotonic_ns()}"
    env = {**os.environ, "OPENAI_BASE_URL": base, "OPENAI_API_BASE": base, "OPENAI_API_KEY": key,
           "RAGAS_DO_NOT_TRACK": "true", "PYTHONWARNINGS": "ignore"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "integrations" / "langchain"),
                                         str(ROOT / "integrations" / "llamaindex"), str(HERE / "peers"),
                                         env.get("PYTHONPATH", "")])
    spec_path, out_path = tmp / f"{key}.spec.json", tmp / f"{key}.out.json"
    spec_path.write_text(json.dumps({**spec, "workload": workload, "framework": side}))
    if side == "ours-grade-cli":
        import resource
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = grade_cli(spec, env, tmp)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result["cpu"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    else:
        if side.startswith("ours"):
            command = [sys.executable, __file__, "--side", side, str(spec_path), str(out_path)]
        else:
            command = [str(VENV / "bin" / "python"), str(HERE / "peers" / "run_peer_real.py"),
                       str(spec_path), str(out_path)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return {"framework": side, "error": done.stderr.strip().splitlines()[-4:]}
        result = json.loads(out_path.read_text())
    stats = _get(f"{base.removesuffix('/v1')}/stats").get(key, {})
    return {**result, "requests": stats.get("requests", 0), "prompt_tokens": stats.get("prompt_tokens", 0),
            "completion_tokens": stats.get("completion_tokens", 0), "errors": stats.get("errors", 0),
            "peak": stats.get("peak", 0), "kinds": stats.get("kinds", {})}


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a tenth of the samples, one run")
    ap.add_argument("--only", default="", help="comma-separated our sides to run (default all)")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    ap.add_argument("--side", help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.side:  # a child process: one side, one run
        spec = json.loads(Path(args.paths[0]).read_text())
        Path(args.paths[1]).write_text(json.dumps(ours_side(args.side, spec)))
        return 0
    if not (VENV / "bin" / "python").exists():
        print(f"no peers' environment at {VENV}: run bash benchmarks/peers/setup_peers.sh", file=sys.stderr)
        return 2
    runs = 1 if args.quick else args.runs
    port = _free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "fake_openai.py"), "--port", str(port),
                               "--latency", str(args.latency)])
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(100):
            try:
                _get(f"http://127.0.0.1:{port}/stats")
                break
            except OSError:
                time.sleep(0.1)
        only = {s for s in args.only.split(",") if s}
        figures: dict[tuple[str, str], list[dict[str, Any]]] = {}
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(runs):
                for workload, ours_name, peer, n in PAIRS:
                    if only and ours_name not in only:
                        continue
                    n = max(2, n // 10) if args.quick else n
                    spec = {"n": n, "concurrency": args.concurrency, "latency": args.latency,
                            "data": str(HALUEVAL), "model": MODEL}
                    order = [ours_name, peer] if i % 2 == 0 else [peer, ours_name]  # interleaved
                    for side in order:
                        if side == peer and (workload, peer) in figures and len(figures[workload, peer]) > i:
                            continue  # one peer run per round, shared by our sides of that workload
                        figures.setdefault((workload, side), []).append(run_side(side, workload, spec, base, Path(tmp)))
        report(figures, args, runs)
        if args.json:
            args.json.write_text(json.dumps({f"{w}/{s}": r for (w, s), r in figures.items()}, indent=1))
    finally:
        server.terminate()
        server.wait()
    return 0


def report(figures: dict[tuple[str, str], list[dict[str, Any]]], args: argparse.Namespace, runs: int) -> None:
    print(f"\nreal clients against a local OpenAI-compatible server: {args.latency * 1000:.0f} ms a request, "
          f"concurrency {args.concurrency}, median of {runs} interleaved run(s); load {os.getloadavg()[0]:.1f}")
    print(f"{'workload':<13}{'side':<46}{'wall s':>8}{'requests':>9}{'tok/req':>8}{'cpu ms/req':>11}"
          f"{'errors':>7}{'peak':>5}{'ours/peer':>10}  scores")
    for workload, ours_name, peer, _ in PAIRS:
        if (workload, ours_name) not in figures:
            continue
        peer_wall = _median(figures.get((workload, peer), []), "wall")
        for side in (ours_name, peer):
            rs = figures.get((workload, side), [])
            bad = [r for r in rs if "error" in r]
            if bad:
                print(f"{workload:<13}{side:<46} error: {' | '.join(bad[0]['error'])[:200]}")
                continue
            if not rs:
                continue
            wall, req = _median(rs, "wall"), _median(rs, "requests")
            tok = statistics.median([r["prompt_tokens"] / r["requests"] for r in rs if r["requests"]] or [0])
            cpu = _median([{"c": r["cpu"] * 1000 / r["requests"]} for r in rs if r.get("cpu") and r["requests"]], "c")
            ratio = f"{wall / peer_wall:.2f}" if side == ours_name and peer_wall and wall else ""
            name = rs[0]["framework"][:45]
            print(f"{workload:<13}{name:<46}{wall:>8.2f}{req:>9.0f}{tok:>8.0f}{(cpu or 0):>11.2f}"
                  f"{_median(rs, 'errors'):>7.0f}{_median(rs, 'peak'):>5.0f}{ratio:>10}  "
                  f"{rs[-1].get('scores') or rs[-1].get('ranking') or ''}")
    print("slot use (requests x latency / (wall x concurrency); 1.0: no slot ever idle): " + ", ".join(
        f"{side} {_median(rs, 'requests') * args.latency / (_median(rs, 'wall') * args.concurrency):.2f}"
        for (_, side), rs in figures.items() if rs and not any("error" in r for r in rs)))


if __name__ == "__main__":
    sys.exit(main())
