"""Cookbook 4: monitor a RAG app in production with THELMA, from its logs alone.

The question it answers: "users ask my assistant things I never wrote test answers for; from what it
logged (the query, the passages it retrieved, its response), is it working, and when it is not,
which part should I fix: retrieval, the generator, or the knowledge base?"

THELMA needs no reference answers. It scores seven things per logged exchange: source precision
(SP1 per passage, SP2 per fact), source query coverage (SQC: are all parts of the question answered
by the sources?), response precision (RP), response query coverage (RQC), self-distinctness (SD:
does the response repeat itself?) and groundedness (GR: is every claim backed by a source?), and the
paper's Table 2 maps the pattern of low and high scores to the component to improve.

Here a small production log is written as JSONL (one exchange per line, as a logging middleware
would write it, with one broken line), then scored with the Python API. The same from a shell:

    langrag-eval thelma production.jsonl --id-col request_id --batched \\
        --judge openai:gpt-4o --out production.thelma.jsonl

(``--query-col`` / ``--sources-col`` / ``--response-col`` name other columns; the command prints the
same means, unscored counts and diagnosis, and resumes when run again.)

Run it:      python cookbooks/04_thelma_monitoring.py [--out DIR] [--log FILE]
Real model:  change the one line marked below.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _scripted import build_judge, embedder, scripted_judge

from langrag_eval.run import evaluate, record_run
from langrag_eval.thelma.io import read_samples
from langrag_eval.runtime import RunStore, run_id_for
from langrag_eval.thelma import METRIC_NAMES, Thelma

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model ("provider:model", resolved like `--judge`; openai:...
# needs `pip install langchain-openai` and OPENAI_API_KEY; "local" is the offline llama.cpp model):
JUDGE = scripted_judge()  # swap for: JUDGE = "openai:gpt-4o"
# ---------------------------------------------------------------------------------------------

ROUTER = ("Restarting the router: unplug the Fibra router for 30 seconds, plug it back in and wait "
          "until the white light is steady, which takes about three minutes.")
WIFI = ("Wi-Fi range: the Fibra router covers about 80 square metres. For larger homes the Fibra Mesh "
        "extender costs 4 euros a month and doubles the covered area.")
BILLING = ("Billing: invoices are issued on the first day of each month and paid by direct debit "
           "on the fifth. A paper invoice costs 1.50 euros.")
MOVING = ("Moving house: request the transfer in the app at least ten days before the move. The "
          "installation at the new address is free once a year.")
OUTAGE = ("Outages: when several homes in a street lose service, the outage map in the app shows the "
          "expected repair time. Customers are credited one day of fees for every full day without service.")

# What a logging middleware wrote: request id, timestamp, the user's query, the passages the
# retriever returned (texts), the response sent back.
PRODUCTION_LOG = [
    {"request_id": "r-101", "ts": "2025-03-03T08:12:09Z", "query": "How do I restart my router?",
     "sources": [ROUTER, BILLING], "response": ROUTER.split(": ", 1)[1]},
    {"request_id": "r-102", "ts": "2025-03-03T08:40:51Z", "query": "Is a technician visit free?",
     "sources": [MOVING], "response": "Yes, technician visits are always free and can be booked for any weekday evening."},
    {"request_id": "r-103", "ts": "2025-03-03T09:02:17Z", "query": "How far does my Wi-Fi reach?",
     "sources": [BILLING, OUTAGE], "response": "Invoices are issued on the first day of each month."},
    {"request_id": "r-104", "ts": "2025-03-03T09:15:42Z", "query": "What does the mesh extender cost?",
     "sources": [WIFI], "response": "The Fibra Mesh extender costs 4 euros a month. The extender costs "
     "4 euros per month. It is 4 euros each month for the extender."},
    {"request_id": "r-105", "ts": "2025-03-03T10:01:03Z",
     "query": "When is my invoice issued and how much is a paper invoice?",
     "sources": [BILLING], "response": "Invoices are issued on the first day of each month."},
    {"request_id": "r-106", "ts": "2025-03-03T10:22:30Z", "query": "Do I get money back after an outage?",
     "sources": [], "response": "I could not find anything about that."},
    {"request_id": "r-107", "ts": "2025-03-03T10:31:12Z", "query": "How do I move my contract?",
     "sources": MOVING, "response": "Request the transfer in the app ten days before."},   # a logging bug: not a list
    {"request_id": "r-108", "ts": "2025-03-03T11:05:55Z", "query": "Is moving the installation free?",
     "sources": [MOVING, WIFI], "response": "Yes: the installation at the new address is free once a year."},
]


def write_log(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for record in PRODUCTION_LOG:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for results (default: a temp folder)")
    parser.add_argument("--log", type=Path, default=None, help="your own JSONL log (default: the example log)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-04-"))
    out.mkdir(parents=True, exist_ok=True)
    log = args.log or write_log(out / "production.jsonl")

    # 1. Read the log: the same reader `langrag-eval thelma` uses. A row that cannot be used is
    #    reported with file, line and field, and every other row is still scored.
    samples, _, problems = read_samples(str(log), id_col="request_id")
    for problem in problems:
        print(f"skipped: {problem}")

    # 2. Score every exchange. batched=True asks one judge call per match task and sample instead of
    #    one per component (fewer, longer calls). The embedder serves self-distinctness only.
    #    With a run store and run id, a restarted job reads finished samples back instead of paying
    #    for them again: schedule this nightly on yesterday's log.
    store = RunStore(out / "runs.sqlite")
    judge = build_judge(JUDGE)
    settings = {"log": str(log), "judge": judge.model_id, "batched": True}
    run_id = store.open_run("cookbook-04", settings, run_id_for("cookbook-04", settings), judge=judge.model_id)
    #    Each sample's judgment is stored with its typed scores (one `Score` per metric: value,
    #    scale, pass, reason, or the Unscored cause), which `compare`, the gate and the HTML
    #    report's item browser read by name; `record_run` adds the summary the report's THELMA
    #    section draws. `langrag-eval report RUN_ID` then writes the report.
    thelma = Thelma(judge, batched=True, embedder=embedder())
    run = evaluate(samples, {"thelma": thelma}, store=store, run_id=run_id)
    results = run["thelma"]
    summary = run.summary("thelma").details
    record_run(store, run_id, {"thelma": summary}, finished={"samples": len(samples)})

    # 3. Read the results: per metric mean, spread and unscored count; then the diagnosis.
    print(f"\n{len(results)} exchanges scored, {len(problems)} log line(s) skipped\n")
    print(f"{'metric':<30} {'mean':>5} {'std':>5} {'n':>3}  unscored")
    for metric, m in summary["metrics"].items():
        mean = "  -  " if m["mean"] is None else f"{m['mean']:.2f}"
        std = "  -  " if m["std"] is None else f"{m['std']:.2f}"
        causes = ", ".join(f"{c}: {n}" for c, n in m["causes"].items())
        print(f"{METRIC_NAMES[metric]:<30} {mean:>5} {std:>5} {m['n']:>3}  {m['unscored']}{f' ({causes})' if causes else ''}")

    print("\nDiagnosis on the means:")
    for f in summary["diagnosis"]["on_means"]:
        print(f"  {f['rule']}: improve the {f['component']}. {f['interpretation']}")
    if not summary["diagnosis"]["on_means"]:
        print("  no Table 2 pattern on the means; look at the exchanges below")
    print("Patterns by exchange (share of exchanges):")
    for f in summary["diagnosis"]["by_sample"]:
        print(f"  {f['share']:.0%} {f['rule']} -> {f['component']}")

    # 4. What a person should read first: the exchanges whose claims the sources do not back.
    print("\nResponses with unsupported claims (groundedness < 1):")
    for r in results:
        gr = next(s for s in thelma.scores(r) if s.name == "gr")   # a typed Score, scored or not
        if gr.value is not None and gr.value < 1.0:
            print(f"  {r.id}: groundedness {gr.value:.2f} ({gr.reason}); fix: "
                  f"{', '.join(dict.fromkeys(f.component for f in r.diagnosis)) or '-'}")

    rows = [{"id": r.id, "scores": r.score_values(), "diagnosis": [f.component for f in r.diagnosis],
             "unscored": {m: u.cause for m, u in r.unscored().items()}} for r in results]
    result = {"summary": summary, "samples": rows, "problems": [str(p) for p in problems],
              "judge_calls_this_run": judge.usage.calls}
    (out / "thelma.json").write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\njudge calls this run: {judge.usage.calls}; results in {out / 'thelma.json'}")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
