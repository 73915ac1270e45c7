"""Side-by-side with peers, each through its real OpenAI client: langrag-eval's ``openai:`` judge (and
its ``grade`` command as users run it) against LlamaIndex, DeepEval, ragas and RAGElo, all talking
HTTP to the local OpenAI-compatible server of benchmarks/fake_openai.py (a fixed latency per
request, requests and tokens counted per client). benchmarks/peers.py is the in-process view of the
same workloads; benchmarks/all.py runs these beside the retrieval and memory figures.

    python benchmarks/peers_real.py                       # 100 ms, concurrency 16, 3 interleaved runs
    python benchmarks/peers_real.py --quick               # a small smoke run

Set up the peers' environment once (never dependencies of the project)::

    bash benchmarks/peers/setup_peers.sh                  # benchmarks/.peers-venv

Workloads (the HaluEval samples of benchmarks/peers/scripted_judge.py): rubric grading of 300
answers, VragGrader vs LlamaIndex ``CorrectnessEvaluator``, DeepEval ``GEval`` with correctness
criteria and ragas ``AnswerCorrectness`` (as shipped, and its factuality-only subset), plus
``langrag-eval grade`` vs the LlamaIndex grading script of benchmarks/peers/llamaindex_grade.py,
both whole processes from their start; groundedness of 100 answers, THELMA ``gr`` (batched, and per
claim) vs ragas ``Faithfulness``; a round-robin tournament of 6 agents x 10 queries (300 games) vs
RAGElo pairwise + Elo. Every side, ours included, runs in the peers' environment (one ``openai``
SDK), its client and metric built before its clock. Each side runs in its own process with its own API key, in rounds that alternate ours
and peers (``interleaved``); each run is timed around the evaluation call (every side first collects
the garbage of its set-up, so a full collection it made due does not land in one side's first
requests), and the process as a whole. Printed per pair: median walls, the median of the per-round
ratios ours / peer, requests, and prompt tokens per judgment (about four characters a token of what
each client sent, counted by the server); then each side's client CPU inside the timed region, which
tells a load swing (longer walls, level CPU) from a cost of one side; then each side's slot use, the
server's time-weighted mean of its requests in flight over its active span (first request in, last
answer out) over the concurrency. Targets: grading and the ``grade`` command at most 0.50 of
LlamaIndex's wall, the tournament at most 0.50 of RAGElo's, THELMA batched at most 0.75 of ragas'
wall at equal requests; THELMA per claim (twice the requests) keeps at least 0.90 of its slots busy;
every other pair at most 1.00. A ratio is the median of the per-round ratios, printed with their
range; ``--only`` naming a peer runs exactly the peers named. Every client is kept off the network: proxies point at a closed port, except for
127.0.0.1, and the tools' telemetry is off.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "peers"))

from scripted_judge import HALUEVAL, grading_samples  # noqa: E402
from busy import busy  # noqa: E402

VENV = HERE / ".peers-venv"
MODEL = "gpt-4o-mini"
# workload -> our sides and the peers that do the same job, each run once per round; grading's
# first list also holds the two floors of benchmarks/peers/bare.py: a bare client (the least any
# client reaches) and the openai judge's SDK calls alone (the least a client of the SDK reaches)
WORKLOADS = {"grading": (["ours-grading", "ours-grade-cli", "bare-grading", "sdk-grading"],
                         ["llamaindex", "llamaindex-script", "deepeval", "ragas-correctness", "ragas-correctness-llm"]),
             "faithfulness": (["ours-thelma-batched", "ours-thelma-per-claim"], ["ragas"]),
             "tournament": (["ours-tournament"], ["ragelo"])}
SAMPLES = {"grading": 300, "faithfulness": 100, "tournament": 10}  # tournament: queries (30 games each)
# (workload, our side, peer, figure compared): "wall" times the evaluation call, "process_wall" the
# whole process (start-up, imports, reading the data, the call, writing out)
PAIRS = [("grading", "ours-grading", "llamaindex", "wall"),
         ("grading", "ours-grading", "deepeval", "wall"),
         ("grading", "ours-grading", "ragas-correctness", "wall"),
         ("grading", "ours-grading", "ragas-correctness-llm", "wall"),
         ("grading", "ours-grade-cli", "llamaindex-script", "process_wall"),
         ("faithfulness", "ours-thelma-batched", "ragas", "wall"),
         ("faithfulness", "ours-thelma-per-claim", "ragas", "wall"),
         ("tournament", "ours-tournament", "ragelo", "wall")]
# what each pair must reach: the ratio ours / peer at most the bound (default 1.00), or, for THELMA
# per claim (twice the peer's requests by the paper's design, so its wall is not the peer's), the
# share of its concurrency slots kept busy at least the bound
TARGETS: dict[tuple[str, str, str, str], tuple[str, float]] = {
    ("grading", "ours-grading", "llamaindex", "wall"): ("ratio", 0.50),
    ("grading", "ours-grade-cli", "llamaindex-script", "process_wall"): ("ratio", 0.50),
    ("faithfulness", "ours-thelma-batched", "ragas", "wall"): ("ratio", 0.75),
    ("faithfulness", "ours-thelma-per-claim", "ragas", "wall"): ("slot_use", 0.90),
    ("tournament", "ours-tournament", "ragelo", "wall"): ("ratio", 0.50)}
NAMES = {"llamaindex": "LlamaIndex CorrectnessEvaluator", "deepeval": "DeepEval GEval (correctness)",
         "ragas-correctness": "ragas AnswerCorrectness", "ragas": "ragas Faithfulness",
         "ragas-correctness-llm": "ragas AnswerCorrectness, factuality only",
         "llamaindex-script": "a LlamaIndex grading script (whole process)",
         "ragelo": "RAGElo pairwise + Elo"}
# every client may reach the local server only: anything else meets a proxy that refuses
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
           "RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}


def python() -> str:
    """The interpreter of every side, ours included: the peers' environment, so that both sides run
    the same OpenAI SDK (and HTTP stack) and the comparison is of the tools, not of SDK versions."""
    venv = VENV / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def sdk_version() -> str:
    """The ``openai`` SDK both sides import, and the transport our judge picks with it."""
    code = ("import openai\nfrom langrag_eval.models.openai_chat import OpenAIChatModel\n"
            "m = OpenAIChatModel('x', api_key='sk-x', base_url='http://127.0.0.1:9/v1')\n"
            "print(openai.__version__, m.transport)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([python(), "-c", code], capture_output=True, text=True, env=env, check=False)
    version, _, transport = out.stdout.strip().partition(" ")
    return f"openai {version} (ours over {transport})" if out.returncode == 0 else "openai: not importable"


def judgments(workload: str, n: int) -> int:
    """What one judgment is: a graded answer, an answer's groundedness, a game (every pair of the six
    agents on every query, both orders)."""
    return n * 30 if workload == "tournament" else n


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, data: bytes | None = None) -> Any:
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method="POST" if data else "GET")) as r:
        return json.loads(r.read())


def ours_side(side: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Our side, in this interpreter (a subprocess of the driver): the library through ``openai:``."""
    import bare
    import ours

    spec = {**spec, "judge": f"openai:{spec['model']}", "runs": 1}
    work = {"bare-grading": bare.grading, "sdk-grading": bare.sdk_grading,
            "ours-grading": ours.grading, "ours-tournament": ours.tournament,
            "ours-thelma-batched": lambda s: ours.faithfulness(s, batched=True),
            "ours-thelma-per-claim": ours.faithfulness}[side]
    out = asyncio.run(work(spec))
    run = out["runs"][0]
    import openai
    return {"framework": out["framework"], "wall": run["wall"], "cpu": run["cpu"],
            "sdk": f"openai {openai.__version__}",
            **{k: run[k] for k in ("scores", "ranking") if k in run}}


