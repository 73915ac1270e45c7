"""LangChain and LangGraph shapes in which the app moves, cuts or merges the documents between the
retriever and the prompt, built as the docs build them and checked against what LangChain's own
fake chat model received: a retrieval made by its own top-level call before the answering chain
(the LongContextReorder how-to), documents cut to a prefix or a window, documents in a
``Source: …\\nContent: …`` template, a tool that searches and returns one text, a rewrite-and-retry
loop whose second retrieval ranks the documents otherwise, a parent-document retriever. The
contexts are what the answering prompt held, in its order, under the documents' ids."""

from __future__ import annotations

import asyncio
import re
from typing import TypedDict

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain_classic")

from langchain.agents import create_agent
from langchain_classic.chains.combine_documents import create_stuff_documents_chain
from langchain_classic.retrievers import ParentDocumentRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import ConfigurableFieldSpec, RunnablePassthrough
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.stores import InMemoryStore
from langchain_core.tools import tool
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_langrag import capturing, tournament_from_runnables
from langchain_langrag.models import as_judge
from langchain_text_splitters import RecursiveCharacterTextSplitter
from langgraph.graph import END, START, StateGraph

from langrag_eval.adapters.contexts import CaptureWarning
from langrag_eval.errors import ConfigError
from langrag_eval.runtime import Judge

from fakes import Recording

QUESTION = "How long is the warranty on the pump?"
ANSWER = "The pump has a two-year warranty."
# longer than the 60 characters a cutting chain keeps; ids as users set them, in metadata too
LONG = [Document(id=i, page_content=t, metadata={"source": s, "id": i}) for i, s, t in [
    ("warranty", "terms.pdf", "The pump carries a warranty of two years from delivery, covering parts and "
                              "labour at any authorised service centre."),
    ("claims", "terms.pdf", "Warranty claims on the pump need the delivery note and the serial number "
                            "printed on the motor housing."),
    ("seals", "shipping.md", "Spare pump seals ship within five working days of the order, with free "
                             "shipping inside the country."),
    ("power", "datasheet.pdf", "The pump draws 40 watts at full speed and 12 watts in its quiet night "
                               "mode setting.")]]
BY_ID = {d.id: d for d in LONG}
PROMPT = ChatPromptTemplate.from_template(
    "Answer the question from the context.\nContext:\n{context}\n\nQuestion: {question}")


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


class KeywordEmbeddings(Embeddings):
    """Bag-of-words vectors: a vector store ranks documents by the words they share with the query."""

    vocabulary = sorted({w for d in LONG for w in words(d.page_content)} | words(QUESTION))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        found = words(text)
        return [1.0 if w in found else 0.0 for w in self.vocabulary] + [0.01]


def store(docs: list[Document] = LONG) -> InMemoryVectorStore:
    s = InMemoryVectorStore(KeywordEmbeddings())
    s.add_documents(docs)
    return s


def answering(prompt: str) -> str:
    return ANSWER


def in_prompt_order(prompt: str, pieces: dict[str, str]) -> list[tuple[str, str]]:
    """The oracle: (id, text) of the pieces the prompt holds, in the order it holds them."""
    return sorted(((i, t) for i, t in pieces.items() if t in prompt), key=lambda it: prompt.index(it[1]))


def captured(sample) -> list[tuple[str, str]]:
    return [(d.id, d.text) for d in sample.contexts]


def long_context_reorder(docs: list[Document]) -> list[Document]:
    """``LongContextReorder.transform_documents`` (langchain_community, not installed here) as its
    source writes it: the most relevant documents at both ends, the least in the middle."""
    out: list[Document] = []
    for i, d in enumerate(reversed(docs)):
        out.insert(0, d) if i % 2 == 1 else out.append(d)
    return out


def test_a_retrieval_made_before_the_answering_chain_is_that_answers_context(pipeline, recwarn) -> None:
    """https://python.langchain.com/docs/how_to/long_context_reorder/ : ``docs = retriever.invoke(q)``,
    reorder, then ``chain.invoke({"context": reordered, ...})`` of a stuff-documents chain: two
    top-level calls, one sample, the documents in the reordered order the prompt held."""
    fake = Recording(rule=answering)
    retriever = store().as_retriever(search_kwargs={"k": 4})
    chain = create_stuff_documents_chain(fake, PROMPT)
    with capturing() as cap:
        docs = retriever.invoke(QUESTION)
        reordered = long_context_reorder(docs)
        assert chain.invoke({"context": reordered, "question": QUESTION}) == ANSWER
    assert [d.id for d in reordered] != [d.id for d in docs]
    (sample,) = cap.samples
    oracle = in_prompt_order(fake.final_prompt(ANSWER), {d.id: d.page_content for d in LONG})
    assert [i for i, _ in oracle] == [d.id for d in reordered]
    assert sample.question == QUESTION and sample.answer == ANSWER and captured(sample) == oracle
    assert sample.capture_note is None and not recwarn.list
    pipeline.thelma(sample)  # sp1 and gr 1.0: the documents are there to judge


