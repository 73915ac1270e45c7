"""LlamaIndex shapes whose answer is written over several model calls or from nodes the app
rewrote, built as LlamaIndex's docs build them and checked against what its own ``MockLLM``
(:class:`fakes.RecordingLLM`) received: a sub-question engine with short sub-answers, a refine
synthesis whose first answer is short, a router that asks two engines, sentence windows put in
place by a post-processor, LongContextReorder. Sub-answers are linked to their documents by the
spans they were written in, never by their length; the contexts are in the order the prompt held
them; a node is named by its source document's id (and its offset when the document was chunked),
the same in every variant."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter, SentenceWindowNodeParser
from llama_index.core.postprocessor import LongContextReorder, MetadataReplacementPostProcessor
from llama_index.core.query_engine import RouterQueryEngine, SubQuestionQueryEngine
from llama_index.core.question_gen import LLMQuestionGenerator
from llama_index.core.selectors import LLMMultiSelector
from llama_index.core.tools import QueryEngineTool
from llama_index.evaluation.langrag import capturing

from langrag_eval.adapters.contexts import CaptureWarning

from fakes import RecordingLLM
from test_llamaindex_shapes import ANSWER, CORPUS, QUESTION, TEXTS, KeywordEmbedding, query_of

SHORT = {"How many years does the pump warranty last?": "Two years.",  # shorter than any length rule
         "When do spare seals ship?": "In 5 days."}
KEY = {t: i for i, t in TEXTS.items()}


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(CORPUS, embed_model=KeywordEmbedding())


def in_order(prompt: str, texts: dict[str, str]) -> list[str]:
    return sorted((i for i, t in texts.items() if t in prompt), key=lambda i: prompt.index(texts[i]))


def test_short_sub_answers_carry_their_documents(index, pipeline) -> None:
    """https://docs.llamaindex.ai/en/stable/examples/query_engine/sub_question_query_engine/ with
    sub-answers of a few words: each reaches the final prompt beside its sub-question, and brings
    the node its engine answered from; the "Sub question / Response" nodes are the app's own text."""
    def rule(prompt: str) -> str:
        if "sub_question" in prompt:
            return "```json\n" + json.dumps([{"sub_question": q, "tool_name": "terms"} for q in SHORT]) + "\n```"
        if "Sub question:" in prompt:
            return ANSWER
        return SHORT.get(query_of(prompt), ANSWER)
    llm = RecordingLLM(rule)
    tool = QueryEngineTool.from_defaults(index.as_query_engine(llm=llm, similarity_top_k=1), name="terms",
                                         description="The pump's terms and shipping.")
    engine = SubQuestionQueryEngine.from_defaults(query_engine_tools=[tool], llm=llm,
                                                  question_gen=LLMQuestionGenerator.from_defaults(llm=llm))
    with capturing() as cap:
        engine.query(QUESTION)
    (sample,) = cap.samples
    final = [p for p, r in llm._seen if r == ANSWER][-1]
    subs = {q: [p for p, r in llm._seen if query_of(p) == q][0] for q in SHORT}
    assert all(f"Sub question: {q}\nResponse: {a}" in final for q, a in SHORT.items())
    # the oracle: each sub-answer's node, in the order the final prompt holds the sub-answers
    oracle = [i for q in sorted(SHORT, key=lambda q: final.index(q)) for i in in_order(subs[q], TEXTS)]
    assert oracle == ["warranty", "seals"] or oracle == ["seals", "warranty"]
    assert [d.id for d in sample.contexts] == oracle and [d.text for d in sample.contexts] == [TEXTS[i] for i in oracle]
    assert sample.generated == [SHORT[q] for q in sorted(SHORT, key=lambda q: final.index(q))]
    assert sample.capture_note is None
    pipeline.thelma(sample)


def test_a_refine_synthesis_with_a_short_first_answer_keeps_the_first_node(index, pipeline) -> None:
    """https://docs.llamaindex.ai/en/stable/module_guides/querying/response_synthesizers/
    (``response_mode="refine"``): one call per node, each later one refining the existing answer."""
    llm = RecordingLLM(lambda p: ANSWER if "existing answer" in p.lower() else "Two years.")
    engine = index.as_query_engine(llm=llm, similarity_top_k=2, response_mode="refine")
    with capturing() as cap:
        engine.query(QUESTION)
    (sample,) = cap.samples
    assert len(llm._seen) == 2 and "Two years." in llm._seen[1][0]
    first, final = llm._seen[0][0], llm._seen[1][0]
    # the existing answer (written from the first node) comes before the new context in the refine prompt
    assert final.index("Two years.") < min(final.index(TEXTS[i]) for i in in_order(final, TEXTS))
    oracle = in_order(first, TEXTS) + in_order(final, TEXTS)
    assert [d.id for d in sample.contexts] == oracle and len(oracle) == 2
    assert sample.generated == ["Two years."] and sample.capture_note is None
    pipeline.thelma(sample)


