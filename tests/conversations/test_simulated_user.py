"""The simulated user driving unmodified chat apps (a ``create_agent`` with a checkpointer, a
LlamaIndex chat engine) with a scripted user model: it stops at the goal-met marker or the turn
limit, its turns reach the app as the app's fake model shows, each turn keeps the contexts its prompt
held, and a simulation killed mid-run resumes without paying again for the calls it finished."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("langgraph")

from langchain_langrag import capturing as lc_capturing

from langrag_eval.conversations import (ConversationJudge, Persona, SimulatedUser, chat_engine_chat,
                                        checkpointer_chat, read_personas, simulate)
from langrag_eval.errors import ConfigError
from langrag_eval.run import evaluate
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel, blocks

from chat_apps import FACTS, QUESTIONS, chat_engine, checkpointer_agent

HERE = Path(__file__).parent
PERSONA = Persona(id="buyer", persona="A plumber buying a pump", goal="Learn the warranty and the seals' delivery",
                  role="The pump maker's support assistant")


def scripted_user(limit: int = 2) -> ScriptedModel:
    """Asks the first ``limit`` questions in turn, each once the last was answered; then the marker."""
    def reply(prompt: str) -> str:
        said = blocks(prompt, "conversation")[0]
        asked = [q for q in QUESTIONS if q in said]
        return QUESTIONS[len(asked)] if len(asked) < limit else "GOAL MET"
    return ScriptedModel(reply)


def test_a_checkpointer_agent_until_the_goal_is_met() -> None:
    apps = []

    def new_app():
        agent, fake = checkpointer_agent()
        apps.append(fake)
        return checkpointer_chat(agent)

    model = scripted_user(2)
    [c] = simulate(new_app, [PERSONA], SimulatedUser(Judge(model)), max_turns=5, capturing=lc_capturing)
    assert c.goal_met is True and [t.user for t in c.turns] == QUESTIONS[:2]
    assert [t.answer for t in c.turns] == [f"Answer to: {q}" for q in QUESTIONS[:2]]
    assert model.calls == 3  # two questions and the marker
    assert blocks(model.prompts[0], "persona") == [PERSONA.persona]
    # the agent's model saw exactly the simulated turns, the second with the first in its history
    humans = [[c for k, c in msgs if k == "human"] for msgs, _ in apps[0].seen]
    assert humans[-1] == QUESTIONS[:2]
    assert [[d.text for d in t.contexts] for t in c.turns] == [[FACTS["warranty"]], [FACTS["seals"]]]
    assert c.turns[1].history == [{"role": "user", "content": QUESTIONS[0]},
                                  {"role": "assistant", "content": f"Answer to: {QUESTIONS[0]}"}]


def test_the_turn_limit_stops_a_user_never_satisfied() -> None:
    model = scripted_user(5)
    [c] = simulate(lambda: checkpointer_chat(checkpointer_agent()[0]), [PERSONA], SimulatedUser(Judge(model)),
                   max_turns=3)
    assert len(c.turns) == 3 and c.goal_met is False
    assert model.calls == 4  # three turns, then one last look at the goal


def test_a_llamaindex_chat_engine_with_fresh_memory_per_conversation() -> None:
    engine, llm = chat_engine()
    personas = [PERSONA, PERSONA.model_copy(update={"id": "other", "persona": "A pump reseller"})]
    done = simulate(lambda: chat_engine_chat(engine), personas, SimulatedUser(Judge(scripted_user(2))))
    assert [len(c.turns) for c in done] == [2, 2] and all(c.goal_met for c in done)
    # the second conversation's first prompt holds nothing of the first conversation
    first_of_second = llm.prompt_of(done[1].turns[0].answer)
    assert done[0].turns[1].answer not in first_of_second and QUESTIONS[1] not in first_of_second


def test_simulated_conversations_are_judged_like_any_sample() -> None:
    [c] = simulate(lambda: checkpointer_chat(checkpointer_agent()[0]), [PERSONA],
                   SimulatedUser(Judge(scripted_user(2))))
    model = ScriptedModel(["Score: [[5]], Reason: [[Stayed support.]]"])
    run = evaluate([c], {"role": ConversationJudge(Judge(model), criterion="role_adherence")})
    assert run["role"][0].score == 5 and blocks(model.prompts[0], "role") == [PERSONA.role]


def test_a_killed_simulation_resumes_without_paying_twice(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    store = tmp_path / "runs.sqlite"
    child = [sys.executable, str(HERE / "simulation_child.py"), str(store)]
    killed = subprocess.run([*child, "5"], env=env, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr  # killed at the 5th call: p1 done, p2 one turn in
    assert RunStore(store).get_judgment("sim", "p1", "conversation_simulation") is not None
    resumed = subprocess.run([*child, "0"], env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    # p1 stored: no call; p2: its first question from the cache, then two calls; p3: three calls
    assert resumed.stdout.split()[0] == "5", resumed.stdout
    assert "[2, 2, 2] [True, True, True]" in resumed.stdout
    fresh = subprocess.run([*child, "0"], env={**env}, capture_output=True, text=True, timeout=300,
                           cwd=tmp_path)
    assert fresh.stdout.split()[0] == "0"  # the run is finished: found again, nothing asked


def test_personas_file_errors_name_file_line_and_field(tmp_path) -> None:
    path = tmp_path / "personas.jsonl"
    path.write_text('{"id": "a", "persona": "x", "goal": "y"}\n{"id": "b", "persona": "x"}\n')
    with pytest.raises(ConfigError, match=r"personas.jsonl:2: field 'goal'"):
        read_personas(path)
    path.write_text('{"id": "a", "persona": "x", "goal": "y"}\n')
    assert read_personas(path)[0].goal == "y"


def test_an_app_that_raises_ends_its_conversation_with_the_error_and_is_tried_again(tmp_path) -> None:
    def broken():
        def chat(message: str) -> str:
            raise RuntimeError("vector store down")
        return chat

    store = RunStore(tmp_path / "runs.sqlite")
    personas = [PERSONA, PERSONA.model_copy(update={"id": "ok", "persona": "A pump reseller"})]
    apps = iter([broken, lambda: checkpointer_chat(checkpointer_agent()[0])])
    done = simulate(lambda: next(apps)(), personas, SimulatedUser(Judge(scripted_user(1), store=store)),
                    store=store, run_id="r")
    assert done[0].error == "the app failed on turn 1: RuntimeError: vector store down" and not done[0].turns
    assert done[1].error is None and done[1].goal_met
    assert store.get_judgment("r", "buyer", "conversation_simulation") is None
    assert store.get_judgment("r", "ok", "conversation_simulation") is not None
