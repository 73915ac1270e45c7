"""LangChain and LangGraph app shapes as their docs build them, each captured without touching its
call site and checked against what the framework's own fake chat model received: the documents
whose text is in the messages of the call that wrote the answer are the contexts, nothing else.
Then each capture goes through vRAG, THELMA and a two-variant tournament with exact judge calls.

The fake is LangChain's ``GenericFakeChatModel``, subclassed to record every message list it is
given and to reply by a rule over the prompt (the shapes batch and loop, so a fixed list of replies
would depend on the order of calls)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain_classic")

from langchain.agents import create_agent
from langchain_classic.chains import create_retrieval_chain
from langchain_classic.chains.combine_documents import create_stuff_documents_chain
from langchain_classic.retrievers import ContextualCompressionRetriever, EnsembleRetriever, MultiQueryRetriever
from langchain_classic.retrievers.document_compressors import CrossEncoderReranker, LLMChainFilter
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnablePassthrough
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.tools import tool
from langchain_core.tools.retriever import create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_langrag import LangragRetriever, capturing, tournament_from_runnables
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from langrag_eval.errors import ConfigError

from fakes import Recording
from langrag_eval.runtime import Judge
from langrag_eval.tournament import TournamentConfig

QUESTION = "How long is the warranty on the pump?"
ANSWER = "The pump has a two-year warranty."
CORPUS = [Document(id="warranty", page_content="The pump carries a warranty of two years from delivery.",
                   metadata={"source": "terms.pdf"}),
          Document(id="claims", page_content="Warranty claims on the pump need the delivery note.",
                   metadata={"source": "terms.pdf"}),
          Document(id="seals", page_content="Spare pump seals ship within five working days.",
                   metadata={"source": "shipping.md"}),
          Document(id="power", page_content="The pump draws 40 watts at full speed.",
                   metadata={"source": "datasheet.pdf"}),
          Document(id="returns", page_content="Returns are accepted within thirty days of purchase.",
                   metadata={"source": "terms.pdf"})]
PROMPT = ChatPromptTemplate.from_template(
    "Answer the question from the context.\nContext:\n{context}\n\nQuestion: {question}")


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


class KeywordEmbeddings(Embeddings):
    """Bag-of-words vectors: a vector store ranks documents by the words they share with the query."""

    vocabulary = sorted({w for d in CORPUS for w in words(d.page_content)} | words(QUESTION))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        found = words(text)
        return [1.0 if w in found else 0.0 for w in self.vocabulary] + [0.01]


class OverlapCrossEncoder(BaseCrossEncoder):
    """A cross-encoder scoring (query, passage) pairs by shared words (stands in for a model)."""

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        return [len(words(q) & words(p)) for q, p in text_pairs]


def reached(fake: Recording, answer: str) -> list[str]:
    """The oracle: ids of the corpus documents whose text the answering call received."""
    prompt = fake.final_prompt(answer)
    return sorted(d.id for d in CORPUS if d.page_content in prompt)


def rule(answer: str = ANSWER, **extra: str) -> Callable[[str], AIMessage | str]:
    """Replies by what the prompt asks: graders, rewriters and routers by their marker words, the
    answer otherwise."""
    def reply(prompt: str) -> str:
        for marker, text in extra.items():
            if marker.replace("_", " ") in prompt.lower():
                return text
        return answer
    return reply


def store() -> InMemoryVectorStore:
    s = InMemoryVectorStore(KeywordEmbeddings())
    s.add_documents(CORPUS)
    return s


def fmt(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def stuff(retriever, fake):
    """https://python.langchain.com/docs/tutorials/rag/ (LCEL form): context | prompt | model."""
    return {"context": retriever | fmt, "question": RunnablePassthrough()} | PROMPT | fake | StrOutputParser()


# ---- the shapes: each builds (app, input, fake) for an answer text