@pytest.mark.parametrize("mode,window", [("tree_summarize", 100), ("tree_summarize", 110), ("compact", 640),
                                         ("compact", 600)])
def test_a_synthesis_with_a_small_window_gives_every_node_it_was_given(index, mode, window, recwarn) -> None:
    """https://docs.llamaindex.ai/en/stable/module_guides/querying/response_synthesizers/ with a
    ``PromptHelper`` window too small for all nodes at once: the synthesizer repacks the nodes into
    several calls (cutting a node where a chunk ends) and writes the answer from their short replies."""
    from llama_index.core import PromptHelper, get_response_synthesizer
    from llama_index.core.query_engine import RetrieverQueryEngine

    llm = RecordingLLM(lambda p: ANSWER if "Two years." in p else "Two years.")
    synthesizer = get_response_synthesizer(llm=llm, response_mode=mode, prompt_helper=PromptHelper(
        context_window=window, num_output=10, chunk_overlap_ratio=0.0))
    engine = RetrieverQueryEngine(index.as_retriever(similarity_top_k=4), response_synthesizer=synthesizer)
    with capturing() as cap:
        response = engine.query(QUESTION)
    (sample,) = cap.samples
    prompts = [p for p, _ in llm._seen]
    assert len(prompts) > 1  # the window did split the synthesis
    given = sorted(n.node.ref_doc_id for n in response.source_nodes)
    assert sorted(d.id for d in sample.contexts) == given and len(given) == 4  # each reached the model
    parted = [d for d in sample.contexts if d.text != TEXTS[d.id]]
    for d in parted:  # a node cut between two calls: the parts the prompts held, each a run of its words
        assert all(part in TEXTS[d.id] and any(part in p for p in prompts) for part in d.text.split(" … "))
    whole = [d.id for d in sample.contexts if d not in parted]
    assert all(any(TEXTS[i] in p for p in prompts) for i in whole)
    assert (sample.capture_note is not None) == bool(parted)
    assert len([w for w in recwarn if w.category is CaptureWarning]) == int(bool(parted))  # one, said once
    assert bool(parted) == any(not any(TEXTS[i] in p for p in prompts) for i in given)


def test_a_router_asking_two_engines_gives_both_engines_documents(index) -> None:
    """https://docs.llamaindex.ai/en/stable/examples/query_engine/RouterQueryEngine/ (``LLMMultiSelector``):
    two engines answer, their short answers are summarised into one."""
    def rule(prompt: str) -> str:
        if "Some choices are given below" in prompt:
            return json.dumps([{"choice": 1, "reason": "terms"}, {"choice": 2, "reason": "shipping"}])
        if "Source 1" in prompt or "Context information from multiple sources" in prompt:
            return ANSWER
        return "Two years."
    llm = RecordingLLM(rule)
    tools = [QueryEngineTool.from_defaults(index.as_query_engine(llm=llm, similarity_top_k=1), name="terms",
                                           description="Warranty terms."),
             QueryEngineTool.from_defaults(index.as_query_engine(llm=llm, similarity_top_k=2), name="more",
                                           description="Terms and claims.")]
    engine = RouterQueryEngine(selector=LLMMultiSelector.from_defaults(llm=llm), query_engine_tools=tools, llm=llm)
    with capturing() as cap:
        response = engine.query(QUESTION)
    assert str(response) == ANSWER
    (sample,) = cap.samples
    final = [p for p, r in llm._seen if r == ANSWER][-1]
    answered = [p for p, r in llm._seen if r == "Two years."]
    assert len(answered) == 2 and "Two years." in final, [(p[-300:], r) for p, r in llm._seen]
    oracle = sorted({i for p in answered for i in in_order(p, TEXTS)})
    assert sorted(d.id for d in sample.contexts) == oracle and len(oracle) >= 2
    assert sample.capture_note is None


def window_engine(llm, document: Document):
    """https://docs.llamaindex.ai/en/stable/examples/node_postprocessor/MetadataReplacementDemo/ :
    one node per sentence, each replaced by its window of sentences before the prompt."""
    parser = SentenceWindowNodeParser.from_defaults(window_size=1, window_metadata_key="window",
                                                    original_text_metadata_key="original_text")
    nodes = parser.get_nodes_from_documents([document])
    index = VectorStoreIndex(nodes, embed_model=KeywordEmbedding())
    return index.as_query_engine(llm=llm, similarity_top_k=2, node_postprocessors=[
        MetadataReplacementPostProcessor(target_metadata_key="window")])


