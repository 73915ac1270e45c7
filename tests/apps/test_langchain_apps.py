"""LangChain app shapes as LangChain's docs build them, on LangChain's own fakes (in-memory vector
store with ``DeterministicFakeEmbedding``, ``FakeMessagesListChatModel``, ``GenericFakeChatModel``):
an LCEL chain returning a string, one returning a dict, a ``create_agent`` agent with a retriever
tool, and a LangGraph ``StateGraph`` RAG. Each: capture -> vRAG grade -> THELMA -> a two-variant
tournament, asserting what was captured (the documents the vector store itself returns, with ids
and metadata) and how many judge calls each stage made."""

from __future__ import annotations

import itertools
from typing import TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.tools.retriever import create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_langrag import capturing, tournament_from_runnables
from langgraph.graph import START, StateGraph

from langrag_eval.runtime import Judge
from langrag_eval.tournament import TournamentConfig

QUESTION = "How long is the warranty on the pump?"
LABEL = "two years"
ANSWERS = {1: "The pump has a two-year warranty.", 2: "The warranty on the pump lasts two years."}
DOCS = [Document(page_content="The pump carries a warranty of two years from delivery.", id="warranty",
                 metadata={"source": "terms.pdf", "page": 4}),
        Document(page_content="Spare pump seals ship within five working days.", id="seals",
                 metadata={"source": "shipping.md"}),
        Document(page_content="The pump draws 40 watts at full speed.", id="power",
                 metadata={"source": "datasheet.pdf"}),
        Document(page_content="Returns are accepted within thirty days.", id="returns",
                 metadata={"source": "terms.pdf", "page": 9})]
PROMPT = ChatPromptTemplate.from_template(
    "Answer the question from the context.\nContext:\n{context}\n\nQuestion: {question}")


@pytest.fixture(scope="module")
def store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(DOCS)
    return store


def expected(store: InMemoryVectorStore, k: int) -> list[Document]:
    """What the vector store itself returns for the question: the oracle for the capture."""
    return store.similarity_search(QUESTION, k=k)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def llm(k: int) -> FakeMessagesListChatModel:
    return FakeMessagesListChatModel(responses=[AIMessage(content=ANSWERS[k])])


def lcel_string(store, k: int):
    retriever = store.as_retriever(search_kwargs={"k": k})
    return ({"context": retriever | format_docs, "question": RunnablePassthrough()}
            | PROMPT | llm(k) | StrOutputParser())


def lcel_dict(store, k: int):
    retriever = store.as_retriever(search_kwargs={"k": k})
    answer = (lambda x: {"context": format_docs(x["context"]), "question": x["question"]}) \
        | PROMPT | llm(k) | StrOutputParser()
    return RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(answer=answer)


class ToolCallingFake(GenericFakeChatModel):
    """LangChain's scripted chat model; its fakes do not bind tools, the scripted calls stand in."""

    def bind_tools(self, tools, **kwargs):
        return self


def agent(store, k: int):
    tool = create_retriever_tool(store.as_retriever(search_kwargs={"k": k}), "search_manuals",
                                 "Search the product manuals and terms.")
    turns = itertools.cycle([
        AIMessage(content="", tool_calls=[{"name": "search_manuals", "args": {"query": QUESTION}, "id": "call-1"}]),
        AIMessage(content=ANSWERS[k])])
    return create_agent(ToolCallingFake(messages=turns), tools=[tool],
                        system_prompt="Answer from the manuals; search them first.")


class State(TypedDict):
    question: str
    context: list[Document]
    answer: str


def graph(store, k: int):
    model = llm(k)

    def retrieve(state: State):  # as LangChain's RAG tutorial writes it: no retriever object
        return {"context": store.similarity_search(state["question"], k=k)}

    def generate(state: State):
        messages = PROMPT.invoke({"question": state["question"], "context": format_docs(state["context"])})
        return {"answer": model.invoke(messages).content}

    builder = StateGraph(State).add_sequence([retrieve, generate])
    builder.add_edge(START, "retrieve")
    return builder.compile()


SHAPES = {
    "lcel_string": (lcel_string, lambda q: q),
    "lcel_dict": (lcel_dict, lambda q: q),
    "create_agent": (agent, lambda q: {"messages": [{"role": "user", "content": q}]}),
    "langgraph": (graph, lambda q: {"question": q}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_app_shape_capture_grade_thelma_tournament(shape, store, pipeline) -> None:
    build, to_input = SHAPES[shape]
    with capturing() as cap:
        build(store, 2).invoke(to_input(QUESTION))
    (sample,) = cap.samples
    want = expected(store, 2)
    assert sample.query == QUESTION and sample.response == ANSWERS[2]
    assert [d.id for d in sample.sources] == [d.id for d in want]
    assert [d.metadata["source"] for d in sample.sources] == [d.metadata["source"] for d in want]

    pipeline.vrag(sample, LABEL)
    pipeline.thelma(sample)

    judge_model = pipeline.judge()
    result = tournament_from_runnables({"k1": build(store, 1), "k2": build(store, 2)}, [QUESTION],
                                       Judge(judge_model), TournamentConfig(tournaments=5, n_boot=0))
    pooled = {d.page_content for d in expected(store, 1) + want}
    pipeline.tournament(result, judge_model, queries=1, documents=sorted(pooled))