def grading_csv(spec: dict[str, Any], tmp: Path) -> Path:
    """The answers to grade as a user's CSV file (id, question, answer, label), written once."""
    data = tmp / f"grade-{spec['n']}.csv"
    if not data.exists():
        with open(data, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=["id", "question", "answer", "label"])
            w.writeheader()
            for s in grading_samples(Path(spec["data"]), spec["n"]):
                w.writerow({k: s[k] for k in ("id", "question", "answer", "label")})
    return data


def whole_process(side: str, spec: dict[str, Any], env: dict[str, str], tmp: Path) -> dict[str, Any]:
    """A grading command as a user runs it, timed from process start to exit: ``langrag-eval grade
    FILE --judge openai:MODEL`` (``ours-grade-cli``) or the LlamaIndex script of
    benchmarks/peers/llamaindex_grade.py (``llamaindex-script``), on the same CSV file, each writing
    one JSON line per answer."""
    data = grading_csv(spec, tmp)
    out = tmp / f"grades-{time.monotonic_ns()}.jsonl"
    if side == "ours-grade-cli":
        name = "langrag-eval grade (CLI, whole process)"
        # the console script's own line (the peers' environment has no langrag-eval script)
        command = [python(), "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())", "grade", str(data), "--judge", f"openai:{spec['model']}",
                   "--concurrency", str(spec["concurrency"]), "--out", str(out),
                   "--store", str(tmp / f"runs-{time.monotonic_ns()}.sqlite")]
    else:
        name = "LlamaIndex CorrectnessEvaluator script (whole process)"
        command = [python(), str(HERE / "peers" / "llamaindex_grade.py"), str(data), str(out),
                   "--model", spec["model"], "--workers", str(spec["concurrency"])]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=tmp)
    wall = time.perf_counter() - start
    graded = sum(1 for _ in open(out, encoding="utf-8")) if out.exists() else 0
    if done.returncode not in (0, 1) or graded != spec["n"]:  # 1: graded, some answers rejected or unscored
        return {"framework": name, "error": [f"exit {done.returncode}, {graded} of {spec['n']} graded",
                                             *done.stderr.strip().splitlines()[-3:]]}
    return {"framework": name, "wall": wall, "process_wall": wall}