MANUAL = Document(text=" ".join(TEXTS.values()), id_="manual", metadata={"source": "manual.md"})


def test_sentence_windows_are_the_contexts_named_by_document_and_place() -> None:
    llm = RecordingLLM(lambda p: ANSWER)
    with capturing() as cap:
        window_engine(llm, MANUAL).query(QUESTION)
        window_engine(RecordingLLM(lambda p: ANSWER), MANUAL).query(QUESTION)  # a second variant, built anew
    first, second = cap.samples
    final = llm._seen[-1][0]
    texts = [d.text.strip() for d in first.contexts]
    assert len(texts) == 2 and all(t.strip() in final for t in texts)
    if texts[1] in texts[0]:  # overlapping windows: the shorter one is placed where it stands alone
        assert final.index(texts[0]) < final.rindex(texts[1])
    else:
        assert sorted(texts, key=final.index) == texts
    assert all(TEXTS[i] in "".join(texts) for i in ("warranty",))
    for d in first.contexts:  # the window in place of the sentence; named by the sentence's place
        start = int(d.id.removeprefix("manual#"))
        assert MANUAL.text[start:].startswith(d.metadata["original_text"].strip()) and d.metadata["window"] == d.text
    # the same names in each variant (the order is each one's ranking, which ties may change)
    assert sorted(d.id for d in first.contexts) == sorted(d.id for d in second.contexts)


def test_chunked_documents_have_the_same_ids_in_every_variant() -> None:
    """https://docs.llamaindex.ai/en/stable/module_guides/loading/node_parsers/ : a document split
    into chunks, indexed twice (two variants); a node's id is its document's and its offset."""
    ids = []
    for _ in range(2):
        index = VectorStoreIndex.from_documents([MANUAL], embed_model=KeywordEmbedding(),
                                                transformations=[SentenceSplitter(chunk_size=24, chunk_overlap=0)])
        llm = RecordingLLM(lambda p: ANSWER)
        with capturing() as cap:
            index.as_query_engine(llm=llm, similarity_top_k=2).query(QUESTION)
        (sample,) = cap.samples
        nodes = {n.get_content(): n for n in index.docstore.docs.values()}
        assert len(nodes) > 2
        assert [d.id for d in sample.contexts] == [f"manual#{nodes[d.text].start_char_idx}" for d in sample.contexts]
        assert all(MANUAL.text[int(d.id.split("#")[1]):].startswith(d.text) for d in sample.contexts)
        ids.append(sorted(d.id for d in sample.contexts))
    assert ids[0] == ids[1]  # (their order is each variant's ranking, which ties may change)


def test_long_context_reorder_gives_the_order_the_prompt_held(index) -> None:
    """https://docs.llamaindex.ai/en/stable/examples/node_postprocessor/LongContextReorder/"""
    llm = RecordingLLM(lambda p: ANSWER)
    engine = index.as_query_engine(llm=llm, similarity_top_k=4, node_postprocessors=[LongContextReorder()])
    with capturing() as cap:
        engine.query(QUESTION)
    (sample,) = cap.samples
    oracle = in_order(llm._seen[-1][0], TEXTS)
    assert len(oracle) == 4 and [d.id for d in sample.contexts] == oracle


def test_a_node_with_no_source_document_keeps_its_own_id() -> None:
    from llama_index.core.schema import TextNode

    from langrag_eval.types import as_documents

    node = TextNode(text="Loose text.", id_="n1")
    assert [d.id for d in as_documents([node])] == ["n1"]
    assert re.fullmatch(r"warranty", as_documents(CORPUS[:1])[0].id)


