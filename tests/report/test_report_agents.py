"""The item browser shows agents step by step and conversations turn by turn, from real runs: a
``create_agent`` agent on LangChain's fake chat model and a LlamaIndex ``AgentWorkflow`` handoff on
LlamaIndex's mock model, scored through the run layer; a simulated user driving a checkpointer agent
through ``langrag-eval conversations simulate``, then judged by ``conversations judge``. Each report
is opened in headless Chromium."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parents[1]
sys.path.insert(0, str(HERE / "trajectories"))
sys.path.insert(0, str(HERE / "conversations"))

from langrag_eval.cli import main  # noqa: E402
from langrag_eval.report import write_report  # noqa: E402
from langrag_eval.run import evaluate  # noqa: E402
from langrag_eval.runtime import Judge, RunStore  # noqa: E402
from langrag_eval.testing import ScriptedModel  # noqa: E402
from langrag_eval.trajectories import Trajectory, TrajectoryJudge, TrajectoryMatch, TrajectorySample  # noqa: E402


def _steps(p, item: str) -> list[tuple[str, str, str]]:
    p.fill("#item-search", item)
    p.locator(f"#item-rows tr[data-id='{item}']").click()
    out = []
    for li in p.locator("#item-rows .item-details ol.trajectory:not(.reference) li.step").all():
        text = li.locator(".step-text")
        out.append((li.get_attribute("class").split("step-")[1].strip(), li.locator(".step-kind").inner_text(),
                    text.inner_text() if text.count() else ""))
    return out


@pytest.fixture(scope="module")
def agents_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """Made before the browser starts: Playwright's sync API keeps an event loop running, and the
    LlamaIndex workflow is driven by asyncio.run."""
    tmp_path = tmp_path_factory.mktemp("agents")
    pytest.importorskip("langchain.agents")
    pytest.importorskip("llama_index.core")
    from test_agent_trajectories import REFERENCE, run_agent
    from test_llamaindex_trajectories import handoff_workflow, run

    agent = run_agent(REFERENCE, "Two years; your order shipped on Monday.")["messages"]
    emitted: list = []
    handoff, _ = run(handoff_workflow(emitted))
    samples = [TrajectorySample(id="create-agent", question="Warranty and my order 42?", trajectory=agent,
                                reference=agent),
               TrajectorySample(id="workflow", question="Warranty?", trajectory=handoff)]
    store = RunStore(tmp_path / "runs.sqlite")
    judge = Judge(ScriptedModel(["Score: [[4]], Reason: [[Direct.]]"] * 2), store=store)
    store.open_run("agents", {}, run_id="agents", judge="scripted")
    evaluate(samples, {"match": TrajectoryMatch(mode="strict"), "judge": TrajectoryJudge(judge)},
             store=store, run_id="agents")
    return write_report(store, "agents", tmp_path / "agents.html"), agent


def test_trajectories_step_by_step(agents_run, open_report) -> None:
    from test_agent_trajectories import REFERENCE

    path, agent = agents_run
    page = open_report(path)
    p = page.page
    assert page.errors == [] and all(url.startswith("file:") for url in page.requests)

    steps = _steps(p, "create-agent")
    expected = Trajectory.of(agent)
    assert [k for k, _, _ in steps] == ["user", "model", "tool_call", "tool_result", "model", "tool_call",
                                        "tool_result", "answer"]
    calls = [(label.split(": ", 1)[1], json.loads(text)) for k, label, text in steps if k == "tool_call"]
    assert calls == [(c.name, c.arguments) for c in expected.tool_calls()] == REFERENCE
    results = [(label, text) for k, label, text in steps if k == "tool_result"]
    assert results == [("tool result: search_docs", "The pump carries a warranty of two years."),
                       ("tool result: order_status", "Shipped on Monday.")]
    assert steps[-1][2] == "Two years; your order shipped on Monday." == expected.answer
    assert p.locator("#item-rows .item-details ol.trajectory.reference li.step").count() == len(steps)
    scores = p.inner_text("#item-rows .item-details table.item-scores")
    assert "trajectory_strict" in scores and "Direct." in scores

    steps = _steps(p, "workflow")
    kinds = [k for k, _, _ in steps]
    assert ("handoff", "handoff: research → writer", "") in steps
    assert kinds.index("handoff") < kinds.index("answer") == len(kinds) - 1
    assert [label for k, label, _ in steps if k == "tool_call"] == ["tool call: search_manuals", "tool call: handoff"]
    assert steps[-1][1:] == ("final answer (writer)", "The pump's warranty is two years.")
    assert page.dialogs == []


APP = '''
from chat_apps import checkpointer_agent
from langrag_eval.conversations import checkpointer_chat

def make_chat():
    return checkpointer_chat(checkpointer_agent()[0])
'''
USER = {"Answer to: When do spare": "GOAL MET", "Answer to: How long": "When do spare seals ship?",
        "": "How long is the warranty on the pump?"}


def test_conversations_turn_by_turn(tmp_path: Path, monkeypatch, open_report) -> None:
    pytest.importorskip("langgraph")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report_chat_app.py").write_text(APP)
    (tmp_path / "user.json").write_text(json.dumps(USER))
    (tmp_path / "judge.json").write_text(json.dumps({"": "Score: [[5]], Reason: [[Both answered.]]"}))
    (tmp_path / "personas.jsonl").write_text(json.dumps({"id": "p1", "persona": "A plumber",
                                                         "goal": "Warranty and seals", "role": "Pump support"}) + "\n")
    assert main(["conversations", "simulate", "--app", "report_chat_app:make_chat", "--personas", "personas.jsonl",
                 "--out", "out.jsonl", "--judge", "scripted:user.json", "--store", "runs.sqlite", "--run", "sim"]) == 0
    [written] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert main(["conversations", "judge", "out.jsonl", "--judge", "scripted:judge.json", "--store", "runs.sqlite",
                 "--run", "judged"]) == 0
    for run in ("sim", "judged"):
        assert main(["report", run, "--store", "runs.sqlite", "--out", f"{run}.html"]) == 0
        page = open_report(tmp_path / f"{run}.html")
        p = page.page
        assert page.errors == []
        p.locator("#item-rows tr[data-id='p1']").click()
        turns = p.locator("#item-rows .item-details ol.turns li.turn")
        assert turns.count() == len(written["turns"]) == 2
        for i, turn in enumerate(written["turns"]):
            assert turns.nth(i).locator(".turn-user p").inner_text() == turn["user"]
            assert turns.nth(i).locator(".turn-answer p").inner_text() == turn["answer"]
        assert "sent with 2 earlier messages" in turns.nth(1).inner_text()  # the history the app sent
        assert "Goal: Warranty and seals (met)" in p.inner_text("#item-rows .item-details .conversation-goal")
        if run == "judged":
            assert "Both answered." in p.inner_text("#item-rows .item-details table.item-scores")
