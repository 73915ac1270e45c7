"""Cookbook 2: evaluate a LlamaIndex query engine with BatchEvalRunner, then try langrag-eval's
retrievers inside the same kind of query engine and compare.

The question it answers: "my LlamaIndex query engine answers from a vector index; are its answers
right, are they grounded in what it retrieved, and would BM25 or hybrid retrieval do better?"

Three steps:
  1. your query engine, as you have it: a ``VectorStoreIndex`` over documents, ``as_query_engine``;
  2. ``BatchEvalRunner`` with our evaluators, each wrapped in ``LangragEvaluator``: vRAG-Eval
     (``VragGrader``, against reference answers) and THELMA (``Thelma``, all metrics, and ``gr`` alone),
     contexts taken from each response's ``source_nodes``;
  3. the same documents in langrag-eval's embedded backend (BM25, KNN, hybrid RRF), plugged into a
     LlamaIndex ``RetrieverQueryEngine`` through ``LangragRetriever``, plus the RAG-Fusion agent as a
     query engine; the same runner grades them all.

LlamaIndex reads ``Settings.llm`` and ``Settings.embed_model`` (OpenAI by default) wherever a model
is not passed. Every model below is passed explicitly, so nothing falls back to OpenAI.

Run it:      python cookbooks/02_llamaindex_query_engine.py [--out DIR]
Real model:  change the one line marked below.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from pathlib import Path

from _scripted import embedder, scripted_llm
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.evaluation import BatchEvalRunner
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.evaluation.langrag import LangragEvaluator, LangragRetriever, LlamaIndexModel, six_query_engines

from langrag_eval.grading import VragGrader
from langrag_eval.retrieval import Chunk, EmbeddedBackend
from langrag_eval.retrieval.ingest import ingest
from langrag_eval.runtime import Judge
from langrag_eval.thelma import Thelma

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model (any LlamaIndex LLM works; OpenAI's needs
# `pip install llama-index-llms-openai` and OPENAI_API_KEY):
LLM = scripted_llm()  # swap for: from llama_index.llms.openai import OpenAI; LLM = OpenAI(model="gpt-4o")
# ---------------------------------------------------------------------------------------------

DOCUMENTS = {
    "tides": "Tide tables. The harbour has two high tides a day. High water at the north pier comes "
             "about 40 minutes after high water at the harbour mouth.",
    "permits": "Mooring permits. A seasonal mooring permit costs 420 euros and runs from April to "
               "October. Visitors may moor for up to three nights for 25 euros per night.",
    "fuel": "Fuel dock. The fuel dock sells diesel and petrol and is open from 7 am to 7 pm in "
            "summer. It closes at 5 pm from November to March.",
    "waste": "Waste and recycling. Oil and batteries go to the hazardous waste point beside the "
             "harbour office. Grey water must not be pumped out inside the harbour.",
    "slipway": "Slipway. The public slipway takes boats up to 8 metres. Launching costs 15 euros, "
               "paid at the harbour office or by the app.",
    "office": "Harbour office. The office is open every day from 8 am to 6 pm and answers on VHF "
              "channel 12.",
}

QUESTIONS = [
    ("How much is a seasonal mooring permit?", "A seasonal mooring permit costs 420 euros (April to October)."),
    ("When does the fuel dock close in winter?", "From November to March the fuel dock closes at 5 pm."),
    ("Where do I dispose of used batteries?", "At the hazardous waste point beside the harbour office."),
    ("Which VHF channel does the harbour office use?", "The harbour office answers on VHF channel 12."),
    ("How long can a boat be to use the slipway?", "The public slipway takes boats up to 8 metres long."),
]


class MiniLMEmbedding(BaseEmbedding):
    """The packaged offline MiniLM as a LlamaIndex embedding model (yours may be OpenAIEmbedding)."""

    def _get_text_embedding(self, text: str) -> list[float]:
        return embedder().embed([text])[0].tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)


def build_query_engine(llm):
    """Step 1: the query engine as a team would have it (models passed explicitly)."""
    docs = [Document(text=text, id_=doc_id) for doc_id, text in DOCUMENTS.items()]
    index = VectorStoreIndex.from_documents(docs, embed_model=MiniLMEmbedding(model_name="all-MiniLM-L6-v2"))
    return index.as_query_engine(llm=llm, similarity_top_k=2)


def build_langrag_engines(llm) -> dict:
    """Step 3: the same documents in langrag-eval's embedded backend, behind LlamaIndex engines."""
    backend = EmbeddedBackend()
    ingest(backend, [Chunk(id=doc_id, text=text) for doc_id, text in DOCUMENTS.items()], embedder=embedder())
    engines = {f"langrag-{mode}": RetrieverQueryEngine.from_args(
        LangragRetriever.from_backend(backend, mode=mode, embedder=embedder(), k=2), llm=llm)
        for mode in ("bm25", "hybrid")}
    # The paper's RAG-Fusion agent (four query rewrites, RRF) is a ready-made query engine too.
    engines["fusion-hybrid"] = six_query_engines(backend, embedder(), llm, k=2)["fusion-hybrid"]
    return engines