def run_side(side: str, workload: str, spec: dict[str, Any], base: str, tmp: Path) -> dict[str, Any]:
    """One run of one side in a fresh process, with its own API key; the server's counts for it."""
    key = f"{side}-{time.monotonic_ns()}"
    env = {**os.environ, **OFFLINE, "OPENAI_BASE_URL": base, "OPENAI_API_BASE": base, "OPENAI_API_KEY": key}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "integrations" / "langchain"),
                                         str(ROOT / "integrations" / "llamaindex"), str(HERE / "peers"),
                                         env.get("PYTHONPATH", "")])
    spec_path, out_path = tmp / f"{key}.spec.json", tmp / f"{key}.out.json"
    spec_path.write_text(json.dumps({**spec, "workload": workload, "framework": side}))
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if side in ("ours-grade-cli", "llamaindex-script"):
        result = whole_process(side, spec, env, tmp)
    else:
        if side.startswith(("ours", "bare", "sdk")):
            command = [python(), __file__, "--side", side, str(spec_path), str(out_path)]
        else:
            command = [python(), str(HERE / "peers" / "run_peer_real.py"),
                       str(spec_path), str(out_path)]
        start = time.perf_counter()
        # cwd: the temporary folder, for the files some tools leave behind (DeepEval's .deepeval)
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=tmp)
        process_wall = time.perf_counter() - start
        if done.returncode != 0:
            return {"framework": side, "error": done.stderr.strip().splitlines()[-4:]}
        result = {**json.loads(out_path.read_text()), "process_wall": process_wall}
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result.setdefault("cpu", (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
    stats = _get(f"{base.removesuffix('/v1')}/stats").get(key, {})
    return {**result, "requests": stats.get("requests", 0), "prompt_tokens": stats.get("prompt_tokens", 0),
            "completion_tokens": stats.get("completion_tokens", 0), "errors": stats.get("errors", 0),
            "peak": stats.get("peak", 0), "kinds": stats.get("kinds", {}), "n": spec["n"],
            # mean requests in flight at the server over the client's active span / concurrency
            "slot_use": stats.get("mean_in_flight", 0.0) / spec["concurrency"]}


@contextlib.contextmanager
def fake_server(latency: float) -> Iterator[str]:
    """benchmarks/fake_openai.py in a child process; yields its base URL (``http://.../v1``)."""
    port = _free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "fake_openai.py"), "--port", str(port),
                               "--latency", str(latency)])
    try:
        for _ in range(300):
            try:
                _get(f"http://127.0.0.1:{port}/stats")
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait()


