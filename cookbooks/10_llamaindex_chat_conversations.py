"""Cookbook 10: does the chat engine get users where they want to go? Simulated users and whole conversations.

The question it answers: "our support chat is a LlamaIndex chat engine over the shop's documents. Do
customers with a goal reach it, turn after turn, without the bot forgetting what they said or
inventing terms? And does retrieval earn its keep: would a plain chat do as well?"

Four steps:
  1. two chat engines over one index, as LlamaIndex's docs build them: ``condense_plus_context``
     (retrieves for every turn) and ``simple`` (the model alone, no retrieval);
  2. a simulated user (the judge model holding a persona and a goal, prompt file
     ``conversation/simulated_user``) talks to each engine, unmodified, until its goal is met or four
     turns pass; ``capturing()`` records each turn's contexts; every conversation is stored and a
     rerun resumes without new calls;
  3. conversation judges (goal met, knowledge retained) grade each whole conversation, and THELMA
     scores each turn's answer against the documents that turn retrieved;
  4. a RAGElo tournament plays the two engines against each other on whole conversations.

The same from a shell:
    langrag-eval conversations simulate --app myapp:make_chat --personas personas.jsonl --out conversations.jsonl
    langrag-eval conversations judge conversations.jsonl --judge openai:gpt-4o

Run it:      python cookbooks/10_llamaindex_chat_conversations.py [--out DIR]
Real model:  change the one line marked below (the judge, who also plays the users), and the
             engines' ``LLM`` (``OpenAI(model="gpt-4o")`` from ``llama-index-llms-openai``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _scripted import build_judge, scripted_judge, scripted_llm
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.evaluation.langrag import capturing

from langrag_eval.conversations import (ConversationJudge, Persona, SimulatedUser, chat_engine_chat,
                                        conversation_tournament, simulate)
from langrag_eval.run import evaluate
from langrag_eval.runtime import RunStore
from langrag_eval.thelma import Thelma
from langrag_eval.tournament import TournamentConfig

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real judge (it plays the users too; openai:... needs
# `pip install langchain-openai` and OPENAI_API_KEY):
JUDGE = scripted_judge()  # swap for: JUDGE = "openai:gpt-4o"
# ---------------------------------------------------------------------------------------------
LLM = scripted_llm()  # the engines' model; with a real one: OpenAI(model="gpt-4o")

DOCUMENTS = {
    "warranty": "Warranty. Every Lumo lamp carries a two-year warranty covering defects.",
    "returns": "Returns. Unused items can be returned within 30 days of delivery for a full refund.",
    "shipping": "Shipping. Standard shipping takes 3 to 5 working days and is free over 50 euros.",
}
PERSONAS = [
    Persona(id="new-buyer", persona="Someone choosing a first Lumo lamp", goal="Learn the warranty and the returns",
            role="The Lumo shop's support assistant"),
    Persona(id="gift", persona="A customer buying a lamp as a gift", goal="Learn the shipping and the returns",
            role="The Lumo shop's support assistant"),
]


def build_engines() -> dict:
    """https://docs.llamaindex.ai/en/stable/module_guides/deploying/chat_engines/usage_pattern/"""
    index = VectorStoreIndex.from_documents([Document(text=t, id_=k) for k, t in DOCUMENTS.items()],
                                            embed_model=MockEmbedding(embed_dim=8))
    return {"retrieving": index.as_chat_engine(chat_mode="condense_plus_context", llm=LLM, similarity_top_k=3),
            "plain": index.as_chat_engine(chat_mode="simple", llm=LLM)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: a new temporary one)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-10-"))
    out.mkdir(parents=True, exist_ok=True)

    store = RunStore(out / "runs.sqlite")
    judge = build_judge(JUDGE, store=store)
    conversations, rows = {}, []
    for name, engine in build_engines().items():
        # Step 2: a fresh memory per conversation; the engine itself is untouched.
        conversations[name] = simulate(lambda: chat_engine_chat(engine), PERSONAS, SimulatedUser(judge),
                                       max_turns=4, store=store, run_id=f"simulate-{name}", capturing=capturing)
        # Step 3: whole conversations, then every turn as a single-turn sample.
        judged = evaluate(conversations[name], {c: ConversationJudge(judge, criterion=c)
                                                for c in ("goal_met", "knowledge_retention")},
                          store=store, run_id=f"simulate-{name}")
        turns = [s for c in conversations[name] for s in c.samples()]
        thelma = evaluate(turns, {"thelma": Thelma(judge, metrics=("rp", "gr"))}, store=store,
                          run_id=f"simulate-{name}")["thelma"]
        grounded = [r.score_values().get("gr") for r in thelma if hasattr(r, "score_values")]
        grounded = [v for v in grounded if v is not None]
        for c, goal, kept in zip(conversations[name], judged["goal_met"], judged["knowledge_retention"]):
            rows.append({"engine": name, "persona": c.id, "turns": [t.user for t in c.turns],
                         "goal_met_by_user": c.goal_met, "goal_grade": getattr(goal, "score", None),
                         "retention_grade": getattr(kept, "score", None),
                         "contexts_per_turn": [len(t.contexts) for t in c.turns],
                         # THELMA's groundedness over the engine's turns (none without contexts)
                         "engine_groundedness": sum(grounded) / len(grounded) if grounded else None})

    # Step 4: the two engines on whole conversations.
    result = conversation_tournament(conversations, judge, TournamentConfig(tournaments=50, n_boot=50),
                                     store=store, run_id="tournament")
    ranking = [entry["agent"] for entry in result.summary["ranking"]]
    (out / "results.json").write_text(json.dumps({"conversations": rows, "ranking": ranking,
                                                  "games": result.summary["games"]}, indent=2), encoding="utf-8")
    with (out / "conversations.jsonl").open("w", encoding="utf-8") as f:
        for name, done in conversations.items():
            for c in done:
                f.write(json.dumps({"engine": name, **c.model_dump(mode="json")}, ensure_ascii=False) + "\n")
    for r in rows:
        print(f"{r['engine']:10} {r['persona']:9} {len(r['turns'])} turns  goal met {r['goal_met_by_user']}  "
              f"goal grade {r['goal_grade']}  kept {r['retention_grade']}  contexts {r['contexts_per_turn']}")
    print("ranking on whole conversations:", ranking)
    print(f"results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