def test_two_questions_in_one_block_each_take_their_own_retrieval() -> None:
    fake = Recording(rule=answering)
    retriever = store().as_retriever(search_kwargs={"k": 1})
    chain = create_stuff_documents_chain(fake, PROMPT)
    ids = []
    with capturing() as cap:
        for q in (QUESTION, "When do spare seals ship?"):
            docs = retriever.invoke(q)
            ids.append([d.id for d in docs])
            chain.invoke({"context": docs, "question": q})
    first, second = cap.samples
    assert [d.id for d in first.contexts] == ids[0] and [d.id for d in second.contexts] == ids[1] == ["seals"]
    assert second.question == "When do spare seals ship?"


def cut_chain(cut, fake):
    """https://python.langchain.com/docs/tutorials/rag/ (LCEL form) with a ``format_docs`` that
    shortens each document before the prompt."""
    retriever = store().as_retriever(search_kwargs={"k": 3})
    fmt = lambda docs: "\n\n".join(cut(d.page_content) for d in docs)  # noqa: E731
    return {"context": retriever | fmt, "question": RunnablePassthrough()} | PROMPT | fake | StrOutputParser()


@pytest.mark.parametrize("cut", [lambda t: t[:60], lambda t: t[18:75], lambda t: f"[{t[:40]}...]"],
                         ids=["prefix_60", "window", "wrapped_prefix"])
def test_a_document_cut_before_the_prompt_keeps_its_id_with_the_text_the_prompt_held(cut, pipeline) -> None:
    fake = Recording(rule=answering)
    with capturing() as cap, pytest.warns(CaptureWarning, match="rewritten") as warned:
        cut_chain(cut, fake).invoke(QUESTION)
    (sample,) = cap.samples
    held = {d.id: cut(d.page_content).strip("[.]") for d in LONG}
    oracle = in_prompt_order(fake.final_prompt(ANSWER), held)
    assert len(oracle) == 3 and [w.category for w in warned] == [CaptureWarning]
    assert [(i, t.strip()) for i, t in captured(sample)] == [(i, t.strip()) for i, t in oracle]
    assert all(d.metadata == BY_ID[d.id].metadata for d in sample.contexts)
    assert "3 of the 3 documents reached the prompt rewritten" in sample.capture_note
    pipeline.thelma(sample)


def test_documents_in_a_source_template_are_the_documents() -> None:
    """https://docs.langchain.com/oss/python/langchain/rag : documents serialised as
    ``Source: {metadata}\\nContent: {page_content}`` before the prompt."""
    fake = Recording(rule=answering)
    with capturing() as cap:
        cut_chain(lambda t: t, fake).invoke(QUESTION)  # whole
        retriever = store().as_retriever(search_kwargs={"k": 2})
        fmt = lambda docs: "\n\n".join(f"Source: {d.metadata}\nContent: {d.page_content}" for d in docs)  # noqa: E731
        ({"context": retriever | fmt, "question": RunnablePassthrough()} | PROMPT | fake | StrOutputParser()
         ).invoke(QUESTION)
    sample = cap.samples[1]
    oracle = in_prompt_order(fake.seen[-1][0], {d.id: d.page_content for d in LONG})
    assert captured(sample) == oracle and len(oracle) == 2 and sample.capture_note is None


def test_a_tool_returning_one_text_gives_its_documents_back(pipeline) -> None:
    """https://docs.langchain.com/oss/python/langchain/rag (RAG agent): the ``retrieve_context`` tool
    calls ``similarity_search`` and returns the serialised results as one string (no artifact)."""
    s = store()

    @tool
    def retrieve_context(query: str) -> str:
        """Retrieve information to help answer a query."""
        docs = s.similarity_search(query, k=2)
        return "\n\n".join(f"Source: {d.metadata}\nContent: {d.page_content}" for d in docs)

    def reply(prompt: str) -> AIMessage | str:
        if "Content:" not in prompt:
            return AIMessage(content="", tool_calls=[{"name": "retrieve_context", "args": {"query": QUESTION},
                                                      "id": "call-1"}])
        return ANSWER
    fake = Recording(rule=reply)
    with capturing() as cap, pytest.warns(CaptureWarning, match="one text"):
        create_agent(fake, tools=[retrieve_context]).invoke({"messages": [("user", QUESTION)]})
    (sample,) = cap.samples
    oracle = in_prompt_order(fake.final_prompt(ANSWER), {d.id: d.page_content for d in LONG})
    assert captured(sample) == oracle and len(oracle) == 2  # two documents, not one merged text
    assert all(d.metadata == BY_ID[d.id].metadata for d in sample.contexts)
    pipeline.thelma(sample)


