"""Cookbook 1: grade the LangChain RAG app you already have, without changing it.

The question it answers: "my LCEL app answers questions from my documents; how good are its
answers, and if they are weak, is it the retriever or the generator?"

Three steps:
  1. the app, exactly as a team would have written it (retriever + prompt + chat model + parser);
  2. a callback handler from ``langchain_langrag`` records what the app did on every call (the
     question, the documents its retriever returned, the answer) without touching the app;
  3. ``langsmith.evaluate`` runs the app over a small labelled dataset and grades every answer with
     vRAG-Eval (against the reference answer) and THELMA (reference-free, from the captured
     contexts), fully offline: nothing is uploaded and no LangSmith key is needed.

Run it:      python cookbooks/01_langchain_app.py [--out DIR]
Real model:  change the one line marked below (the app's model; the judge reuses it).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import uuid
from pathlib import Path

from _scripted import embedder, scripted_chat_model
from langchain.chat_models import init_chat_model  # noqa: F401  (for the real-model line below)
from langchain_core.embeddings import Embeddings
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_langrag import LangChainModel, capturing, langsmith_evaluator
from langsmith import Client, evaluate
from langsmith.schemas import Example

from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.thelma import Thelma

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model (any LangChain chat model works; openai:... needs
# `pip install langchain-openai` and OPENAI_API_KEY):
LLM = scripted_chat_model()  # swap for: LLM = init_chat_model("openai:gpt-4o")
# ---------------------------------------------------------------------------------------------

# A small knowledge base, as your app would load it from files or a database.
CORPUS = [
    ("Returns. Unused items can be returned within 30 days of delivery for a full refund. "
     "Opened electronics can be returned within 14 days and a 10 percent restocking fee applies."),
    ("Shipping. Standard shipping takes 3 to 5 working days and is free on orders over 50 euros. "
     "Express shipping delivers the next working day for 9 euros when ordered before 2 pm."),
    ("Warranty. Every Lumo lamp carries a two-year warranty covering defects in materials and "
     "workmanship. The warranty does not cover damage from dropping the lamp or from water."),
    ("Lumo Arc lamp. The Lumo Arc is a floor lamp with a 2,000 lumen dimmable LED head and a "
     "colour temperature adjustable from 2,700 K to 6,500 K. It weighs 6.4 kg."),
    ("Lumo Mini lamp. The Lumo Mini is a battery desk lamp that runs for 12 hours on one charge "
     "and charges fully in 3 hours over USB-C."),
    ("Payment. We accept credit cards, PayPal and bank transfer. Orders paid by bank transfer ship "
     "once the payment has arrived, usually within two working days."),
]

# Questions with reference answers (vRAG-Eval grades against them; THELMA does not need them).
DATASET = [
    ("How long do I have to return an opened lamp?",
     "Opened electronics can be returned within 14 days, with a 10 percent restocking fee."),
    ("How much does express shipping cost?",
     "Express shipping costs 9 euros and delivers the next working day when ordered before 2 pm."),
    ("Does the warranty cover water damage?",
     "No. The two-year warranty does not cover damage from water."),
    ("How long does the Lumo Mini battery last?",
     "The Lumo Mini runs for 12 hours on one charge."),
    ("Is the Lumo Arc lamp waterproof?",                     # the knowledge base does not say
     "The documents do not say whether the Lumo Arc is waterproof; it should not be presented as such."),
]


# ---------------------------------------------------------------------------------------------
# Step 1. The app, as written by its team. Nothing below this block is changed to evaluate it.
class MiniLMEmbeddings(Embeddings):
    """The packaged offline MiniLM as LangChain embeddings (your app may use OpenAIEmbeddings)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embedder().embed(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def format_docs(docs) -> str:
    return "\n\n".join(d.page_content for d in docs)


def build_retriever():
    return InMemoryVectorStore.from_texts(CORPUS, embedding=MiniLMEmbeddings()).as_retriever(
        search_kwargs={"k": 2})


def build_app(llm, retriever):
    prompt = ChatPromptTemplate.from_messages([
        ("system", "You answer customer questions for the Lumo shop using only the context."),
        ("human", "Context:\n{context}\n\nQuestion: {question}"),
    ])
    return {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm | StrOutputParser()
# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for results (default: a temp folder)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-01-"))
    out.mkdir(parents=True, exist_ok=True)

    app = build_app(LLM, build_retriever())

    # Step 2. The target that langsmith.evaluate calls. `capturing()` registers a RAGCapture
    # callback handler for every LangChain run started inside the block, so the app's own call
    # stays `app.invoke(question)`. (Passing `config={"callbacks": [RAGCapture()]}` works too.)
    # The handler sees the retriever's documents, which the app's output (a string) does not carry.
    def target(inputs: dict) -> dict:
        with capturing() as capture:
            answer = app.invoke(inputs["question"])
        sample = capture.samples[0]   # one top-level run: one (question, contexts, answer) sample
        # the captured contexts are documents (ids and metadata kept); the evaluators read their text
        return {"answer": answer, "contexts": [d.text for d in sample.contexts],
                "captured_question": sample.question}

    # Step 3. Grade inside langsmith.evaluate. One Judge is shared by both evaluators, so they share
    # its reply cache, concurrency limit and usage meter. Use a stronger model as judge than as
    # generator when you can: Judge(LangChainModel(init_chat_model("openai:gpt-4o"))).
    judge = Judge(LangChainModel(LLM))
    vrag = langsmith_evaluator(VragGrader(judge))            # score 0..1, accept/reject, 1-5 raw score
    thelma = langsmith_evaluator(Thelma(judge, embedder=embedder(), batched=True))  # 7 scores + diagnosis

    # Offline: an API key that is never used, no batch tracing, no sampling, nothing uploaded.
    # LangSmith needs Example objects with ids (plain dicts fail).
    client = Client(api_key="offline", auto_batch_tracing=False, tracing_sampling_rate=0.0)
    examples = [Example(id=uuid.uuid5(uuid.NAMESPACE_URL, q), inputs={"question": q}, outputs={"answer": ref})
                for q, ref in DATASET]
    results = evaluate(target, data=examples, evaluators=[vrag, thelma], client=client,
                       upload_results=False, max_concurrency=0)

    rows = []
    for row in results:
        outputs = row["run"].outputs
        scores = {r.key: r.score for r in row["evaluation_results"]["results"]}
        values = {r.key: r.value for r in row["evaluation_results"]["results"] if r.value is not None}
        rows.append({"question": row["example"].inputs["question"], "answer": outputs["answer"],
                     "contexts": outputs["contexts"], "captured_question": outputs["captured_question"],
                     "scores": scores, "values": values})
    rows.sort(key=lambda r: [q for q, _ in DATASET].index(r["question"]))
    (out / "results.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")

    for r in rows:
        print(f"\nQ: {r['question']}\nA: {r['answer']}")
        print(f"   contexts captured: {len(r['contexts'])}; vRAG {r['values'].get('vrag')} "
              f"(score {r['scores']['vrag']}); THELMA groundedness {r['scores'].get('thelma_gr')}, "
              f"source precision {r['scores'].get('thelma_sp1')}; fix first: {r['values'].get('thelma_diagnosis')}")
    u = judge.usage
    print(f"\njudge calls: {u.calls} (+{u.cached} from cache, {u.failed} failed); results in {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