def ensemble(answer):
    """https://python.langchain.com/docs/how_to/ensemble_retriever/ : BM25 (here the package's
    retriever) and a vector store retriever fused by weighted RRF."""
    fake = Recording(rule=rule(answer))
    bm25 = LangragRetriever.from_documents(CORPUS, k=2)
    r = EnsembleRetriever(retrievers=[bm25, store().as_retriever(search_kwargs={"k": 2})], weights=[0.5, 0.5])
    return stuff(r, fake), QUESTION, fake


def multi_query(answer):
    """https://python.langchain.com/docs/how_to/MultiQueryRetriever/ : the model writes three
    variants of the question, each retrieved, the union deduplicated."""
    fake = Recording(rule=rule(answer, different_versions="pump warranty length\nwarranty claims\n"
                                                          "pump guarantee"))
    r = MultiQueryRetriever.from_llm(retriever=store().as_retriever(search_kwargs={"k": 1}), llm=fake)
    return stuff(r, fake), QUESTION, fake


def compression_filter(answer):
    """https://python.langchain.com/docs/how_to/contextual_compression/ (LLMChainFilter): the
    model keeps only the documents it says YES to."""
    def judge(prompt: str) -> str:
        if "return yes if" in prompt.lower():
            return "YES" if "two years" in prompt else "NO"
        return answer
    fake = Recording(rule=judge)
    r = ContextualCompressionRetriever(base_compressor=LLMChainFilter.from_llm(fake),
                                       base_retriever=store().as_retriever(search_kwargs={"k": 3}))
    return stuff(r, fake), QUESTION, fake


def reranker(answer):
    """https://python.langchain.com/docs/integrations/document_transformers/cross_encoder_reranker/ :
    retrieve four, a cross-encoder keeps the best two."""
    fake = Recording(rule=rule(answer))
    r = ContextualCompressionRetriever(base_compressor=CrossEncoderReranker(model=OverlapCrossEncoder(), top_n=2),
                                       base_retriever=store().as_retriever(search_kwargs={"k": 4}))
    return stuff(r, fake), QUESTION, fake


def retrieval_chain(answer):
    """https://python.langchain.com/api_reference/langchain/chains/langchain.chains.retrieval.create_retrieval_chain.html"""
    fake = Recording(rule=rule(answer))
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from the context:\n\n{context}"),
                                               ("human", "{input}")])
    chain = create_retrieval_chain(store().as_retriever(search_kwargs={"k": 2}),
                                   create_stuff_documents_chain(fake, prompt))
    return chain, {"input": QUESTION}, fake


def streamed(answer):
    """https://python.langchain.com/docs/how_to/streaming/ : the same chain, read with ``stream``."""
    fake = Recording(rule=rule(answer))
    return stuff(store().as_retriever(search_kwargs={"k": 2}), fake), QUESTION, fake


class Loop(TypedDict, total=False):
    question: str
    documents: list[Document]
    generation: str
    tries: int


def corrective(answer):
    """https://langchain-ai.github.io/langgraph/tutorials/rag/langgraph_agentic_rag/ : retrieve,
    grade each document, rewrite the question and retrieve again when none is relevant, generate.
    (The tutorial's graders use structured output, which the fakes lack: here they answer yes/no.)"""
    grade = ChatPromptTemplate.from_template("Is the document relevant? Reply yes or no.\n{document}\n"
                                             "Question: {question}")
    rewrite = ChatPromptTemplate.from_template("Rewrite this question for a better search: {question}")

    def reply(prompt: str) -> str:
        if prompt.startswith("Is the document relevant"):
            return "yes" if "two years" in prompt and "warranty" in prompt.lower() else "no"
        if prompt.startswith("Rewrite"):
            return "warranty period of two years for the pump from delivery"
        return answer
    fake = Recording(rule=reply)
    retriever = store().as_retriever(search_kwargs={"k": 1})

    def retrieve(state: Loop):
        return {"documents": retriever.invoke(state["question"]), "tries": state.get("tries", 0) + 1}

    def grade_documents(state: Loop):
        keep = [d for d in state["documents"] if (grade | fake | StrOutputParser()).invoke(
            {"document": d.page_content, "question": state["question"]}) == "yes"]
        return {"documents": keep}

    def transform_query(state: Loop):
        return {"question": (rewrite | fake | StrOutputParser()).invoke({"question": state["question"]})}

    def generate(state: Loop):
        return {"generation": (PROMPT | fake | StrOutputParser()).invoke(
            {"context": fmt(state["documents"]), "question": state["question"]})}

    g = StateGraph(Loop)
    for node in (retrieve, grade_documents, transform_query, generate):
        g.add_node(node.__name__, node)
    g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "grade_documents")
    g.add_conditional_edges("grade_documents", lambda s: "generate" if s["documents"] or s["tries"] > 2
                            else "transform_query")
    g.add_edge("transform_query", "retrieve")
    g.add_edge("generate", END)
    return g.compile(), {"question": "Which seals and returns apply to the pump?"}, fake


