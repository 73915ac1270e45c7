"""Chat apps as the frameworks' docs build them, on the frameworks' own fake models subclassed to
record what each call received: a LlamaIndex ``condense_plus_context`` chat engine and a LangChain
``create_agent`` with a retriever tool and a checkpointer. What the fakes received is the oracle."""

from __future__ import annotations

import re
from typing import Any

from langchain.agents import create_agent
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.checkpoint.memory import InMemorySaver
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from pydantic import PrivateAttr

FACTS = {"warranty": "The pump carries a warranty of two years from delivery.",
         "seals": "Spare pump seals ship within five working days.",
         "power": "The pump draws 40 watts at full speed.",
         "noise": "The pump runs at 32 decibels.",
         "colour": "The pump's housing is sea green."}
QUESTIONS = ["How long is the warranty on the pump?", "When do spare seals ship?", "How much power does it draw?",
             "How loud is it?", "What colour is the housing?"]


class RecordingLLM(MockLLM):
    """LlamaIndex's ``MockLLM``: each prompt it completes is kept with the reply, ``Reply n`` for
    the n-th call (so each turn's answer names the call that wrote it)."""

    _seen: list[tuple[str, str]] = PrivateAttr(default_factory=list)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        text = f"Reply {len(self._seen) + 1}"
        self._seen.append((prompt, text))
        return CompletionResponse(text=text)

    def prompt_of(self, answer: str) -> str:
        return [p for p, r in self._seen if r == answer][-1]


def chat_engine():
    """https://docs.llamaindex.ai/en/stable/examples/chat_engine/chat_engine_condense_plus_context/"""
    index = VectorStoreIndex.from_documents([Document(text=t, id_=k) for k, t in FACTS.items()],
                                            embed_model=MockEmbedding(embed_dim=8))
    llm = RecordingLLM()
    return index.as_chat_engine(chat_mode="condense_plus_context", llm=llm, similarity_top_k=2), llm


class RecordingChat(GenericFakeChatModel):
    """LangChain's fake chat model: searches when the last message is the user's question, answers
    ``Answer to: <question>`` after the tool replied; keeps every message list it received."""

    messages: Any = iter(())
    seen: list[tuple[list[tuple[str, str]], str]] = []

    def model_post_init(self, context: Any) -> None:
        self.seen = []

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        last = messages[-1]
        question = [m.content for m in messages if m.type == "human"][-1]
        if last.type == "human":
            reply = AIMessage(content="", tool_calls=[{"name": "search_terms", "args": {"query": question},
                                                       "id": f"call-{len(self.seen)}"}])
        else:
            reply = AIMessage(content=f"Answer to: {question}")
        self.messages = iter([reply])
        result = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        self.seen.append(([(m.type, str(m.content)) for m in messages], str(result.generations[0].message.content)))
        return result

    def received(self, answer: str) -> list[tuple[str, str]]:
        return [m for m, r in self.seen if r == answer][-1]


def _key(text: str) -> str:
    return {"warranty": "warranty", "seals": "seals", "power": "power", "loud": "noise", "colour": "colour"}[
        next(w for w in ("warranty", "seals", "power", "loud", "colour") if w in text)]


class _ByTopic(DeterministicFakeEmbedding):
    """Embeds a text as its topic's one-hot vector, so a question retrieves its own fact."""

    def _get_embedding(self) -> list[float]:  # unused; kept for the parent's signature
        return [0.0] * self.size

    def embed_query(self, text: str) -> list[float]:
        topics = ["warranty", "seals", "power", "noise", "colour"]
        words = re.sub(r"[^a-z ]", " ", text.lower())
        hit = next((t for t in topics if t in words or (t == "noise" and ("loud" in words or "decibel" in words))
                    or (t == "colour" and "green" in words) or (t == "seals" and "seal" in words)
                    or (t == "power" and "watt" in words)), "warranty")
        return [1.0 if t == hit else 0.0 for t in topics] + [0.0] * (self.size - len(topics))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


def checkpointer_agent():
    """https://docs.langchain.com/oss/python/langchain/short-term-memory : ``create_agent`` with a
    checkpointer; turns of one ``thread_id`` share the conversation."""
    store = InMemoryVectorStore(_ByTopic(size=8))
    store.add_documents([LCDocument(page_content=t, id=k) for k, t in FACTS.items()])
    tool = create_retriever_tool(store.as_retriever(search_kwargs={"k": 1}), "search_terms", "Search the pump's terms.")
    fake = RecordingChat()
    return create_agent(fake, tools=[tool], checkpointer=InMemorySaver()), fake
