"""Every performance workload beside its peer, in one command, as one markdown table.

    python benchmarks/all.py --runs 3                     # the README's table (about 15 min on 2 cores)
    python benchmarks/all.py --runs 3 --out perf.md       # also write it there (--force to overwrite)
    python benchmarks/all.py --quick                      # one run of small sizes: a smoke test
    python benchmarks/all.py --only llm,tokens            # some sections: llm, bm25, knn, memory

Needs the peers' environments (never dependencies of the project)::

    bash benchmarks/peers/setup_peers.sh                  # benchmarks/.peers-venv
    bash benchmarks/peers/setup_retrieval_peers.sh        # benchmarks/.retrieval-peers-venv

Sections and their sizes (``--quick`` in brackets):

- llm: the judging workloads of benchmarks/peers_real.py, every tool through its real OpenAI client
  against benchmarks/fake_openai.py (100 ms a request, concurrency 16), every side (ours included)
  in the peers' environment, so both run the same ``openai`` SDK, and every side's client, metric
  and data built before its clock: grading of 300 [10] HaluEval answers, ours vs LlamaIndex
  ``CorrectnessEvaluator`` (target at most 0.50), DeepEval ``GEval`` (correctness) and ragas
  ``AnswerCorrectness`` (its default, with the embedding similarity, and the comparable subset, its
  LLM factuality alone); ``langrag-eval grade`` vs the grading script a LlamaIndex user would write
  (benchmarks/peers/llamaindex_grade.py), both whole processes from their start on the same CSV file
  (at most 0.50); THELMA groundedness of 100 [6] answers, batched and per claim, vs ragas
  ``Faithfulness`` (targets: batched at most 0.75 of its wall; per claim, twice its requests, keeps at least 0.90 of
  the concurrency slots busy, the server's time-weighted mean of requests in flight over the client's
  active span, printed beside the most any schedule could keep busy: requests / (concurrency x waves),
  where the waves are requests / concurrency rounded up. At 30 answers, 120 requests fill 7.5 waves
  of 16 and no schedule keeps more than 0.94 busy, so the row's size is 100 answers, 400 requests);
  a round-robin tournament of 6 agents x 10 [2] queries (300 games) vs RAGElo pairwise + Elo (at
  most 0.50). Compared: the wall of the evaluation call (the CLI row: of the whole process). Beside
  each ratio, the server's floor over the peer's wall: the least ratio any client could reach, as
  some slot serves at least requests / concurrency of our requests (rounded up) at 100 ms each, one
  after another (two for a groundedness: its claims, then their verdicts). A goal under it is
  marked out of reach: no client work can meet it against that peer's wall. Beside the in-process
  grading rows, two floors measured in the same rounds (benchmarks/peers/bare.py): the bare client,
  the same 300 requests through one ``aiohttp`` session with nothing else done, no SDK, no verdict
  read, no store (a goal under it is out of reach of any client of this interpreter on this machine
  and load); and the ``openai`` judge's SDK calls alone, the same requests through the official SDK
  as our judge makes them, with no work of ours around them (a goal under it is beyond what the
  official SDK does with nothing around it; no strict bound: a better schedule may pass it). Their
  slot use stands beside THELMA's.
- tokens: prompt tokens per judgment (a graded answer, an answer's groundedness, a game), counted
  by the server from what each client sent (about four characters a token), from the llm runs;
  ours against the smallest peer of the task.
- bm25: query p50 at 100,000 [10,000] synthetic documents, ours vs bm25s, each engine built in a
  fresh process, 200 [100] queries, k 10 (benchmarks/retrieval_bm25.py).
- knn: batched exact KNN, 100 queries, k 10, 384-d, at 10k / 100k / 300k [10k] vectors, ours vs
  numpy's ``Q @ X.T`` + ``argpartition`` (benchmarks/retrieval_knn.py).
- memory: peak RSS of ``langrag-eval grade`` per item beyond the fixed cost, 10,000 and 100,000
  [2,000 and 10,000] items, a judge that answers at once (benchmarks/memory.py), measured once
  whatever ``--runs`` (a peak is no timing the load sways); below a few thousand items the peak is
  the start-up's and the growth does not show. ``python benchmarks/memory.py --items
  10000,1000000`` makes the million-item run.

Every pair runs ``--runs`` times, ours and the peer taking turns (ours, peer, ours, peer ...); the
ratio reported is the median of the runs (for llm, of the per-run ratios, with their range). Progress goes to stderr;
the markdown (machine, load before and after, the table) to stdout, and to ``--out`` if given. A
section that fails becomes an ``error`` row; the command still prints the rest.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# this tree's code, in this process and in every child (memory's `grade`, the BM25 engine, our sides)
_TREE = [str(ROOT), str(ROOT / "integrations" / "langchain"), str(ROOT / "integrations" / "llamaindex")]
os.environ["PYTHONPATH"] = os.pathsep.join([*_TREE, *filter(None, [os.environ.get("PYTHONPATH")])])
sys.path[:0] = [str(HERE), *_TREE]

import peers_real  # noqa: E402
from busy import busy  # noqa: E402

SECTIONS = ("llm", "tokens", "bm25", "knn", "memory")
FULL = {"grading": 300, "faithfulness": 100, "tournament": 10, "bm25_docs": 100_000, "bm25_queries": 200,
        "knn": (10_000, 100_000, 300_000), "memory": (10_000, 100_000)}
QUICK = {"grading": 10, "faithfulness": 6, "tournament": 2, "bm25_docs": 10_000, "bm25_queries": 100,
         "knn": (10_000,), "memory": (2_000, 10_000)}
LLM_ROWS = {  # (workload, our side, peer, figure) -> row label
    ("grading", "ours-grading", "llamaindex", "wall"): "vRAG grading vs LlamaIndex CorrectnessEvaluator",
    ("grading", "ours-grading", "deepeval", "wall"): "vRAG grading vs DeepEval GEval (correctness)",
    ("grading", "ours-grading", "ragas-correctness", "wall"): "vRAG grading vs ragas AnswerCorrectness (default)",
    ("grading", "ours-grading", "ragas-correctness-llm", "wall"):
        "vRAG grading vs ragas AnswerCorrectness (factuality only, the comparable subset)",
    ("grading", "ours-grade-cli", "llamaindex-script", "process_wall"):
        "`langrag-eval grade` vs a LlamaIndex grading script (whole processes)",
    ("faithfulness", "ours-thelma-batched", "ragas", "wall"):
        "THELMA groundedness, batched, vs ragas Faithfulness",
    ("faithfulness", "ours-thelma-per-claim", "ragas", "wall"):
        "THELMA groundedness, per claim, vs ragas Faithfulness",
    ("tournament", "ours-tournament", "ragelo", "wall"): "tournament vs RAGElo pairwise + Elo",
}
TOKEN_ROWS = [("grading", "ours-grading", "vRAG grade"),
              ("faithfulness", "ours-thelma-batched", "THELMA batched"),
              ("faithfulness", "ours-thelma-per-claim", "THELMA per claim"),
              ("tournament", "ours-tournament", "pairwise game")]


@dataclass
class Row:
    workload: str
    size: str
    ours: str = ""
    peer: str = ""
    ratio: float | None = None
    target: str = "<= 1.00"
    met: bool | None = None
    note: str = ""

    spread: tuple[float, float] | None = None  # the per-run ratios' range
    floor: float | None = None  # the least ratio any client could reach (LLM rows): see server_floor
    bare: float | None = None  # the ratio the bare client reached (in-process grading rows)
    sdk: float | None = None  # the ratio the openai judge's SDK calls alone reached (the same rows)

    def markdown(self) -> str:
        ratio = "" if self.ratio is None else shown(self.ratio, self.target, self.met)
        if self.spread is not None and self.spread[0] != self.spread[1]:
            ratio += f" ({self.spread[0]:.2f}-{self.spread[1]:.2f})"
        met = {True: "met", False: "**missed**", None: self.note or "not run"}[self.met]
        note = f" ({self.note})" if self.note and self.met is not None else ""
        floor = "" if self.floor is None else f"{self.floor:.2f}"
        bare, sdk = ("" if x is None else f"{x:.2f}" for x in (self.bare, self.sdk))
        return (f"| {self.workload} | {self.size} | {self.ours} | {self.peer} | {ratio} | {floor} | {bare} | {sdk} "
                f"| {self.target} | {met}{note} |")



def shown(value: float, goal: str, met: bool | None) -> str:
    """``value`` to two places, or three where two would read as the goal it missed.

    >>> shown(0.754, "<= 0.75", False), shown(0.897, "slot use >= 0.90", False), shown(0.897, "<= 0.90", True)
    ('0.754', '0.897', '0.90')
    """
    text = f"{value:.2f}"
    return f"{value:.3f}" if met is False and goal.split()[-1:] == [text] else text


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            mem = f", {int(fh.readline().split()[1]) / 2 ** 20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        mem = ""
    return f"{os.cpu_count()} cores, {model}{mem}, Python {platform.python_version()}"


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def best_slot_use(requests: float, concurrency: int) -> float:
    """The most slot use any schedule reaches when every request takes the same time: the last
    wave of ``concurrency`` requests is only partly full.

    >>> best_slot_use(120, 16), best_slot_use(400, 16)
    (0.9375, 1.0)
    """
    waves = -(-int(requests) // concurrency)
    return requests / (concurrency * waves) if waves else 0.0


# requests one judgment waits for one after another: a groundedness needs its claims before it can
# verify them; a grade and a game are one request each
DEPTH = {"grading": 1, "faithfulness": 2, "tournament": 1}


def server_floor(requests: float, concurrency: int, latency: float, depth: int = 1) -> float:
    """The least wall any client can take for ``requests`` that each hold one of ``concurrency``
    slots for ``latency`` seconds, when a judgment needs ``depth`` of them in turn: some slot serves
    at least requests / concurrency of them (rounded up), one after another.

    >>> round(server_floor(300, 16, 0.1), 2), round(server_floor(200, 16, 0.1, depth=2), 2)
    (1.9, 1.3)
    >>> round(server_floor(10, 16, 0.1, depth=2), 2)
    0.2
    """
    return max(-(-int(requests) // concurrency), depth) * latency


def ratio_row(label: str, size: str, ours: float, peer: float, ratio: float, unit: str, fmt: str = ".2f",
              target: float = 1.0) -> Row:
    return Row(label, size, f"{ours:{fmt}} {unit}", f"{peer:{fmt}} {unit}", ratio, f"<= {target:.2f}",
               ratio <= target)


# ------------------------------------------------------------------ sections

SDK: list[str] = []  # the openai SDK every side ran, for the report's first line


def floor_figures(figures: dict[tuple[str, str], list[dict[str, Any]]], side: str, concurrency: int) -> dict[str, Any]:
    """A floor side's figures in these rounds (benchmarks/peers/bare.py): its ratio to each grading
    peer (paired by round, as every row is), its median wall, its slot use and the most any schedule
    keeps busy at its size; Nones when it failed."""
    pairs = {peer: peers_real.compare(figures, "grading", side, peer, "wall")
             for peer in peers_real.WORKLOADS["grading"][1]}
    for error in {c["error"] for c in pairs.values() if c and "error" in c}:
        log(f"{side} left out: {error}")
    pairs = {peer: c for peer, c in pairs.items() if c and "error" not in c}
    first = next(iter(pairs.values()), None)
    return {"ratio": {peer: c["ratio"] for peer, c in pairs.items()},
            "wall": first and first["ours"], "use": first and first["slot_use"][0],
            "most": first and best_slot_use(first["requests"][0], concurrency)}


def floor_note(goal: str, row: Row, floor: float, bare: dict[str, Any], sdk: dict[str, Any]) -> str:
    """What the floors measured in the same rounds say of a missed goal; "" when none falls short of
    it. The server's floor and the bare client's put it out of any client's reach; the SDK's calls
    alone put it beyond what the official SDK does with no work around it. A slot-use floor comes
    from grading's single calls, which keep slots busier than a groundedness's two stages do, and
    counts where its size allows the goal."""
    bound = float(goal.split()[-1])
    if goal.startswith("<="):
        if row.floor is not None and row.floor > bound:
            return f"out of reach: the server alone takes {floor:.2f} s of any client"
        if row.bare is not None and row.bare > bound:
            return (f"out of reach: a bare client, no SDK and no work, took {bare['wall']:.2f} s "
                    f"({row.bare:.2f} of the peer)")
        if row.sdk is not None and row.sdk > bound:
            return (f"the official SDK's calls alone, no work of ours, took {sdk['wall']:.2f} s "
                    f"({row.sdk:.2f} of the peer)")
    elif goal.startswith("slot use"):
        def short(f: dict[str, Any]) -> bool:  # kept less busy than the goal, at a size that allows it
            return f["use"] is not None and f["use"] < bound <= f["most"]
        if short(bare):
            return f"out of reach: a bare client, no SDK and no work, kept {bare['use']:.2f} of the slots busy"
        if short(sdk):
            return f"the official SDK's calls alone, no work of ours, kept {sdk['use']:.2f} of the slots busy"
    return ""


def llm_section(sizes: dict[str, Any], runs: int, latency: float,
                concurrency: int) -> tuple[list[Row], list[Row], list[str]]:
    """The judging rows, the tokens-per-judgment rows, and the requests / tokens detail lines."""
    if not (peers_real.VENV / "bin" / "python").exists():
        missing = f"no {peers_real.VENV.name}: bash benchmarks/peers/setup_peers.sh"
        return ([Row(label, "", note=missing) for label in LLM_ROWS.values()],
                [Row(f"prompt tokens per judgment: {name}", "", note=missing) for *_, name in TOKEN_ROWS], [])
    samples = {w: sizes[w] for w in ("grading", "faithfulness", "tournament")}
    SDK.append(peers_real.sdk_version())
    with peers_real.fake_server(latency) as base:
        figures = peers_real.collect(base, runs, samples, concurrency=concurrency, latency=latency, log=log)
    size = {"grading": f"{samples['grading']} answers", "faithfulness": f"{samples['faithfulness']} answers",
            "tournament": f"6 agents x {samples['tournament']} queries ({samples['tournament'] * 30} games)"}
    rows, detail = [], []
    # the floors of benchmarks/peers/bare.py in these rounds: a client doing no work, and the openai
    # judge's SDK calls with no work of ours around them
    bare, sdk = (floor_figures(figures, side, concurrency) for side in ("bare-grading", "sdk-grading"))
    uses = "".join(f"; {name} {f['use']:.2f}" for name, f in (("a bare client", bare), ("the SDK calls alone", sdk))
                   if f["use"] is not None)
    for (workload, ours, peer, figure), label in LLM_ROWS.items():
        c = peers_real.compare(figures, workload, ours, peer, figure)
        if c is None or "error" in c:
            rows.append(Row(label, size[workload], note=f"error: {(c or {}).get('error', 'no runs')}"[:200]))
            continue
        goal, met = peers_real.target((workload, ours, peer, figure), c)
        row = ratio_row(label, size[workload], c["ours"], c["peer"], c["ratio"], "s")
        row.spread = c["range"]
        if workload == "faithfulness":  # THELMA's targets are about idle slots: its slot use beside
            used = shown(c["slot_use"][0], goal, met) if goal.startswith("slot use") else f"{c['slot_use'][0]:.2f}"
            row.ours = (f"{c['ours']:.2f} s, slot use {used} "
                        f"(at most {best_slot_use(c['requests'][0], concurrency):.2f}"
                        + uses + ")")
        row.target, row.met = goal, met
        floor = server_floor(c["requests"][0], concurrency, latency, DEPTH[workload])
        row.floor = floor / c["peer"]
        if workload == "grading" and figure == "wall":
            row.bare, row.sdk = bare["ratio"].get(peer), sdk["ratio"].get(peer)
        if not met:
            row.note = floor_note(goal, row, floor, bare, sdk)
        if c["peer_failed"]:
            failed = f"the peer failed {c['peer_failed']} of {runs} runs, the rest compared"
            row.note = f"{row.note}; {failed}" if row.note else failed
        rows.append(row)
        detail.append(f"| {label} | {c['peer_name']} | {c['requests'][0]:.0f} / {c['requests'][1]:.0f} | "
                      f"{c['tokens'][0]:.0f} / {c['tokens'][1]:.0f} | "
                      f"{c['errors'][0]:.0f} / {c['errors'][1]:.0f} |")
    tokens = []
    for workload, ours, name in TOKEN_ROWS:
        peers = {peer: peers_real.compare(figures, workload, ours, peer, "wall")
                 for peer in peers_real.WORKLOADS[workload][1]}
        ok = {p: c for p, c in peers.items() if c and "error" not in c}
        if not ok:
            tokens.append(Row(f"prompt tokens per judgment: {name}", size[workload],
                              note="error: no peer ran"))
            continue
        peer, c = min(ok.items(), key=lambda item: item[1]["tokens"][1])
        t_ours, t_peer = c["tokens"]
        tokens.append(Row(f"prompt tokens per judgment: {name} vs the smallest peer, "
                          f"{peers_real.NAMES[peer]}", size[workload], f"{t_ours:.0f}", f"{t_peer:.0f}",
                          t_ours / t_peer, "<= 1.00", t_ours <= t_peer))
    return rows, tokens, detail


def bm25_section(sizes: dict[str, Any], runs: int) -> list[Row]:
    from retrieval import synthetic_corpus
    from retrieval_bm25 import bm25_peers

    n = sizes["bm25_docs"]
    chunks, queries, _ = synthetic_corpus(n)
    results = {r["engine"]: r for r in bm25_peers(chunks, queries, sizes["bm25_queries"], repeats=runs,
                                                  peers=("bm25s",))}
    label, size = "BM25 query p50 vs bm25s", f"{n:,} docs, {sizes['bm25_queries']} queries"
    bad = [r for r in results.values() if "error" in r]
    if bad or "bm25s" not in results:
        return [Row(label, size, note=f"error: {bad[0]['error'] if bad else 'bm25s did not run'}"[:200])]
    o, p = results["ours"], results["bm25s"]
    return [ratio_row(label, size, o["p50_ms"], p["p50_ms"], o["p50_ms"] / p["p50_ms"], "ms"),
            ratio_row("BM25 build vs bm25s", size, o["build_s"], p["build_s"],
                      o["build_s"] / p["build_s"], "s")]


def knn_section(sizes: dict[str, Any], runs: int) -> list[Row]:
    from langrag_eval.retrieval import Chunk, EmbeddedBackend
    from retrieval_knn import knn_batched, unit_vectors

    rows = []
    for n in sizes["knn"]:
        vectors = unit_vectors(n, 384)
        backend = EmbeddedBackend()
        backend.index([Chunk(id=f"d{i}", text=f"document {i}") for i in range(n)], vectors)
        # seven turns at least: one matrix product is 10 to 500 ms, and a median of three such turns
        # swung from 0.35 to 1.27 at 10k on a busy 2-core machine, for any code
        t = knn_batched(backend, vectors, repeats=max(runs, 7))
        del backend, vectors
        gc.collect()
        rows.append(ratio_row("batched KNN (100 queries) vs numpy", f"{n:,} x 384", t["ours"] * 1000,
                              t["numpy"] * 1000, t["ours"] / t["numpy"], "ms", ".1f"))
        log(f"  knn {n:,}: {t['ours'] * 1000:.1f} ms vs numpy {t['numpy'] * 1000:.1f} ms")
    return rows


def memory_section(sizes: dict[str, Any], runs: int) -> list[Row]:
    from memory import peak_rss

    small, large = sizes["memory"]
    with tempfile.TemporaryDirectory() as tmp:  # once: a peak is no timing the load sways
        (p0, s0), (p1, s1) = peak_rss(small, Path(tmp)), peak_rss(large, Path(tmp))
    kib = (p1 - p0) / (large - small) / 1024
    log(f"  memory: {p0 / 2**20:.1f} MiB at {small:,} items ({s0:.1f} s), {p1 / 2**20:.1f} MiB at "
        f"{large:,} ({s1:.1f} s, {1000 * s1 / large:.2f} ms an item): {kib:.2f} KiB per item")
    return [Row("`grade` peak RSS per item beyond the fixed cost", f"{small:,} and {large:,} items",
                f"{kib:.2f} KiB", "", None, "<= 1 KiB", kib <= 1.0)]


def guarded(name: str, fn: Callable[[], list[Row]]) -> list[Row]:
    start = time.perf_counter()
    log(f"{name} ... (load {load()})")
    try:
        rows = fn()
    except Exception as exc:  # noqa: BLE001 - one failed section must not lose the others
        log(traceback.format_exc())
        rows = [Row(name, "", note=f"error: {type(exc).__name__}: {exc}"[:200])]
    log(f"{name}: {time.perf_counter() - start:.0f} s")
    return rows


# ------------------------------------------------------------------ the report

def markdown(rows: list[Row], detail: list[str], args: argparse.Namespace, loads: tuple[str, str],
             seconds: float, held: str = "") -> str:
    command = f"python benchmarks/all.py --runs {args.runs}" + (" --quick" if args.quick else "") + (
        f" --busy {args.busy}" if args.busy else "") + (f" --only {args.only}" if args.only != ",".join(SECTIONS)
                                                          else "")
    lines = [f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} on {machine()}; load average "
             f"(1 / 5 / 15 min) {loads[0]} before, {loads[1]} after; {held + '; ' if held else ''}"
             f"{seconds / 60:.0f} min in all. `{command}`: median of "
             f"{args.runs} interleaved run(s) per pair (ours / peer: the median of the per-run ratios, their "
             f"range in brackets); LLM workloads through each tool's real OpenAI client "
             f"against `benchmarks/fake_openai.py` ({args.latency * 1000:.0f} ms a request, concurrency "
             f"{args.concurrency}), every side in the peers' environment"
             + (f" with {SDK[0]}" if SDK else "") + ".", "",
             "| workload | size | ours | peer | ours / peer | server floor / peer | bare client / peer "
             "| SDK calls alone / peer | target | result |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [r.markdown() for r in rows]
    if detail:
        lines += ["", "| LLM workload | peer | requests, ours / peer | prompt tokens per judgment, "
                      "ours / peer | errors, ours / peer |", "|---|---|---|---|---|", *detail]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="interleaved runs per pair (default 3)")
    ap.add_argument("--quick", action="store_true", help="small sizes (see the docstring)")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help=f"sections, comma-separated: {', '.join(SECTIONS)}")
    ap.add_argument("--latency", type=float, default=0.1,
                    help="seconds per fake-server request (default 0.1)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--busy", type=int, default=0, metavar="K",
                    help="K processes spinning on the CPU for the whole run: the shared machine the goals are "
                         "set for (3 holds a load near 4 on 2 cores); the load is sampled and printed")
    ap.add_argument("--out", type=Path, help="also write the markdown here")
    ap.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    args = ap.parse_args(argv)
    if args.out and args.out.exists() and not args.force:
        print(f"{args.out} exists: pass --force to overwrite it", file=sys.stderr)
        return 2
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    if only - set(SECTIONS):
        ap.error(f"unknown sections: {', '.join(sorted(only - set(SECTIONS)))}")
    sizes = QUICK if args.quick else FULL
    with busy(args.busy) as held:
        before, start = load(), time.perf_counter()
        log(f"{machine()}; load {before}" + (f"; {args.busy} busy processes beside it" if args.busy else ""))
        rows, detail = _sections(args, only, sizes)
        after = load()
    text = markdown(rows, detail, args, (before, after), time.perf_counter() - start, held.text())
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 1 if any(r.note.startswith("error") for r in rows) else 0


def _sections(args: argparse.Namespace, only: set[str], sizes: dict[str, Any]) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    detail: list[str] = []
    if only & {"llm", "tokens"}:
        parts: dict[str, Any] = {}

        def llm() -> list[Row]:  # one set of runs gives both sections
            parts["llm"], parts["tokens"], parts["detail"] = llm_section(sizes, args.runs, args.latency,
                                                                         args.concurrency)
            return []
        rows += guarded("llm", llm)  # only an error row, if the section failed
        for name in ("llm", "tokens"):
            rows += parts.get(name, []) if name in only else []
        detail = parts.get("detail", []) if "llm" in only else []
    for name, fn in (("bm25", bm25_section), ("knn", knn_section), ("memory", memory_section)):
        if name in only:
            rows += guarded(name, lambda fn=fn: fn(sizes, args.runs))
    return rows, detail


if __name__ == "__main__":
    sys.exit(main())