def self_rag(answer, route: bool = False):
    """https://langchain-ai.github.io/langgraph/tutorials/rag/langgraph_self_rag/ and, with the
    router in front, https://langchain-ai.github.io/langgraph/tutorials/rag/langgraph_adaptive_rag/ :
    generate, then grade the generation for grounding and usefulness, so the last model call is a
    grader and not the one that wrote the answer."""
    fake = Recording(rule=rule(answer, route_this_question="vectorstore", grounded_in="yes",
                               resolve_the_question="yes"))
    retriever = store().as_retriever(search_kwargs={"k": 2})
    ask = lambda text: (ChatPromptTemplate.from_template(text) | fake | StrOutputParser())  # noqa: E731

    def retrieve(state: Loop):
        return {"documents": retriever.invoke(state["question"])}

    def generate(state: Loop):
        return {"generation": (PROMPT | fake | StrOutputParser()).invoke(
            {"context": fmt(state["documents"]), "question": state["question"]})}

    def grade_generation(state: Loop) -> str:
        grounded = ask("Is this answer grounded in the facts? Reply yes or no.\nFacts: {d}\nAnswer: {g}").invoke(
            {"d": fmt(state["documents"]), "g": state["generation"]})
        useful = ask("Does the answer resolve the question? Reply yes or no.\n{q}\n{g}").invoke(
            {"q": state["question"], "g": state["generation"]})
        return "useful" if grounded == useful == "yes" else "retry"

    g = StateGraph(Loop)
    g.add_node("retrieve", retrieve)
    g.add_node("generate", generate)
    if route:
        g.add_conditional_edges(START, lambda s: ask("Route this question to vectorstore or web search: {q}")
                                .invoke({"q": s["question"]}), {"vectorstore": "retrieve"})
    else:
        g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "generate")
    g.add_conditional_edges("generate", grade_generation, {"useful": END, "retry": "generate"})
    return g.compile(), {"question": QUESTION}, fake


def tool_agent(answer):
    """https://docs.langchain.com/oss/python/langchain/rag (RAG agent): a ``@tool`` that searches the
    vector store itself and returns the passages' text, the documents as its artifact; the agent's
    final call sees the result."""
    s = store()

    @tool(response_format="content_and_artifact")
    def search_terms(query: str) -> tuple[str, list[Document]]:
        """Search the pump's terms."""
        docs = s.similarity_search(query, k=2)
        return "\n\n".join(d.page_content for d in docs), docs

    def reply(prompt: str) -> AIMessage | str:
        if "two years" not in prompt:
            return AIMessage(content="", tool_calls=[{"name": "search_terms", "args": {"query": QUESTION},
                                                      "id": "call-1"}])
        return answer
    fake = Recording(rule=reply)
    return create_agent(fake, tools=[search_terms]), {"messages": [("user", QUESTION)]}, fake


