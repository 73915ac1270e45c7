"""Cookbook 3: RAG against RAG-Fusion over BM25, KNN and hybrid retrieval, ranked by a RAGElo
tournament (the RAG-Fusion paper's six agents and its evaluation).

The question it answers: "which of my pipeline variants answers best, by how much, and is its
retrieval better?" There are no reference answers here: an LLM judge rates every retrieved document
0-2 for its question (those ratings give MRR@5 per agent), then compares the agents' answers two by
two, each pair in both orders (a verdict that flips with the order counts as a tie). Bradley-Terry
and Elo turn the games into a ranking with intervals.

The documents go into langrag-eval's embedded backend (Lucene-compatible BM25, exact KNN over
MiniLM embeddings, hybrid by reciprocal rank fusion). Set ``OPENSEARCH_URL`` (and, if needed,
``OPENSEARCH_USER`` / ``OPENSEARCH_PASSWORD``) to run the same agents on your OpenSearch cluster
instead; the index ``langrag-cookbook-03`` is created there (and replaced on every run).

Run it:      python cookbooks/03_rag_vs_fusion_tournament.py [--out DIR]
             OPENSEARCH_URL=https://localhost:9200 python cookbooks/03_rag_vs_fusion_tournament.py
Real model:  change the one line marked below. Everything (answers, judgments, games) is stored in
             DIR/runs.sqlite: running again with the same --out resumes and costs no new calls.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from _scripted import build_judge, embedder, scripted_judge

from langrag_eval.pipelines import Query, answer_record, run_agents, six_agents, write_answers
from langrag_eval.retrieval import EmbeddedBackend, Source
from langrag_eval.retrieval.ingest import ingest
from langrag_eval.runtime import RunStore, run_id_for
from langrag_eval.tournament import TournamentConfig, TournamentData, format_summary, run_tournament

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model ("provider:model", resolved like `--judge`; openai:...
# needs `pip install langchain-openai` and OPENAI_API_KEY; "local" is the offline llama.cpp model):
JUDGE = scripted_judge()  # swap for: JUDGE = "openai:gpt-4o"
# ---------------------------------------------------------------------------------------------

# An invented sensor catalogue: several products share terms, so what a query names precisely matters.
DOCUMENTS = {
    "tp-100": "The TP-100 is an indoor temperature probe with an accuracy of 0.2 degrees Celsius "
              "between 0 and 50 degrees. It runs on two AA batteries for about three years.",
    "tp-200": "The TP-200 is an outdoor temperature probe rated IP67. Its accuracy is 0.5 degrees "
              "Celsius from -40 to 85 degrees, and it reports every 60 seconds over LoRaWAN.",
    "hm-10": "The HM-10 humidity sensor measures relative humidity from 0 to 100 percent with an "
             "accuracy of 2 percent. It is not waterproof and is meant for indoor use only.",
    "gw-1": "The GW-1 gateway connects up to 200 sensors over LoRaWAN to the cloud through Ethernet "
            "or LTE. It needs mains power and has a battery backup lasting four hours.",
    "pairing": "Pairing a sensor: hold the button for five seconds until the LED blinks blue, then "
               "open the app and scan the QR code on the back of the sensor.",
    "reset": "Factory reset: hold the button for fifteen seconds until the LED turns red. All "
             "pairing data is erased and the sensor must be paired again.",
    "batteries": "Batteries: the TP-100 and HM-10 use two AA batteries. The TP-200 has a built-in "
                 "lithium cell that lasts about five years and cannot be replaced by the user.",
    "warranty": "Warranty: all sensors carry a two-year warranty. The GW-1 gateway carries a "
                "three-year warranty. Damage from opening the housing is not covered.",
    "app": "The app shows readings from every paired sensor, sends alerts when a reading leaves a "
           "range you set, and exports the history as CSV.",
    "lora": "LoRaWAN range: in open country a sensor reaches the gateway at up to 10 km; inside "
            "buildings expect 1 to 2 km depending on walls.",
}

QUERIES = [
    "How accurate is the outdoor temperature probe?",
    "Can I replace the battery of the TP-200?",
    "How do I pair a new sensor with the app?",
    "How many sensors can one gateway handle?",
    "Is the HM-10 suitable for a greenhouse with water spray?",
    "What warranty does the gateway have?",
]


def make_backend():
    """The embedded backend, or the OpenSearch cluster named by OPENSEARCH_URL."""
    if os.environ.get("OPENSEARCH_URL"):
        from langrag_eval.retrieval.opensearch import OpenSearchBackend

        backend = OpenSearchBackend(index="langrag-cookbook-03")   # URL and credentials from the environment
        backend.delete_index()                                     # a fresh index on every run
        print(f"backend: OpenSearch at {backend.url}, index langrag-cookbook-03")
        return backend
    print("backend: embedded (set OPENSEARCH_URL to run on an OpenSearch cluster)")
    return EmbeddedBackend()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for results (default: a temp folder)")
    parser.add_argument("--tournaments", type=int, default=500, help="shuffled Elo tournaments (default 500)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-03-"))
    out.mkdir(parents=True, exist_ok=True)

    # The run store keeps every answer, judgment and game, keyed by a run id derived from the
    # settings: the same command with the same settings resumes the same run.
    store = RunStore(out / "runs.sqlite")
    judge = build_judge(JUDGE)
    config = TournamentConfig(schedule="all", k=5, tournaments=args.tournaments, n_boot=200, seed=0)
    settings = {"judge": judge.model_id, "queries": QUERIES, "tournament": config.model_dump()}
    run_id = store.open_run("cookbook-03", settings, run_id_for("cookbook-03", settings), judge=judge.model_id)
    judge = judge.for_run(run_id)

    # 1. Index the documents: BM25 text and MiniLM vectors (KNN and hybrid need them).
    backend = make_backend()
    try:
        report = ingest(backend, [Source(id=i, text=t) for i, t in DOCUMENTS.items()], embedder=embedder())
        print(f"indexed {report.indexed} chunks")

        # 2. The six agents: RAG and RAG-Fusion (four query rewrites fused by RRF, k = 60) over
        #    BM25, KNN and hybrid. The judge's model also writes the answers here; pass another
        #    Judge as generator to grade a different model than the one that answers.
        agents = six_agents(backend, embedder(), judge, k=5, n_variations=4)
        queries = [Query(qid=f"q{i}", query=q) for i, q in enumerate(QUERIES, start=1)]
        runs = run_agents(agents, queries, store=store, run_id=run_id)
    finally:
        getattr(backend, "close", lambda: None)()   # the OpenSearch backend holds connections
    answers = [r.result for r in runs if r.ok]
    failed: dict[str, list] = {}
    for r in runs:
        if not r.ok:                        # failures are data: recorded with a reason, the rest runs
            failed.setdefault(r.agent, []).append(r.result)
    for agent, reasons in failed.items():
        print(f"  {agent}: no answer on {len(reasons)} of {len(QUERIES)} queries, e.g. {reasons[0].reason}")
    write_answers(out / "answers.jsonl", answers)   # the layout `langrag-eval tournament` reads too

    # 3. The tournament: relevance judgments (qrels, MRR@5), then every pair of agents on every
    #    query in both orders; Bradley-Terry with bootstrap intervals and Elo over shuffled orders.
    data = TournamentData.from_records(answer_record(a) for a in answers)
    result = run_tournament(data, judge, config, store=store, run_id=run_id)
    store.put_artifact(run_id, "tournament", result.summary)     # what the HTML report reads
    (out / "tournament.json").write_text(json.dumps(result.summary, indent=2), encoding="utf-8")
    store.finish_run(run_id, {"answers": len(answers)})

    print()
    print(format_summary(result.summary))                        # ranking, win matrix, MRR@5
    print(f"\nrun {run_id}: answers in {out / 'answers.jsonl'}, summary in {out / 'tournament.json'}")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