def test_a_multi_agent_handoff_gives_the_research_agents_nodes(index) -> None:
    """https://docs.llamaindex.ai/en/stable/understanding/agent/multi_agent/ (``AgentWorkflow``):
    a research agent searches with a retriever tool and hands off to a writer, whose call answers
    from the shared conversation."""
    import asyncio

    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.tools import RetrieverTool

    seen: list[str] = []

    def turn(messages, **kwargs):
        system = str(messages[0].content) if messages and messages[0].role == "system" else ""
        if "You research" in system:  # search once, then hand off
            call = ToolCallBlock(tool_call_id="c1", tool_name="search_terms", tool_kwargs={"input": QUESTION}) \
                if not any(m.role == "tool" for m in messages) else \
                ToolCallBlock(tool_call_id="c2", tool_name="handoff", tool_kwargs={"to_agent": "writer",
                                                                                    "reason": "Write it."})
            return ChatMessage(role="assistant", blocks=[call])
        seen.append("\n".join(str(m.content) for m in messages))
        return ChatMessage(role="assistant", content=ANSWER)
    llm = MockFunctionCallingLLM(response_generator=turn, is_chat_model=True)
    tool = RetrieverTool.from_defaults(index.as_retriever(similarity_top_k=2), name="search_terms",
                                       description="Search the pump's terms.")
    research = FunctionAgent(name="research", description="Finds the terms.", tools=[tool], llm=llm,
                             system_prompt="You research the pump's terms.", can_handoff_to=["writer"])
    writer = FunctionAgent(name="writer", description="Writes the answer.", tools=[], llm=llm,
                           system_prompt="You write the answer from the research.")
    workflow = AgentWorkflow(agents=[research, writer], root_agent="research")
    async def main():
        return await workflow.run(user_msg=QUESTION)
    with capturing() as cap:
        assert str(asyncio.run(main())) == ANSWER
    (sample,) = cap.samples
    oracle = in_order(seen[-1], TEXTS)
    assert len(seen) == 1 and len(oracle) == 2
    assert [d.id for d in sample.contexts] == oracle and sample.question == QUESTION and sample.capture_note is None


def test_a_retrieval_then_a_synthesis_called_alone_is_one_sample(index) -> None:
    """https://docs.llamaindex.ai/en/stable/module_guides/querying/response_synthesizers/ (used on
    its own: ``synthesize(query, nodes=...)``) after ``retriever.retrieve`` and LongContextReorder:
    two calls of the app's own, one answer, one sample, in the reordered order."""
    from llama_index.core import get_response_synthesizer

    llm = RecordingLLM(lambda p: ANSWER)
    retriever, synthesizer = index.as_retriever(similarity_top_k=4), get_response_synthesizer(llm=llm)
    with capturing() as cap:
        nodes = retriever.retrieve(QUESTION)
        reordered = LongContextReorder().postprocess_nodes(nodes)
        assert str(synthesizer.synthesize(QUESTION, nodes=reordered)) == ANSWER
    (sample,) = cap.samples
    oracle = in_order(llm._seen[-1][0], TEXTS)
    assert oracle == [n.node.ref_doc_id for n in reordered] != [n.node.ref_doc_id for n in nodes]
    assert [d.id for d in sample.contexts] == oracle and sample.answer == ANSWER and sample.question == QUESTION
    with capturing() as alone:
        retriever.retrieve(QUESTION)  # a retrieval no answer used is a sample of its own, with no answer
    assert [(s.answer, [d.id for d in s.contexts]) for s in alone.samples] == [(None, [n.node.ref_doc_id for n in nodes])]


def test_an_agent_with_a_query_engine_tool_that_answers_briefly(index) -> None:
    """https://docs.llamaindex.ai/en/stable/understanding/agent/rag_agent/ : a ``FunctionAgent``
    asks a ``QueryEngineTool``, whose engine answers in two words; the agent's final call holds the
    tool call and that answer, which brings the nodes the engine answered from."""
    import asyncio

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    finals: list[str] = []

    def turn(messages, **kwargs):
        if not any(m.role == "tool" for m in messages):
            return ChatMessage(role="assistant", blocks=[ToolCallBlock(
                tool_call_id="c1", tool_name="terms", tool_kwargs={"input": "pump warranty length"})])
        finals.append("\n".join(str(m.content) for m in messages))
        return ChatMessage(role="assistant", content=ANSWER)
    engine_llm = RecordingLLM(lambda p: "Two years.")
    tool = QueryEngineTool.from_defaults(index.as_query_engine(llm=engine_llm, similarity_top_k=2), name="terms",
                                         description="The pump's terms.")
    agent = FunctionAgent(tools=[tool], llm=MockFunctionCallingLLM(response_generator=turn, is_chat_model=True),
                          system_prompt="Answer using the terms tool.")

    async def main():
        return await agent.run(user_msg=QUESTION)
    with capturing() as cap:
        assert str(asyncio.run(main())) == ANSWER
    (sample,) = cap.samples
    assert "Two years." in finals[-1]  # the tool's answer reached the agent's answering call
    oracle = in_order(engine_llm._seen[-1][0], TEXTS)
    assert len(oracle) == 2 and [d.id for d in sample.contexts] == oracle
    assert sample.generated == ["Two years."] and sample.capture_note is None
