"""Two- and five-turn conversations over a LlamaIndex chat engine and a ``create_agent`` with a
checkpointer, called turn by turn inside one ``capturing()``: each turn's sample must hold exactly
the contexts that turn's answering prompt held, and each turn's history must be what the app sent
(read from what the frameworks' fake models received)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("langgraph")

from langchain_langrag import capturing as lc_capturing
from llama_index.evaluation.langrag import capturing as li_capturing

from langrag_eval.conversations import Conversation, chat_engine_chat, checkpointer_chat

from chat_apps import FACTS, QUESTIONS, chat_engine, checkpointer_agent


def _in_order(texts: list[str], haystack: str) -> bool:
    at = 0
    for t in texts:
        at = haystack.find(t, at)
        if at < 0:
            return False
        at += len(t)
    return True


@pytest.mark.parametrize("turns", [2, 5])
def test_chat_engine_turns_hold_what_each_prompt_held(turns: int) -> None:
    engine, llm = chat_engine()
    chat = chat_engine_chat(engine)
    with li_capturing() as cap:
        for q in QUESTIONS[:turns]:
            chat(q)
    conversation = Conversation.from_samples(cap.samples, id="c")
    assert [t.user for t in conversation.turns] == QUESTIONS[:turns]
    assert len(conversation.turns) == turns
    for i, turn in enumerate(conversation.turns):
        prompt = llm.prompt_of(turn.answer)  # the call that wrote this turn's answer
        held = sorted(k for k, text in FACTS.items() if text in prompt)
        assert sorted(d.text for d in turn.contexts) == sorted(FACTS[k] for k in held) and held
        assert len(turn.history) == 2 * i
        assert _in_order([m["content"] for m in turn.history], prompt)  # the history the app sent
        assert turn.history == [m for t in conversation.turns[:i] for m in
                                ({"role": "user", "content": t.user}, {"role": "assistant", "content": t.answer})]
        assert turn.sample().contexts == turn.contexts and turn.sample().question == turn.user
    assert [s.id for s in conversation.samples()] == [s.id for s in cap.samples]


@pytest.mark.parametrize("turns", [2, 5])
def test_checkpointer_agent_turns_hold_what_each_prompt_held(turns: int) -> None:
    agent, fake = checkpointer_agent()
    chat = checkpointer_chat(agent, thread_id="t1")
    with lc_capturing() as cap:
        replies = [chat(q) for q in QUESTIONS[:turns]]
    assert replies == [f"Answer to: {q}" for q in QUESTIONS[:turns]]
    conversation = Conversation.from_samples(cap.samples)
    assert [t.answer for t in conversation.turns] == replies
    for i, turn in enumerate(conversation.turns):
        received = fake.received(turn.answer)
        tool_texts = [c for kind, c in received if kind == "tool"]
        # this turn's retrieval is its context; earlier turns' tool replies sit in the history only
        assert [d.text for d in turn.contexts] == [tool_texts[-1]] and FACTS[list(FACTS)[i]] == tool_texts[-1]
        dialogue = [{"role": "user" if k == "human" else "assistant", "content": c} for k, c in received
                    if k == "human" or (k == "ai" and c)]
        assert dialogue[:-1] == turn.history  # the checkpointer sent exactly the earlier exchanges
        assert dialogue[-1] == {"role": "user", "content": turn.user}
