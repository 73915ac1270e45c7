"""Cookbook 7: grade a LangChain agent and a LangGraph RAG graph, and find out which serves better.

The question it answers: "our assistant is a ``create_agent`` agent that searches the docs with a
retriever tool; a colleague rebuilt it as a two-node LangGraph graph. Which answers better, and is
either weak because of what it retrieves or because of how it answers?"

Three steps:
  1. both apps, exactly as LangChain's docs build them: ``create_agent`` with a retriever tool, and
     a ``StateGraph`` with a retrieve node and a generate node;
  2. ``capturing()`` records every call of either app (question, the documents the retriever
     returned, with their ids and metadata, and the final answer), leaving the apps untouched;
  3. each captured answer is graded with vRAG-Eval against the reference and scored with THELMA
     from its captured contexts, then a RAGElo tournament plays the agent against the graph.

Run it:      python cookbooks/08_agent_and_langgraph.py [--out DIR]
Real model:  change the one line marked below (the apps' model; the judge reuses it).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import TypedDict

from _scripted import scripted_agent_model
from langchain.agents import create_agent
from langchain.chat_models import init_chat_model  # noqa: F401  (for the real-model line below)
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools.retriever import create_retriever_tool
from langchain_langrag import LangChainModel, LangragRetriever, capturing, tournament_from_runnables
from langgraph.graph import START, StateGraph

from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.thelma import Thelma
from langrag_eval.tournament import TournamentConfig
from langrag_eval.types import Sample

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model (any LangChain chat model that calls tools; openai:...
# needs `pip install langchain-openai` and OPENAI_API_KEY):
LLM = scripted_agent_model()  # swap for: LLM = init_chat_model("openai:gpt-4o")
# ---------------------------------------------------------------------------------------------

DOCS = [
    Document(id="returns", metadata={"source": "policies.md"},
             page_content="Returns. Unused items can be returned within 30 days of delivery for a full refund."),
    Document(id="shipping", metadata={"source": "policies.md"},
             page_content="Shipping. Standard shipping takes 3 to 5 working days and is free over 50 euros."),
    Document(id="warranty", metadata={"source": "warranty.pdf"},
             page_content="Warranty. Every Lumo lamp carries a two-year warranty covering defects."),
    Document(id="arc", metadata={"source": "catalogue.pdf"},
             page_content="Lumo Arc lamp. The Lumo Arc is a floor lamp with a 2,000 lumen dimmable LED head."),
]
DATASET = [("How long is the warranty on a Lumo lamp?", "Two years, covering defects."),
           ("How long does standard shipping take?", "3 to 5 working days."),
           ("Within how many days can unused items be returned?", "Within 30 days of delivery.")]
PROMPT = ChatPromptTemplate.from_template("Answer from the context.\nContext: {context}\nQuestion: {question}")


def build_retriever() -> LangragRetriever:
    return LangragRetriever.from_documents(DOCS, k=2)  # BM25 over the documents, ids and metadata kept


def build_agent(llm, retriever):
    tool = create_retriever_tool(retriever, "search_shop_docs", "Search the shop's policies and catalogue.")
    return create_agent(llm, tools=[tool], system_prompt="Answer customers from the shop's documents.")


class State(TypedDict):
    question: str
    context: list
    answer: str


def build_graph(llm, retriever):
    def retrieve(state: State) -> dict:
        return {"context": retriever.invoke(state["question"])}

    def generate(state: State) -> dict:
        context = "\n\n".join(d.page_content for d in state["context"])
        return {"answer": llm.invoke(PROMPT.invoke({"context": context, "question": state["question"]})).content}

    builder = StateGraph(State).add_sequence([retrieve, generate])
    builder.add_edge(START, "retrieve")
    return builder.compile()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: a new temporary one)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-07-"))
    out.mkdir(parents=True, exist_ok=True)

    retriever = build_retriever()
    apps = {"agent": build_agent(LLM, retriever), "graph": build_graph(LLM, retriever)}
    inputs = {"agent": lambda q: {"messages": [{"role": "user", "content": q}]},
              "graph": lambda q: {"question": q}}

    # Step 2: the apps' own calls, unchanged, inside the capture.
    with capturing() as capture:
        for question, _ in DATASET:
            for name, app in apps.items():
                app.invoke(inputs[name](question))

    # Step 3: grade, score, and play the two apps against each other.
    judge = Judge(LangChainModel(LLM))
    grader, thelma = VragGrader(judge), Thelma(judge, metrics=("sp1", "rp", "gr"))
    labels = dict(DATASET)
    rows = []
    for app_name, sample in zip([n for _ in DATASET for n in apps], capture.samples):
        grade = grader.evaluate(Sample(question=sample.question, answer=sample.answer, reference=labels[sample.question]))
        scores = thelma.evaluate(sample)
        rows.append({"app": app_name, "question": sample.question, "answer": sample.answer,
                     "contexts": [{"id": d.id, "source": d.metadata.get("source")} for d in sample.contexts],
                     "vrag": getattr(grade, "score", None), "thelma": scores.score_values()})
    result = tournament_from_runnables(apps, [q for q, _ in DATASET], judge,
                                       TournamentConfig(tournaments=50, n_boot=50))
    (out / "results.json").write_text(json.dumps({"samples": rows, "ranking": result.summary["ranking"]},
                                                 indent=2), encoding="utf-8")
    for r in rows:
        print(f"{r['app']:6} vRAG {r['vrag']}  {r['question']}  <- {[c['id'] for c in r['contexts']]}")
    print("ranking:", [entry.get("agent", entry) for entry in result.summary["ranking"]])
    print(f"results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