class Loop(TypedDict, total=False):
    question: str
    documents: list[Document]
    generation: str
    tries: int


REWRITTEN = "pump warranty years delivery parts labour"


def test_a_retry_loop_gives_the_order_of_the_prompt_that_answered() -> None:
    """https://langchain-ai.github.io/langgraph/tutorials/rag/langgraph_agentic_rag/ : retrieve,
    grade, rewrite the question and retrieve again; the second retrieval ranks the same documents
    otherwise, and the answer is written from that order."""
    grade = ChatPromptTemplate.from_template("Is the document relevant? Reply yes or no.\n{document}\n"
                                             "Question: {question}")
    rewrite = ChatPromptTemplate.from_template("Rewrite this question for a better search: {question}")

    def reply(prompt: str) -> str:
        if prompt.startswith("Is the document relevant"):
            return "yes" if REWRITTEN in prompt else "no"
        return REWRITTEN if prompt.startswith("Rewrite") else ANSWER
    fake = Recording(rule=reply)
    retriever = store().as_retriever(search_kwargs={"k": 2})
    retrieved: list[list[str]] = []

    def retrieve(state: Loop):
        docs = retriever.invoke(state["question"])
        retrieved.append([d.id for d in docs])
        return {"documents": docs, "tries": state.get("tries", 0) + 1}

    def grade_documents(state: Loop):
        return {"documents": [d for d in state["documents"] if (grade | fake | StrOutputParser()).invoke(
            {"document": d.page_content, "question": state["question"]}) == "yes"]}

    def transform_query(state: Loop):
        return {"question": (rewrite | fake | StrOutputParser()).invoke({"question": state["question"]})}

    def generate(state: Loop):
        context = "\n\n".join(d.page_content for d in state["documents"])
        return {"generation": (PROMPT | fake | StrOutputParser()).invoke({"context": context,
                                                                           "question": state["question"]})}

    g = StateGraph(Loop)
    for node in (retrieve, grade_documents, transform_query, generate):
        g.add_node(node.__name__, node)
    g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "grade_documents")
    g.add_conditional_edges("grade_documents", lambda s: "generate" if s["documents"] or s["tries"] > 2
                            else "transform_query")
    g.add_edge("transform_query", "retrieve")
    g.add_edge("generate", END)
    with capturing() as cap:
        g.compile().invoke({"question": QUESTION})
    assert len(retrieved) == 2 and retrieved[0] != retrieved[1] and set(retrieved[0]) & set(retrieved[1])
    (sample,) = cap.samples
    oracle = in_prompt_order(fake.final_prompt(ANSWER), {d.id: d.page_content for d in LONG})
    assert [i for i, _ in oracle] == retrieved[1]
    assert captured(sample) == oracle  # best first, as the answering prompt ranked them


def test_a_parent_document_retriever_gives_the_parents(pipeline) -> None:
    """https://python.langchain.com/docs/how_to/parent_document_retriever/ : small chunks are
    searched, their whole parent documents returned."""
    fake = Recording(rule=answering)
    retriever = ParentDocumentRetriever(vectorstore=InMemoryVectorStore(KeywordEmbeddings()),
                                        docstore=InMemoryStore(),
                                        child_splitter=RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0))
    retriever.add_documents(LONG)
    retriever.search_kwargs = {"k": 2}
    chain = ({"context": retriever | (lambda docs: "\n\n".join(d.page_content for d in docs)),
              "question": RunnablePassthrough()} | PROMPT | fake | StrOutputParser())
    with capturing() as cap:
        chain.invoke(QUESTION)
    (sample,) = cap.samples
    oracle = in_prompt_order(fake.final_prompt(ANSWER), {d.id: d.page_content for d in LONG})
    assert oracle and captured(sample) == oracle and sample.capture_note is None
    pipeline.thelma(sample)


def test_a_failed_first_query_names_the_run_config_keyword() -> None:
    """https://python.langchain.com/docs/how_to/message_history/ : a history keyed by ``user_id`` and
    ``conversation_id``, which only the caller's config can give; the fix names ``run_config=``."""
    fake = Recording(rule=answering)
    prompt = ChatPromptTemplate.from_messages([("system", "Answer briefly."), MessagesPlaceholder("history"),
                                               ("human", "{question}")])
    app = RunnableWithMessageHistory(
        prompt | fake | StrOutputParser(), lambda user_id, conversation_id: InMemoryChatMessageHistory(),
        input_messages_key="question", history_messages_key="history",
        history_factory_config=[ConfigurableFieldSpec(id="user_id", annotation=str, name="User ID", default="",
                                                      is_shared=True),
                                ConfigurableFieldSpec(id="conversation_id", annotation=str, name="Conversation ID",
                                                      default="", is_shared=True)])
    with pytest.raises(ConfigError, match=r"pass run_config=lambda name, qid: "):
        tournament_from_runnables({"a": app}, [QUESTION, "When do spare seals ship?"], Judge(fake))
    assert not fake.seen


