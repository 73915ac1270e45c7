"""LlamaIndex app shapes as LlamaIndex's docs build them, on LlamaIndex's own fakes (``MockEmbedding``,
``MockLLM`` and ``MockFunctionCallingLLM``, recording what they received): a query engine called
sync, async and streaming, a chat engine, and a ``FunctionAgent`` with a retriever tool. Each:
capture -> vRAG grade -> THELMA -> a two-variant tournament, asserting what was captured (every
indexed document, with its metadata; the mock embedding ties every score, so the engines retrieve
them all, and the answering call received them all) and each stage's judge calls."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import RetrieverTool
from llama_index.evaluation.langrag import capturing, tournament_from_query_engines

from langrag_eval.runtime import Judge
from langrag_eval.tournament import TournamentConfig

from fakes import RecordingLLM

QUESTION = "How long is the warranty on the pump?"
LABEL = "two years"
DOCS = [Document(text="The pump carries a warranty of two years from delivery.", metadata={"source": "terms.pdf"}),
        Document(text="Spare pump seals ship within five working days.", metadata={"source": "shipping.md"}),
        Document(text="The pump draws 40 watts at full speed.", metadata={"source": "datasheet.pdf"})]
TOP_K = len(DOCS)


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(DOCS, embed_model=MockEmbedding(embed_dim=8))


def mock_answer(words: int) -> str:
    return " ".join(["text"] * words)  # what MockLLM(max_tokens=n) writes


SEEN: list[list[str]] = []  # what each app's model received, newest app last: the oracle


def recording(words: int) -> RecordingLLM:
    llm = RecordingLLM(lambda prompt: mock_answer(words))
    SEEN.append(llm._seen)  # type: ignore[arg-type]
    return llm


def query_engine(index, words: int, streaming: bool = False):
    """https://docs.llamaindex.ai/en/stable/understanding/querying/querying/ (streaming:
    https://docs.llamaindex.ai/en/stable/module_guides/deploying/query_engine/streaming/)."""
    return index.as_query_engine(llm=recording(words), similarity_top_k=TOP_K, streaming=streaming)


def chat_engine(index, words: int):
    """https://docs.llamaindex.ai/en/stable/examples/chat_engine/chat_engine_condense_plus_context/"""
    return index.as_chat_engine(chat_mode="condense_plus_context", llm=recording(words), similarity_top_k=TOP_K)


def agent(index, words: int):
    """https://docs.llamaindex.ai/en/stable/understanding/agent/ (``FunctionAgent`` with a retriever tool)."""
    seen: list = []
    SEEN.append(seen)
    tool = RetrieverTool.from_defaults(index.as_retriever(similarity_top_k=TOP_K), name="search_manuals",
                                       description="Search the product manuals and terms.")

    def turn(messages, **kwargs):  # call the tool with the question, then answer from its output
        if any(m.role == "tool" for m in messages):
            seen.append(("\n".join(str(m.content) for m in messages), mock_answer(words)))
            return ChatMessage(role="assistant", content=mock_answer(words))
        return ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id="call-1", tool_name="search_manuals", tool_kwargs={"input": QUESTION})])

    return FunctionAgent(tools=[tool], llm=MockFunctionCallingLLM(response_generator=turn, is_chat_model=True),
                         system_prompt="Answer from the manuals; search them first.")


def run_sync(engine):
    return engine.query(QUESTION)


def run_async(engine):
    return asyncio.run(engine.aquery(QUESTION))


def run_streaming(engine):
    response = engine.query(QUESTION)
    return "".join(response.response_gen)  # the caller reads the stream; the capture keeps the text


def run_chat(engine):
    engine.chat(QUESTION)


def run_agent(engine):
    async def main():
        return await engine.run(user_msg=QUESTION)
    return asyncio.run(main())


SHAPES = {
    "query_engine": (query_engine, run_sync),
    "query_engine_async": (query_engine, run_async),
    "query_engine_streaming": (lambda index, words: query_engine(index, words, streaming=True), run_streaming),
    "chat_engine": (chat_engine, run_chat),
    "agent_with_retriever_tool": (agent, run_agent),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_app_shape_capture_grade_thelma_tournament(shape, index, pipeline) -> None:
    build, call = SHAPES[shape]
    app = build(index, 3)
    with capturing() as cap:
        call(app)
    (sample,) = cap.samples
    final = [p for p, r in SEEN[-1] if r == mock_answer(3)][-1]  # what the answering call received
    assert sorted(d.text for d in DOCS if d.text in final) == sorted(d.text for d in sample.contexts)
    assert sample.question == QUESTION and sample.answer == mock_answer(3)
    assert sorted(d.text for d in sample.contexts) == sorted(d.text for d in DOCS)
    assert sorted(d.metadata["source"] for d in sample.contexts) == sorted(d.metadata["source"] for d in DOCS)
    # the id of the Document each node was parsed from: not the node's fresh UUID, not a digest of the text
    assert {d.id for d in sample.contexts} == {d.doc_id for d in DOCS}
    assert {d.id for d in sample.contexts} == {n.ref_doc_id for n in index.docstore.docs.values()}

    pipeline.vrag(sample, LABEL)
    pipeline.thelma(sample)

    judge_model = pipeline.judge()
    result = tournament_from_query_engines({"short": build(index, 2), "long": build(index, 3)}, [QUESTION],
                                           Judge(judge_model), TournamentConfig(tournaments=5, n_boot=0))
    pipeline.tournament(result, judge_model, queries=1, documents=sorted(d.text for d in DOCS))


def test_an_event_handler_registered_alone_still_captures_query_engines(index) -> None:
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.evaluation.langrag import RAGCapture

    cap, dispatcher = RAGCapture(), get_dispatcher()
    dispatcher.add_event_handler(cap)
    try:
        query_engine(index, 2).query(QUESTION)
    finally:
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not cap]
    (sample,) = cap.samples
    assert (sample.question, sample.answer) == (QUESTION, mock_answer(2)) and len(sample.contexts) == TOP_K
