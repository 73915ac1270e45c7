"""LangChain app shapes as LangChain's docs build them, on LangChain's own fakes (in-memory vector
store with ``DeterministicFakeEmbedding``, ``GenericFakeChatModel`` recording what it received):
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

from fakes import Recording

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


MADE: list[Recording] = []  # every fake built, newest last: the oracle reads what it received


def llm(k: int, rule=None) -> Recording:
    MADE.append(Recording(rule=rule or (lambda prompt: ANSWERS[k])))
    return MADE[-1]


def lcel_string(store, k: int):
    """https://python.langchain.com/docs/tutorials/rag/ (LCEL chain returning the answer string)."""
    retriever = store.as_retriever(search_kwargs={"k": k})
    return ({"context": retriever | format_docs, "question": RunnablePassthrough()}
            | PROMPT | llm(k) | StrOutputParser())


def lcel_dict(store, k: int):
    """https://python.langchain.com/docs/how_to/qa_sources/ (the documents returned with the answer)."""
    retriever = store.as_retriever(search_kwargs={"k": k})
    answer = (lambda x: {"context": format_docs(x["context"]), "question": x["question"]}) \
        | PROMPT | llm(k) | StrOutputParser()
    return RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(answer=answer)


def agent(store, k: int):
    """https://docs.langchain.com/oss/python/langchain/rag (a RAG agent with a retriever tool)."""
    tool = create_retriever_tool(store.as_retriever(search_kwargs={"k": k}), "search_manuals",
                                 "Search the product manuals and terms.")

    def turn(prompt: str):  # search first, answer once the tool has replied
        if prompt.rstrip().endswith("?"):
            return AIMessage(content="", tool_calls=[{"name": "search_manuals", "args": {"query": QUESTION},
                                                      "id": "call-1"}])
        return ANSWERS[k]
    return create_agent(llm(k, turn), tools=[tool], system_prompt="Answer from the manuals; search them first.")


class State(TypedDict):
    question: str
    context: list[Document]
    answer: str


def graph(store, k: int):
    """https://python.langchain.com/docs/tutorials/rag/ (LangGraph ``StateGraph``: retrieve, generate)."""
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
    app = build(store, 2)
    with capturing() as cap:
        app.invoke(to_input(QUESTION))
    (sample,) = cap.samples
    want = expected(store, 2)
    fake = MADE[-1]
    texts = {d.id: d.page_content for d in DOCS}
    assert fake.reached(ANSWERS[2], texts) == sorted(d.id for d in want)  # what the answering call received
    assert sample.question == QUESTION and sample.answer == ANSWERS[2]
    assert [d.id for d in sample.contexts] == [d.id for d in want]
    assert [d.metadata["source"] for d in sample.contexts] == [d.metadata["source"] for d in want]

    pipeline.vrag(sample, LABEL)
    pipeline.thelma(sample)

    judge_model = pipeline.judge()
    result = tournament_from_runnables({"k1": build(store, 1), "k2": build(store, 2)}, [QUESTION],
                                       Judge(judge_model), TournamentConfig(tournaments=5, n_boot=0))
    pooled = {d.page_content for d in expected(store, 1) + want}
    pipeline.tournament(result, judge_model, queries=1, documents=sorted(pooled))