SHAPES: dict[str, tuple[Callable, Callable[[Any, Any], Any]]] = {
    "ensemble": (ensemble, lambda app, x: app.invoke(x)),
    "multi_query": (multi_query, lambda app, x: app.invoke(x)),
    "compression_filter": (compression_filter, lambda app, x: app.invoke(x)),
    "cross_encoder_reranker": (reranker, lambda app, x: app.invoke(x)),
    "create_retrieval_chain": (retrieval_chain, lambda app, x: app.invoke(x)),
    "streamed_chain": (streamed, lambda app, x: "".join(app.stream(x))),
    "langgraph_corrective_loop": (corrective, lambda app, x: app.invoke(x)),
    "langgraph_self_rag": (self_rag, lambda app, x: app.invoke(x)),
    "langgraph_adaptive_rag": (lambda a: self_rag(a, route=True), lambda app, x: app.invoke(x)),
    "agent_with_search_tool_streamed": (tool_agent, lambda app, x: list(app.stream(x, stream_mode="values"))),
}
# what the answering prompt held, per shape (the oracle below must agree)
EXPECTED = {"ensemble": ["claims", "warranty"], "multi_query": ["claims", "power", "warranty"],
            "compression_filter": ["warranty"], "cross_encoder_reranker": ["claims", "warranty"],
            "create_retrieval_chain": ["claims", "warranty"], "streamed_chain": ["claims", "warranty"],
            "langgraph_corrective_loop": ["warranty"], "langgraph_self_rag": ["claims", "warranty"],
            "langgraph_adaptive_rag": ["claims", "warranty"], "agent_with_search_tool_streamed": ["claims", "warranty"]}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_capture_is_what_reached_the_answering_prompt(shape, pipeline, recwarn) -> None:
    build, run = SHAPES[shape]
    app, x, fake = build(ANSWER)
    with capturing() as cap:
        run(app, x)
    (sample,) = cap.samples
    oracle = reached(fake, ANSWER)
    assert oracle == EXPECTED[shape]
    assert sample.answer == ANSWER and sample.question == (x if isinstance(x, str) else
                                                           x.get("question") or x.get("input") or QUESTION)
    assert sorted(d.id for d in sample.contexts) == oracle  # each once: nothing dropped, nothing extra
    by_id = {d.id: d for d in CORPUS}
    assert all(d.text == by_id[d.id].page_content for d in sample.contexts)
    assert sample.capture_note is None and not [w for w in recwarn if "captured sample" in str(w.message)]
    if shape == "langgraph_corrective_loop":  # the rewritten question is the app's own text
        assert sample.generated == ["warranty period of two years for the pump from delivery"]

    pipeline.vrag(sample, "two years")
    pipeline.thelma(sample)
    judge = pipeline.judge()
    result = tournament_from_runnables(
        {"a": build(ANSWER)[0], "b": build("The warranty on the pump lasts two years.")[0]},
        {"q1": x if isinstance(x, str) else x.get("question") or x.get("input") or QUESTION},
        Judge(judge), TournamentConfig(tournaments=5, n_boot=0), input=None if isinstance(x, str) else (
            lambda q, x=x: {k: (q if isinstance(v, str) else v) for k, v in x.items()}))
    pipeline.tournament(result, judge, queries=1, documents=sorted(by_id[i].page_content for i in oracle))


# ---- stateful apps: a conversation per thread, a history per session

def memory_agent(answer_for: Callable[[str], str]):
    """https://docs.langchain.com/oss/python/langchain/short-term-memory : ``create_agent`` with a
    checkpointer; turns of one ``thread_id`` share the conversation."""
    retriever_tool = create_retriever_tool(store().as_retriever(search_kwargs={"k": 1}), "search_terms",
                                           "Search the pump's terms.")

    def reply(prompt: str) -> AIMessage | str:  # search when the question is the last message, then answer
        last_user = [line for line in prompt.splitlines() if line.endswith("?")][-1]
        if prompt.rstrip().endswith("?"):
            return AIMessage(content="", tool_calls=[{"name": "search_terms", "args": {"query": last_user},
                                                      "id": f"call-{len(prompt)}"}])
        return answer_for(last_user)
    fake = Recording(rule=reply)
    return create_agent(fake, tools=[retriever_tool], checkpointer=InMemorySaver()), fake