def interleaved(ours: list[str], peers: list[str], round_: int) -> list[str]:
    """ours, peer, ours, peer ... (then the peers left), reversed on odd rounds."""
    order = []
    for i in range(max(len(ours), len(peers))):
        order += ours[i:i + 1] + peers[i:i + 1]
    return order if round_ % 2 == 0 else order[::-1]


def collect(base: str, runs: int, samples: dict[str, int], *, concurrency: int, latency: float,
            only: set[str] | None = None, log: Any = None) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """``runs`` interleaved rounds of every workload in ``samples``; every run of every side."""
    figures: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for workload, n in samples.items():
                ours, peers = WORKLOADS[workload]
                ours = [s for s in ours if not only or s in only]
                named = (only or set()) & {q for _, _, q, _ in PAIRS}  # peers named: exactly those; else our sides' peers
                peers = [p for p in peers if not only or p in only or not named and any(
                    o in only and q == p for _, o, q, _ in PAIRS)]
                spec = {"n": n, "concurrency": concurrency, "latency": latency, "data": str(HALUEVAL),
                        "model": MODEL}
                for side in interleaved(ours, peers, i):
                    result = run_side(side, workload, spec, base, Path(tmp))
                    figures.setdefault((workload, side), []).append(result)
                    if log:
                        wall = f"{result['wall']:.2f} s" if "wall" in result else "error"
                        log(f"  run {i + 1}/{runs} {workload:<13}{side:<24}{wall}")
    return figures


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def compare(figures: dict[tuple[str, str], list[dict[str, Any]]], workload: str, ours: str, peer: str,
            figure: str) -> dict[str, Any] | None:
    """One pair's figures: the median of the per-round ratios ours / peer, the median walls,
    requests and prompt tokens per judgment; or an ``error``."""
    a, b = figures.get((workload, ours), []), figures.get((workload, peer), [])
    if not a or not b:
        return None
    bad = [r for r in a if "error" in r]
    if bad:  # ours failing is an error of the pair, whatever the peer did
        return {"error": f"{ours}: {' | '.join(bad[0]['error'])}"[:300]}
    # a peer's failed round (DeepEval's own per-test timeout trips on a loaded machine) drops that
    # round's pair; the rest are compared, and the failures counted
    kept = [(x, y) for x, y in zip(a, b) if "error" not in y]
    failed = [y for y in b if "error" in y]
    if not kept:
        return {"error": f"{peer}: {' | '.join(failed[0]['error'])}"[:300]}
    a, b = [x for x, _ in kept], [y for _, y in kept]
    for side, rs in ((ours, a), (peer, b)):
        if not all(r["requests"] for r in rs):
            return {"error": f"{side}: no request reached the server"}
    n = judgments(workload, a[0]["n"])
    ratios = [x[figure] / y[figure] for x, y in zip(a, b) if y.get(figure)]
    return {"ratio": statistics.median(ratios), "ratios": ratios, "range": (min(ratios), max(ratios)),
            "ours": _median(a, figure),
            "peer": _median(b, figure), "ours_name": a[0]["framework"], "peer_name": b[0]["framework"],
            "slot_use": (_median(a, "slot_use"), _median(b, "slot_use")),
            "requests": (_median(a, "requests"), _median(b, "requests")),
            "cpu": (_median(a, "cpu"), _median(b, "cpu")),
            "tokens": (_median(a, "prompt_tokens") / n, _median(b, "prompt_tokens") / n),
            "errors": (_median(a, "errors"), _median(b, "errors")), "n": a[0]["n"],
            "peer_failed": len(failed), "peer_failure": " | ".join(failed[0]["error"])[-160:] if failed else ""}