async def evaluate_engines(engines: dict, judge: Judge) -> dict:
    """Step 2: one BatchEvalRunner, our evaluators, every engine over the same questions."""
    runner = BatchEvalRunner({
        "vrag": LangragEvaluator(VragGrader(judge), score="grade"),   # 1-5, passing = accepted (>= 4)
        "thelma": LangragEvaluator(Thelma(judge, embedder=embedder(), batched=True)),  # mean of the 7 scores
        "groundedness": LangragEvaluator(Thelma(judge, metrics=("gr",)), score="gr"),  # one metric alone
    }, workers=4)
    questions = [q for q, _ in QUESTIONS]
    out = {}
    for name, engine in engines.items():
        # `reference` reaches every evaluator; vRAG-Eval grades against it, THELMA ignores it.
        results = await runner.aevaluate_queries(engine, queries=questions, reference=[r for _, r in QUESTIONS])
        out[name] = results
    return out


def fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:5.2f}"


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for results (default: a temp folder)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-02-"))
    out.mkdir(parents=True, exist_ok=True)

    # One Judge for every evaluator: shared reply cache (THELMA's decompositions are asked once even
    # though two evaluators need them), concurrency limit and usage meter.
    judge = Judge(LlamaIndexModel(LLM))
    engines = {"your-vector-engine": build_query_engine(LLM), **build_langrag_engines(LLM)}
    results = asyncio.run(evaluate_engines(engines, judge))

    table, per_query = {}, []
    for name, by_eval in results.items():
        vrag = by_eval["vrag"]
        table[name] = {
            "vrag_mean": _mean([r.score for r in vrag]),
            "accept_rate": _mean([float(r.passing) for r in vrag if r.passing is not None]),
            "thelma_mean": _mean([r.score for r in by_eval["thelma"]]),
            "groundedness": _mean([r.score for r in by_eval["groundedness"]]),
            "unscored": sum(r.invalid_result for rs in by_eval.values() for r in rs)}
        for i, r in enumerate(vrag):
            per_query.append({"engine": name, "query": r.query, "response": r.response,
                              "contexts": list(r.contexts or []), "vrag": r.score, "accepted": r.passing,
                              "thelma": by_eval["thelma"][i].score, "thelma_feedback": by_eval["thelma"][i].feedback,
                              "groundedness": by_eval["groundedness"][i].score})
    (out / "results.json").write_text(json.dumps({"engines": table, "answers": per_query}, indent=2,
                                                 ensure_ascii=False), encoding="utf-8")

    print(f"{'engine':<20} {'vRAG 1-5':>8} {'accept':>7} {'THELMA':>7} {'ground.':>8}")
    for name, row in table.items():
        print(f"{name:<20} {fmt(row['vrag_mean']):>8} {fmt(row['accept_rate']):>7} "
              f"{fmt(row['thelma_mean']):>7} {fmt(row['groundedness']):>8}")
    u = judge.usage
    print(f"\njudge calls: {u.calls} (+{u.cached} from cache, {u.failed} failed); results in {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
