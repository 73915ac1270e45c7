"""Cookbook 5: GRAMMAR, grounded test questions from a database, and what the failures mean.

The question it answers: "my RAG app answers from documents about things my company also keeps in a
database; which questions can it not answer at all (a knowledge gap), which does it answer only when
they are phrased one way (not robust), and is each failure the retriever's or the language model's?"

GRAMMAR writes SQL templates, each with several phrasings (here a short and a long one), fills the
placeholders with values from the database and runs every SQL query to get the true answer. All
phrasings of one SQL query form a group:
  * gap: every phrasing answered wrongly: the documents (or the model) lack the fact;
  * robust: every phrasing answered correctly;
  * non-robust: some right, some wrong: the knowledge is there, the phrasing broke something.
Within a non-robust group, a wrong answer whose passages include one that served a correct answer had
the right context, so the language model failed; otherwise the retriever did (context comparison).

This uses the package's demo database (an invented engineering consultancy, built in the temp
folder) and its hand-checked templates. The documents the RAG app searches are written from the same
database, as an intranet would have them, except that project budgets appear only for completed
projects: the questions about other budgets must come out as knowledge gaps.

Run it:      python cookbooks/05_grammar.py [--out DIR]
Real model:  change the one line marked below (it writes the answers and grades them).
Your data:   `langrag-eval grammar schema|generate|analyze` does the same on your database, with a
             model writing the templates for you to review.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
from pathlib import Path

from _scripted import build_judge, embedder, scripted_judge

from langrag_eval.grammar import (
    ReferenceGrader, as_pipeline_queries, build_dataset, demo_database, demo_templates_path,
    evaluate_answers, load_templates,
)
from langrag_eval.pipelines import run_agents, select_agents, six_agents
from langrag_eval.retrieval import EmbeddedBackend, Source
from langrag_eval.retrieval.ingest import ingest
from langrag_eval.runtime import RunStore, run_id_for

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model ("provider:model", resolved like `--judge`; openai:...
# needs `pip install langchain-openai` and OPENAI_API_KEY; "local" is the offline llama.cpp model):
JUDGE = scripted_judge()  # swap for: JUDGE = "openai:gpt-4o"
# ---------------------------------------------------------------------------------------------


def intranet_pages(db: Path) -> list[Source]:
    """The documents the RAG app searches: one page per employee, project, office and client."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    pages = []
    for name, title, city, year in conn.execute(
            "SELECT e.full_name, e.job_title, o.city, e.start_year FROM employee e "
            "LEFT JOIN office o ON e.office_id = o.office_id"):
        pages.append(Source(id=f"employee/{name}", text=f"{name} is a {title} at Kestrel Bridgeworks. "
                            f"{name} works from the {city} office. {name} joined the firm in {year}."))
    for name, client, lead, budget, status in conn.execute(
            "SELECT p.name, c.name, e.full_name, p.budget_musd, p.status FROM project p "
            "LEFT JOIN client c ON p.client_id = c.client_id LEFT JOIN employee e ON p.lead_id = e.employee_id"):
        text = f"{name} is a project for the client {client}. {name} is led by {lead}. Its status is {status}."
        if status == "Completed":   # budgets of running projects are not on the intranet: a gap
            text += f" The final budget of {name} was {budget:g} million US dollars."
        pages.append(Source(id=f"project/{name}", text=text))
    for city, country, opened in conn.execute("SELECT city, country, opened_year FROM office"):
        pages.append(Source(id=f"office/{city}", text=f"The {city} office is in {country}. "
                            f"The {city} office opened in {opened}."))
    for name, sector, country in conn.execute("SELECT name, sector, country FROM client"):
        pages.append(Source(id=f"client/{name}", text=f"{name} is a client in the {sector} sector."))
    conn.close()
    return pages


def _f(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for results (default: a temp folder)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-05-"))
    out.mkdir(parents=True, exist_ok=True)

    # 1. Grounded questions: the templates' SQL runs read-only, values are bound, never pasted.
    db = demo_database()
    dataset = build_dataset(db, load_templates(demo_templates_path()))
    queries = [q for q in dataset.queries if q.flag is None]     # flagged: no single true answer
    print(f"{len(dataset.queries)} questions from {len({q.logic_id for q in dataset.queries})} SQL queries "
          f"({len(dataset.queries) - len(queries)} flagged and left out)")
    (out / "dataset.jsonl").write_text("".join(q.model_dump_json() + "\n" for q in dataset.queries), encoding="utf-8")

    # 2. The RAG pipeline under test: plain RAG over BM25 and over KNN, top 3 passages.
    store = RunStore(out / "runs.sqlite")
    judge = build_judge(JUDGE)
    settings = {"judge": judge.model_id, "agents": ["rag-bm25", "rag-knn"], "k": 3}
    run_id = store.open_run("cookbook-05", settings, run_id_for("cookbook-05", settings), judge=judge.model_id)
    judge = judge.for_run(run_id)
    backend = EmbeddedBackend()
    ingest(backend, intranet_pages(db), embedder=embedder())
    agents = select_agents(six_agents(backend, embedder(), judge, k=settings["k"]), settings["agents"])
    runs = run_agents(agents, as_pipeline_queries(queries), store=store, run_id=run_id)
    answers = [r.result for r in runs if r.ok]

    # 3. Grade against the database's answers, group, attribute. Stored as the 'grammar' artifact.
    summary = evaluate_answers(queries, answers, ReferenceGrader(judge), store=store, run_id=run_id)
    store.finish_run(run_id, {"answers": len(answers)})
    (out / "grammar.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")

    question = {q.logic_id: q.question for q in queries if q.style == "short"}
    for agent, r in summary["agents"].items():
        m, g = r["overall"], r["overall"]["groups"]
        print(f"\n{agent}: {m['correct']}/{m['total']} correct; accuracy {_f(m['accuracy'])}, "
              f"robustness {_f(m['robustness'])} (share correct once the gap items are set aside)")
        print(f"  groups: {g['gap']} gap, {g['non_robust']} non-robust, {g['robust']} robust")
        for cluster, c in r["clusters"].items():
            print(f"  {cluster} phrasings: accuracy {_f(c['all']['accuracy'])}, robustness {_f(c['all']['robustness'])}")
        if (cmp := r["comparison"]) is not None:
            print(f"  short vs long, stratified by SQL query: p = {cmp['p_value']} ({cmp['note'] or cmp['test']})")
        a = r["attribution"]
        print(f"  wrong answers in non-robust groups: {a['retrieval']} retrieval, {a['lm']} language model, "
              f"{a['unknown']} unknown")
        gaps = [x for x in r["groups"] if x["kind"] == "gap"]
        print(f"  knowledge gaps ({len(gaps)}), e.g.: " + "; ".join(question[x["logic_id"]] for x in gaps[:3]))
        shaky = [x for x in r["groups"] if x["kind"] == "non_robust"]
        print(f"  not robust ({len(shaky)}), e.g.: " + "; ".join(question[x["logic_id"]] for x in shaky[:3]))
    print(f"\nrun {run_id}; dataset, answers and analysis in {out}")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