def target(pair: tuple[str, str, str, str], c: dict[str, Any]) -> tuple[str, bool]:
    """A pair's target as text (``<= 0.85``, ``slot use >= 0.90``) and whether ``c`` (its
    :func:`compare` figures) meets it."""
    kind, bound = TARGETS.get(pair, ("ratio", 1.0))
    if kind == "slot_use":
        used = c["slot_use"][0]
        return f"slot use >= {bound:.2f}", used is not None and used >= bound
    return f"<= {bound:.2f}", c["ratio"] <= bound


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a tenth of the samples, one run")
    ap.add_argument("--only", default="", help="comma-separated sides to run (default all)")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    ap.add_argument("--busy", type=int, default=0, metavar="K",
                    help="K processes spinning on the CPU meanwhile (benchmarks/busy.py; 3: a load near 4 on 2 cores)")
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
    samples = {w: max(2, n // 10) if args.quick else n for w, n in SAMPLES.items()}
    only = {s for s in args.only.split(",") if s}
    load = os.getloadavg()[0]
    print(f"every side in {python()}: {sdk_version()}")
    with busy(args.busy) as held, fake_server(args.latency) as base:
        figures = collect(base, runs, samples, concurrency=args.concurrency, latency=args.latency, only=only)
    print(f"\nreal clients against a local OpenAI-compatible server: {args.latency * 1000:.0f} ms a request, "
          f"concurrency {args.concurrency}, median of {runs} interleaved run(s); load {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; {held.text()}")
    print(f"{'workload':<13}{'ours':<24}{'peer':<34}{'ours s':>8}{'peer s':>8}{'ratio':>7}"
          f"{'requests':>12}{'tok/judgment':>14}  target")
    for pair in PAIRS:
        workload, ours, peer, figure = pair
        c = compare(figures, workload, ours, peer, figure)
        if c is None:
            continue
        if "error" in c:
            print(f"{workload:<13}{ours:<24}{peer:<34} error: {c['error']}")
            continue
        goal, met = target(pair, c)
        print(f"{workload:<13}{ours:<24}{c['peer_name'][:33]:<34}{c['ours']:>8.2f}{c['peer']:>8.2f}"
              f"{c['ratio']:>7.2f}{c['requests'][0]:>6.0f}/{c['requests'][1]:<5.0f}"
              f"{c['tokens'][0]:>7.0f}/{c['tokens'][1]:<6.0f}  {goal}: {'met' if met else 'MISSED'}"
              f" (runs {c['range'][0]:.2f}-{c['range'][1]:.2f})")
    # the client's own CPU inside the timed region (the evaluation call; the CLI row: the whole
    # process): on a loaded machine a wall that grows with level CPU is the load, not idle slots
    print("client CPU s in the timed region, ours / peer: " + ", ".join(
        f"{ours} {c['cpu'][0]:.2f} / {peer} {c['cpu'][1]:.2f}" for w, ours, peer, figure in PAIRS
        if (c := compare(figures, w, ours, peer, figure)) and "error" not in c and None not in c["cpu"]))
    print("slot use (the server's time-weighted mean of requests in flight over each client's active "
          "span / concurrency; 1.0: no slot ever idle): " + ", ".join(
              f"{side} {_median(rs, 'slot_use'):.2f}"
              for (_, side), rs in figures.items() if rs and not any("error" in r for r in rs)))
    if args.json:
        args.json.write_text(json.dumps({f"{w}/{s}": r for (w, s), r in figures.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
