"""Cookbook 9: did the agent take the right path? Trajectories of a LangGraph agent, captured and scored.

The question it answers: "our shop assistant is a LangGraph agent with two tools, one that searches
the shop's documents and one that looks orders up. Does it call the right tool with the right
arguments for each kind of question, and is its path sound? And does the hand-built graph our
colleague wrote behave like the ``create_agent`` one?"

Four steps:
  1. the agent twice, as the docs build it: ``create_agent(model, tools)`` (LangChain, on LangGraph),
     and a ``StateGraph`` with a model node, LangGraph's ``ToolNode`` and ``tools_condition``;
  2. ``capturing()`` records each call's trajectory from LangChain's callbacks (``cap.trajectories``,
     beside the usual RAG samples): every tool call with its arguments, every tool result, the answer;
  3. each trajectory is matched against a reference (which tool, with which arguments: the modes of
     LangChain's agentevals, a per-tool argument rule) and graded 1-5 by the trajectory judge, as one
     stored run per variant;
  4. the two runs are compared item by item (``compare_runs``, as ``langrag-eval compare`` does).

The same from a shell, on the trajectories this writes (``trajectories-<variant>.jsonl``):
    langrag-eval trajectories trajectories-agent.jsonl --match strict,superset --args subset --judge openai:gpt-4o

Run it:      python cookbooks/09_langgraph_agent_trajectories.py [--out DIR]
Real model:  change the one line marked below (the agent's model; the judge reuses it).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _scripted import scripted_agent_model
from langchain.agents import create_agent
from langchain.chat_models import init_chat_model  # noqa: F401  (for the real-model line below)
from langchain_core.documents import Document
from langchain_core.tools import create_retriever_tool, tool
from langchain_langrag import LangChainModel, LangragRetriever, capturing
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langrag_eval.compare import compare_runs
from langrag_eval.run import evaluate
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.trajectories import TrajectoryJudge, TrajectoryMatch, TrajectorySample

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model (any LangChain chat model that calls tools; openai:...
# needs `pip install langchain-openai` and OPENAI_API_KEY):
LLM = scripted_agent_model()  # swap for: LLM = init_chat_model("openai:gpt-4o")
# ---------------------------------------------------------------------------------------------
# The scripted model always calls the first tool it is given with the user's question, then answers
# from what the tool returned: it searches the documents for the order question too, which the
# reference trajectories catch. A real model picks the order tool there.

DOCS = [Document(id="returns", page_content="Returns. Unused items can be returned within 30 days of delivery."),
        Document(id="shipping", page_content="Shipping. Standard shipping takes 3 to 5 working days."),
        Document(id="warranty", page_content="Warranty. Every Lumo lamp carries a two-year warranty.")]
ORDERS = {"A-1042": "Order A-1042 shipped on Monday and arrives Thursday."}


@tool
def order_status(order_id: str) -> str:
    """Look an order up by its id (like A-1042)."""
    return ORDERS.get(order_id, f"No order {order_id}.")


def tools() -> list:
    search = create_retriever_tool(LangragRetriever.from_documents(DOCS, k=1), "search_shop_docs",
                                   "Search the shop's policies.")
    return [search, order_status]


# Each question with the tool call a good path makes (the reference trajectory).
CASES = [
    ("How long is the warranty on a Lumo lamp?", "search_shop_docs", {"query": "warranty"}),
    ("Within how many days can unused items be returned?", "search_shop_docs", {"query": "returns"}),
    ("Where is my order A-1042?", "order_status", {"order_id": "A-1042"}),
]


def build_agent(llm):
    """https://docs.langchain.com/oss/python/langchain/agents"""
    return create_agent(llm, tools=tools(), system_prompt="Answer customers from the shop's tools.")


def build_graph(llm):
    """https://langchain-ai.github.io/langgraph/ (a model node, ``ToolNode`` and ``tools_condition``)"""
    bound = llm.bind_tools(tools())

    def model(state: MessagesState) -> dict:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState).add_node("model", model).add_node("tools", ToolNode(tools()))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile()


def reference(question: str, name: str, arguments: dict) -> list[dict]:
    """The good path: one call, its result, the answer (texts are not compared, steps and calls are)."""
    return [{"role": "user", "content": question},
            {"role": "assistant", "tool_calls": [{"name": name, "args": arguments, "id": "ref"}]},
            {"role": "tool", "content": "(the tool's result)", "tool_call_id": "ref"},
            {"role": "assistant", "content": "(the answer)"}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: a new temporary one)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-09-"))
    out.mkdir(parents=True, exist_ok=True)

    store = RunStore(out / "runs.sqlite")
    judge = Judge(LangChainModel(LLM), store=store)
    evaluators = {
        # the same tools, in any order, and at least the reference's calls: extra calls are allowed
        "superset": TrajectoryMatch(mode="superset", args="subset",
                                    # a search query is free text: only the tool counts, not its words
                                    overrides={"search_shop_docs": "ignore"}),
        "strict": TrajectoryMatch(mode="strict", args="exact", overrides={"search_shop_docs": "ignore"}),
        "judge": TrajectoryJudge(judge),
    }
    results = {}
    for variant, app in (("agent", build_agent(LLM)), ("graph", build_graph(LLM))):
        # Step 2: the app's own calls, unchanged, inside the capture.
        with capturing() as cap:
            for question, _, _ in CASES:
                app.invoke({"messages": [{"role": "user", "content": question}]})
        samples = [TrajectorySample(id=f"q{i}", question=t.question, trajectory=t.trajectory,
                                    reference=reference(*case))
                   for i, (t, case) in enumerate(zip(cap.trajectories, CASES), start=1)]
        with (out / f"trajectories-{variant}.jsonl").open("w", encoding="utf-8") as f:
            for s in samples:
                f.write(json.dumps(s.model_dump(mode="json"), ensure_ascii=False) + "\n")
        # Step 3: matches and the judge, one stored run per variant.
        run_id = store.open_run("cookbook-09", {"variant": variant}, run_id=f"trajectories-{variant}",
                                judge=judge.model_id)
        run = evaluate(samples, evaluators, store=store, run_id=run_id)
        results[variant] = [{"id": s.id, "question": s.question,
                             "tools": [c.name for c in s.trajectory.tool_calls()],
                             "superset": getattr(m, "matched", None), "strict": getattr(x, "matched", None),
                             "grade": getattr(g, "score", None), "reason": getattr(g, "reason", None)}
                            for s, m, x, g in zip(samples, run["superset"], run["strict"], run["judge"])]

    # Step 4: the two variants, item by item.
    comparison = compare_runs(store, "trajectories-agent", "trajectories-graph")
    diff = {m: comparison.metric(m).diff for m in ("trajectory_superset", "trajectory_strict", "trajectory_grade")}
    (out / "results.json").write_text(json.dumps({"variants": results, "diff": diff}, indent=2), encoding="utf-8")
    for variant, rows in results.items():
        for r in rows:
            print(f"{variant:5} {r['id']}  tools {r['tools']}  superset {r['superset']}  strict {r['strict']}  "
                  f"grade {r['grade']}  {r['question']}")
    print("graph minus agent:", diff)
    print(f"results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