def test_a_multi_vector_retriever_gives_the_documents_its_summaries_point_to(pipeline) -> None:
    """https://python.langchain.com/docs/how_to/multi_vector/ : short summaries are searched, each
    pointing by ``doc_id`` to its whole document in a docstore, which is what is returned."""
    from langchain_classic.retrievers import MultiVectorRetriever

    vectors, docstore = InMemoryVectorStore(KeywordEmbeddings()), InMemoryStore()
    retriever = MultiVectorRetriever(vectorstore=vectors, docstore=docstore, id_key="doc_id",
                                     search_kwargs={"k": 2})
    vectors.add_documents([Document(page_content=" ".join(d.page_content.split()[:6]), metadata={"doc_id": d.id})
                           for d in LONG])
    docstore.mset([(d.id, d) for d in LONG])
    fake = Recording(rule=answering)
    chain = ({"context": retriever | (lambda docs: "\n\n".join(d.page_content for d in docs)),
              "question": RunnablePassthrough()} | PROMPT | fake | StrOutputParser())
    with capturing() as cap:
        chain.invoke(QUESTION)
    (sample,) = cap.samples
    oracle = in_prompt_order(fake.final_prompt(ANSWER), {d.id: d.page_content for d in LONG})
    assert len(oracle) == 2 and captured(sample) == oracle and sample.capture_note is None
    pipeline.thelma(sample)


def test_a_prompt_and_a_model_called_alone_after_a_retrieval_is_one_sample(pipeline) -> None:
    """https://python.langchain.com/docs/tutorials/rag/ (the ``generate`` step outside a graph):
    ``docs = retriever.invoke(q)``, ``messages = prompt.invoke(...)``, ``llm.invoke(messages)``:
    three calls of the app's own, one answer, one sample; a judge's call is none."""
    fake = Recording(rule=answering)
    retriever = store().as_retriever(search_kwargs={"k": 2})
    with capturing() as cap:
        docs = retriever.invoke(QUESTION)
        messages = PROMPT.invoke({"context": "\n\n".join(d.page_content for d in docs), "question": QUESTION})
        assert fake.invoke(messages).content == ANSWER
        judge_model = Recording(rule=lambda p: "[[A]]")
        asyncio.run(as_judge(judge_model).complete("Which answer is better?"))  # a judge's call while capturing
    assert judge_model.seen
    (sample,) = cap.samples
    oracle = in_prompt_order(fake.final_prompt(ANSWER), {d.id: d.page_content for d in LONG})
    assert sample.question == QUESTION and sample.answer == ANSWER and captured(sample) == oracle
    assert [d.id for d in docs] == [i for i, _ in oracle] and sample.capture_note is None
    pipeline.thelma(sample)


def test_a_graders_short_reply_in_the_answering_prompt_brings_nothing() -> None:
    """https://langchain-ai.github.io/langgraph/tutorials/rag/langgraph_agentic_rag/ (grade, then
    generate) with an answering prompt that holds the grader's word "no" and the question the
    grader was asked: a grader's chain is a step of the app, not a sub-question."""
    grade = ChatPromptTemplate.from_template("Is the document relevant? Reply yes or no.\n{document}\nQuestion: {question}")
    answer_prompt = ChatPromptTemplate.from_template(
        "Answer from the context; say no if it does not tell.\nContext:\n{context}\n\nQuestion: {question}")
    fake = Recording(rule=lambda p: ("yes" if "two years" in p else "no") if p.startswith("Is the") else ANSWER)
    retriever = store().as_retriever(search_kwargs={"k": 2})

    def rag(question: str) -> str:
        docs = retriever.invoke(question)
        kept = [d for d in docs if (grade | fake | StrOutputParser()).invoke(
            {"document": d.page_content, "question": question}) == "yes"]
        return (answer_prompt | fake | StrOutputParser()).invoke(
            {"context": "\n\n".join(d.page_content for d in kept), "question": question})
    from langchain_core.runnables import RunnableLambda

    with capturing() as cap:
        RunnableLambda(rag).invoke(QUESTION)
    (sample,) = cap.samples
    graded = [r for p, r in fake.seen if p.startswith("Is the")]
    assert sorted(graded) == ["no", "yes"] and " no " in fake.final_prompt(ANSWER)
    oracle = in_prompt_order(fake.final_prompt(ANSWER), {d.id: d.page_content for d in LONG})
    assert [i for i, _ in oracle] == ["warranty"] and captured(sample) == oracle
