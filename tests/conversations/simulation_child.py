"""A simulation run in its own process, killed (SIGKILL, as a crash or an OOM kill would) just before
the scripted user's ``KILL_AT``-th call when that is set; prints how many scripted calls it made."""

from __future__ import annotations

import os
import signal
import sys

from langrag_eval.conversations import Persona, SimulatedUser, checkpointer_chat, simulate
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel, blocks

from chat_apps import QUESTIONS, checkpointer_agent

calls = 0
kill_at = 0


def user(prompt: str) -> str:
    global calls
    calls += 1
    if calls == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    said = blocks(prompt, "conversation")[0]
    asked = [q for q in QUESTIONS[:2] if q in said]
    return QUESTIONS[len(asked)] if len(asked) < 2 else "GOAL MET"


def main(store_path: str) -> None:
    personas = [Persona(id=f"p{i}", persona=f"Buyer number {i}", goal="Learn the warranty and the seals' delivery")
                for i in range(1, 4)]
    store = RunStore(store_path, lease_ttl=2)  # a killed run's lease lapses soon
    done = simulate(lambda: checkpointer_chat(checkpointer_agent()[0]), personas,
                    SimulatedUser(Judge(ScriptedModel(user), store=store)), max_turns=4, store=store, run_id="sim")
    print(calls, [len(c.turns) for c in done], [c.goal_met for c in done])


if __name__ == "__main__":
    kill_at = int(sys.argv[2])
    main(sys.argv[1])