def test_multi_turn_agent_with_checkpointer_captures_each_turn_alone() -> None:
    agent, fake = memory_agent(lambda q: f"Answer to: {q}")
    config = {"configurable": {"thread_id": "t1"}}
    with capturing() as cap:
        agent.invoke({"messages": [("user", "How long is the warranty on the pump?")]}, config)
        agent.invoke({"messages": [("user", "When do spare seals ship?")]}, config)
    first, second = cap.samples
    assert first.answer == "Answer to: How long is the warranty on the pump?"
    assert second.question == "When do spare seals ship?" and second.answer == "Answer to: When do spare seals ship?"
    final = fake.final_prompt(second.answer)
    assert "two years" in final and "five working days" in final  # the history holds the first turn's document
    # ... but only this turn's retrieval is this turn's context
    assert [d.id for d in first.contexts] == ["warranty"] and [d.id for d in second.contexts] == ["seals"]


def history_chain(tag: str, histories: dict[str, InMemoryChatMessageHistory]):
    """https://python.langchain.com/docs/how_to/message_history/ : a chain whose history is keyed by
    ``session_id`` from the call's config."""
    fake = Recording(rule=lambda prompt: f"{tag}: {prompt.splitlines()[-1]}")
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from the context:\n{context}"),
                                               MessagesPlaceholder("history"), ("human", "{question}")])
    retriever = store().as_retriever(search_kwargs={"k": 1})
    chain = RunnablePassthrough.assign(context=(lambda x: x["question"]) | retriever | fmt) | prompt | fake \
        | StrOutputParser()
    with_history = RunnableWithMessageHistory(
        chain, lambda sid: histories.setdefault(sid, InMemoryChatMessageHistory()),
        input_messages_key="question", history_messages_key="history")
    return with_history, fake


@pytest.mark.parametrize("shape", ["message_history", "agent_checkpointer"])
def test_tournament_gives_each_query_and_variant_its_own_conversation(shape, pipeline) -> None:
    queries = {"q1": "How long is the warranty on the pump?", "q2": "When do spare seals ship?"}
    if shape == "message_history":
        histories: dict[str, InMemoryChatMessageHistory] = {}
        apps = {name: history_chain(name, histories) for name in ("a", "b")}
    else:
        apps = {name: memory_agent(lambda q, name=name: f"{name}: {q}") for name in ("a", "b")}
    judge = pipeline.judge()
    result = tournament_from_runnables({n: app for n, (app, _) in apps.items()}, queries, Judge(judge),
                                       TournamentConfig(tournaments=5, n_boot=0), concurrency=1)
    for name, (_, fake) in apps.items():
        finals = [p for p, r in fake.seen if r.startswith(f"{name}:")]
        assert len(finals) == 2
        assert sum("warranty on the pump?" in p for p in finals) == 1  # the first question is not in the second's history
    if shape == "message_history":
        assert sorted(histories) == ["langrag:a:q1", "langrag:a:q2", "langrag:b:q1", "langrag:b:q2"]
        assert all(len(h.messages) == 2 for h in histories.values())
    docs = [d.page_content for d in CORPUS if d.id in ("warranty", "seals")]
    pipeline.tournament(result, judge, queries=2, documents=sorted(docs))


def test_a_runnable_called_the_wrong_way_is_reported_once_with_the_fix() -> None:
    histories: dict[str, InMemoryChatMessageHistory] = {}
    app, fake = history_chain("a", histories)
    calls = []
    counted = app.with_listeners(on_start=lambda run: calls.append(run))
    with pytest.raises(ConfigError, match=r"app 'a' failed on the first query .*input=lambda question"):
        tournament_from_runnables({"a": counted}, ["q one?", "q two?", "q three?"], Judge(fake),
                                  input=lambda q: q)  # the chain needs {"question": ...}
    assert len(calls) == 1 and not fake.seen  # asked once, never reached its model


def test_generated_text_is_judged_only_when_asked() -> None:
    app, x, _ = corrective(ANSWER)
    with capturing(include_generated=True) as cap:
        app.invoke(x)
    (sample,) = cap.samples
    assert [d.text for d in sample.contexts] == [CORPUS[0].page_content, sample.generated[0]]
