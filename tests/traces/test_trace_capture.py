"""The outside oracle for reading traces: apps built as the frameworks' docs build them, run once
inside ``capturing()`` with the real OpenInference instrumentor on (the OpenTelemetry SDK exporting
through its own OTLP encoder), must give from the export the same samples — question, context ids
and texts in order, answer — that live capture recorded for the same calls."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("openinference.instrumentation.langchain")
pytest.importorskip("openinference.instrumentation.llama_index")

from otlp_export import instrumented, write_export

from langrag_eval.traces import read_traces, sample_of_trace

QUESTIONS = ["How long is the warranty on the pump?", "How fast do spare seals ship?"]


def _view(sample):
    return sample.question, [(d.id, d.text) for d in sample.contexts], sample.answer


def _read(path: Path):
    problems: list = []
    samples = [sample_of_trace(t) for t in read_traces(path, problems=problems)]
    assert problems == []
    return sorted(samples, key=lambda s: s.metadata["started"])


def _langchain_docs():
    from langchain_core.documents import Document

    return [Document(id="terms-4", page_content="The pump carries a warranty of two years from delivery.",
                     metadata={"source": "terms.pdf"}),
            Document(id="ship-1", page_content="Spare pump seals ship within five working days.",
                     metadata={"source": "shipping.md"}),
            Document(id="data-2", page_content="The pump draws 40 watts at full speed.",
                     metadata={"source": "datasheet.pdf"})]


def lcel_chain():
    """https://python.langchain.com/docs/tutorials/rag/ (an LCEL chain: retriever | format | prompt | model)."""
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(_langchain_docs())
    retriever = store.as_retriever(search_kwargs={"k": 2})
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from this context:\n{context}"),
                                               ("human", "{question}")])
    model = FakeListChatModel(responses=["Two years from delivery.", "Within five working days."])
    chain = ({"context": retriever | (lambda docs: "\n\n".join(d.page_content for d in docs)),
              "question": RunnablePassthrough()} | prompt | model | StrOutputParser())
    return lambda q: chain.invoke(q)


def langgraph_agent():
    """https://docs.langchain.com/oss/python/langchain/retrieval (``create_agent`` with a retriever tool)."""
    from langchain.agents import create_agent
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools.retriever import create_retriever_tool
    from langchain_langrag import LangragRetriever

    search = create_retriever_tool(LangragRetriever.from_documents(_langchain_docs(), k=2), "search_docs",
                                   "Search the product documents.")

    class ScriptedChat(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    replies = []
    for i, q in enumerate(QUESTIONS):
        replies += [AIMessage(content="", tool_calls=[{"name": "search_docs", "args": {"query": q}, "id": f"c{i}"}]),
                    AIMessage(content=["Two years from delivery.", "Within five working days."][i])]
    agent = create_agent(ScriptedChat(messages=iter(replies)), tools=[search])
    return lambda q: agent.invoke({"messages": [{"role": "user", "content": q}]})


def _llama_index():
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding

    docs = [Document(text=d.page_content, metadata=d.metadata, id_=d.id) for d in _langchain_docs()]
    return VectorStoreIndex.from_documents(docs, embed_model=MockEmbedding(embed_dim=8))


def query_engine():
    """https://docs.llamaindex.ai/en/stable/understanding/querying/querying/"""
    from fakes import RecordingLLM

    engine = _llama_index().as_query_engine(llm=RecordingLLM(lambda p: "Two years from delivery."),
                                            similarity_top_k=2)
    return lambda q: engine.query(q)


def chat_engine():
    """https://docs.llamaindex.ai/en/stable/examples/chat_engine/chat_engine_condense_plus_context/"""
    from fakes import RecordingLLM

    engine = _llama_index().as_chat_engine(chat_mode="condense_plus_context",
                                           llm=RecordingLLM(lambda p: "Within five working days."),
                                           similarity_top_k=2)
    return lambda q: engine.chat(q)


def _langchain():
    from openinference.instrumentation.langchain import LangChainInstrumentor

    from langchain_langrag import capturing
    return LangChainInstrumentor(), capturing


def _llamaindex():
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    from llama_index.evaluation.langrag import capturing
    return LlamaIndexInstrumentor(), capturing


@pytest.mark.parametrize("framework, build", [(_langchain, lcel_chain), (_langchain, langgraph_agent),
                                              (_llamaindex, query_engine), (_llamaindex, chat_engine)],
                         ids=["lcel-chain", "create-agent", "query-engine", "chat-engine"])
@pytest.mark.parametrize("hex_ids", [True, False], ids=["hex-ids", "base64-ids"])
def test_samples_read_from_an_export_equal_live_capture(framework, build, hex_ids, tmp_path: Path) -> None:
    instrumentor, capturing = framework()
    app = build()
    with instrumented(instrumentor) as exporter:
        with capturing() as capture:
            for q in QUESTIONS:
                app(q)
        spans = exporter.get_finished_spans()
    live = [_view(s) for s in capture.samples]
    assert len(live) == len(QUESTIONS) and all(ctx for _, ctx, _ in live)
    read = _read(write_export(spans, tmp_path / "export.jsonl", hex_ids=hex_ids))
    if framework is _llamaindex:
        # LlamaIndex's instrumentor names a document by its node's id, live capture by its source
        # document's (stable across indexes): the texts and their order must agree, the ids are the nodes'
        texts = [(q, [t for _, t in ctx], a) for q, ctx, a in live]
        assert [(s.question, [d.text for d in s.contexts], s.answer) for s in read] == texts
        assert all(len(d.id) == 36 and d.id.count("-") == 4 for s in read for d in s.contexts)
        return
    assert [_view(s) for s in read] == live
    assert all(s.capture_note is None for s in read)
    assert [s.metadata["trace_id"] for s in read] == [s.id for s in read]


def test_a_trace_split_over_requests_and_files_is_read_whole(tmp_path: Path) -> None:
    instrumentor, capturing = _langchain()
    app = lcel_chain()
    with instrumented(instrumentor) as exporter:
        with capturing() as capture:
            for q in QUESTIONS:
                app(q)
        spans = list(exporter.get_finished_spans())
    folder = tmp_path / "exports"
    folder.mkdir()
    # a batch processor exports spans as they end: children in earlier requests than their root
    write_export(spans[:5], folder / "a.jsonl", per_line=2)
    write_export(spans[5:], folder / "b.jsonl", per_line=3)
    assert [_view(s) for s in _read(folder)] == [_view(s) for s in capture.samples]
