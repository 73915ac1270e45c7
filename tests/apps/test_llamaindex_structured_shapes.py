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

    from langrag_eval.contexts import as_documents

    node = TextNode(text="Loose text.", id_="n1")
    assert [d.id for d in as_documents([node])] == ["n1"]
    assert re.fullmatch(r"warranty", as_documents(CORPUS[:1])[0].id)
