"""Cookbook 7: a regression gate in CI. Did the change on my branch make the app worse than `main`?

The question it answers: "a pull request changes my LangChain app (a prompt, a retriever setting, a
context trimmer); may it merge, or does it answer worse than what runs today?"

Three steps:
  1. the app as it is on `main`, and as the branch changes it (here: the branch trims every passage
     to its first 90 characters to save tokens; ``--branch k3`` instead retrieves three passages);
  2. both variants answer the same labelled questions, and each run is graded with vRAG-Eval
     (against the reference answers) and THELMA groundedness and query coverage, stored in one run
     store under the run ids ``eval-main`` and ``eval-<branch>``;
  3. the gate compares the runs item by item (paired by question and reference) and fails when a
     metric drops by more than allowed *with confidence*: the favourable end of the difference's
     interval, not the point estimate, must lie below the allowed drop. It prints a one-screen
     summary, writes JUnit XML for the CI system and an HTML report with a comparison section.

In CI the last step is one command, after the two evaluation jobs wrote to the same store:

    langrag-eval gate eval-branch --baseline eval-main --store runs.sqlite \\
        --max-drop accept_rate=0.02 --max-drop gr=0.05 --junit gate.xml

and inside a pytest suite: ``langrag_eval.testing.assert_no_regression("eval-branch", "eval-main",
{"accept_rate": 0.02, "gr": 0.05}, store="runs.sqlite")``.

Run it:      python cookbooks/07_regression_gate.py [--out DIR] [--branch trim|k3]
             (the exit status is the gate's: 0 passed, 1 a metric dropped, 2 undecided)
Real model:  change the one line marked below (the app's model; the judge reuses it).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _scripted import embedder, scripted_chat_model
from langchain.chat_models import init_chat_model  # noqa: F401  (for the real-model line below)
from langchain_core.embeddings import Embeddings
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_langrag import LangChainModel, capturing

from langrag_eval.compare import format_gate, gate_runs, junit_xml
from langrag_eval.grading import VragGrader
from langrag_eval.report import write_report
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.thelma import Thelma
from langrag_eval.types import Sample

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model (any LangChain chat model works; openai:... needs
# `pip install langchain-openai` and OPENAI_API_KEY):
LLM = scripted_chat_model()  # swap for: LLM = init_chat_model("openai:gpt-4o")
# ---------------------------------------------------------------------------------------------

# What the gate allows: accept rate may fall by 2 points, the mean grade by 0.2, groundedness by 0.05,
# and the share of answers the judge could grade at all not in any way it is sure of (an answer that
# became empty is unscored, and would otherwise vanish from the accept rate instead of counting).
MAX_DROP = {"accept_rate": 0.02, "grade": 0.2, "gr": 0.05, "scored_rate": 0.0}

# A product catalogue as the app's knowledge base: one passage per lamp, three facts each.
LAMPS = [  # name, kind, price in euros, weight in kg, warranty in years
    ("Arc", "floor lamp", 120, 6.4, 2), ("Beam", "desk lamp", 45, 1.2, 1), ("Crest", "wall lamp", 80, 2.1, 3),
    ("Dune", "table lamp", 60, 1.8, 2), ("Ember", "reading lamp", 55, 1.1, 2),
    ("Flint", "floor lamp", 140, 7.2, 5), ("Glade", "pendant lamp", 95, 2.6, 2),
    ("Halo", "ceiling lamp", 130, 3.4, 3), ("Isle", "bedside lamp", 35, 0.8, 1),
    ("Jade", "desk lamp", 70, 1.5, 2), ("Kite", "clip lamp", 25, 0.4, 1), ("Loom", "arc lamp", 210, 9.5, 5),
    ("Mist", "night lamp", 20, 0.3, 1), ("Nook", "wall lamp", 65, 1.9, 2), ("Opal", "table lamp", 85, 2.2, 3)]
CORPUS = [f"The {n} is a {kind} sold by Lumo. The price of the {n} lamp is {p} euros. "
          f"The weight of the {n} lamp is {w} kg. The warranty of the {n} lamp lasts {y} years."
          for n, kind, p, w, y in LAMPS]
DATASET = [q for n, _, p, w, y in LAMPS for q in (
    (f"What is the price of the {n} lamp?", f"The price of the {n} lamp is {p} euros."),
    (f"What is the weight of the {n} lamp?", f"The weight of the {n} lamp is {w} kg."),
    (f"How long does the warranty of the {n} lamp last?", f"The warranty of the {n} lamp lasts {y} years."))]


# ---------------------------------------------------------------------------------------------
# Step 1. The app on `main`, and the branch's change to it.
class MiniLMEmbeddings(Embeddings):
    """The packaged offline MiniLM as LangChain embeddings (your app may use OpenAIEmbeddings)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embedder().embed(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def build_app(llm, *, k: int = 2, trim: int | None = None):
    """``main`` is ``build_app(llm)``; the branch passes ``trim=90`` (or ``k=3``)."""
    retriever = InMemoryVectorStore.from_texts(CORPUS, embedding=MiniLMEmbeddings()).as_retriever(
        search_kwargs={"k": k})

    def format_docs(docs) -> str:
        return "\n\n".join(d.page_content[:trim] if trim else d.page_content for d in docs)

    prompt = ChatPromptTemplate.from_messages([
        ("system", "You answer customer questions for the Lumo shop using only the context."),
        ("human", "Context:\n{context}\n\nQuestion: {question}"),
    ])
    return ({"context": retriever | format_docs, "question": RunnablePassthrough()}
            | prompt | llm | StrOutputParser())


BRANCHES = {"trim": {"trim": 90}, "k3": {"k": 3}}
# ---------------------------------------------------------------------------------------------


def evaluate(app, run_id: str, judge: Judge, store: RunStore) -> None:
    """Step 2: answer every question, capture what the retriever returned, grade and store the run."""
    samples = []
    for i, (question, reference) in enumerate(DATASET):
        with capturing() as capture:
            answer = app.invoke(question)
        samples.append(Sample(id=f"lamp-{i:02d}", question=question, answer=answer,
                                 contexts=[d.text for d in capture.samples[0].contexts], reference=reference))
    store.open_run("cookbook-07", {"run": run_id}, run_id=run_id, judge=judge.model_id)
    VragGrader(judge).evaluate_many(samples, run_id=run_id)
    thelma = Thelma(judge.for_run(run_id), metrics=("gr", "rqc"), batched=True)
    thelma.evaluate_many(samples, store=store, run_id=run_id)
    store.finish_run(run_id, {"samples": len(samples)})  # the report says "finished", and when


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for results (default: a temp folder)")
    parser.add_argument("--branch", choices=sorted(BRANCHES), default="trim",
                        help="the branch's change: trim passages to 90 characters (default) or retrieve 3")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-07-"))
    out.mkdir(parents=True, exist_ok=True)

    store = RunStore(out / "runs.sqlite")
    judge = Judge(LangChainModel(LLM), store=store)   # a stronger judge model is better when you have one
    branch_run = f"eval-{args.branch}"
    evaluate(build_app(LLM), "eval-main", judge, store)                        # the job on `main`
    evaluate(build_app(LLM, **BRANCHES[args.branch]), branch_run, judge, store)  # the pull request's job

    # Step 3. The gate. Each metric's interval is widened for the number of metrics gated at once.
    result = gate_runs(store, branch_run, "eval-main", MAX_DROP)
    print(format_gate(result))
    (out / "gate.xml").write_text(junit_xml(result), encoding="utf-8")
    report = write_report(store, branch_run, out / "report.html", baseline="eval-main")
    print(f"\nJUnit XML: {out / 'gate.xml'}\nreport with the comparison: {report}")
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
