"""LlamaIndex app shapes as its docs build them, each captured without touching its call site and
checked against what LlamaIndex's own ``MockLLM`` (subclassed to record its prompts and to reply by
a rule over them) received: the nodes whose text is in the prompt of the call that wrote the answer
are the contexts, nothing else, and text the app wrote on the way is kept apart. Then each capture
goes through vRAG, THELMA and a two-variant tournament with exact judge calls."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex, get_response_synthesizer
from llama_index.core.agent.workflow import ReActAgent
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.llms import MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.postprocessor import LLMRerank, SimilarityPostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine, RouterQueryEngine, SubQuestionQueryEngine
from llama_index.core.question_gen import LLMQuestionGenerator
from llama_index.core.response_synthesizers import CompactAndRefine
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import NodeWithScore
from llama_index.core.selectors import LLMSingleSelector
from llama_index.core.tools import QueryEngineTool, RetrieverTool
from llama_index.core.workflow import Context, Event, StartEvent, StopEvent, Workflow, step
from llama_index.evaluation.langrag import LangragRetriever, capturing, tournament_from_query_engines
from pydantic import PrivateAttr

from langrag_eval.errors import ConfigError

from fakes import RecordingLLM as Recording
from langrag_eval.runtime import Judge
from langrag_eval.tournament import TournamentConfig

QUESTION = "How long is the warranty on the pump?"
ANSWER = "The pump has a two-year warranty."
TEXTS = {"warranty": "The pump carries a warranty of two years from delivery.",
         "claims": "Warranty claims on the pump need the delivery note.",
         "seals": "Spare pump seals ship within five working days.",
         "power": "The pump draws 40 watts at full speed.",
         "returns": "Returns are accepted within thirty days of purchase."}
CORPUS = [Document(text=t, id_=i, metadata={"source": f"{i}.md"}) for i, t in TEXTS.items()]
SUB = {"How many years does the pump warranty last?": "The warranty of the pump runs for two years.",
       "When do spare seals ship?": "Spare seals for the pump ship in five working days."}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


VOCABULARY = sorted({w for t in [*TEXTS.values(), QUESTION, *SUB] for w in words(t)})


class KeywordEmbedding(BaseEmbedding):
    """Bag-of-words vectors, so that a vector index ranks nodes by the words they share with the query."""

    def _vector(self, text: str) -> list[float]:
        found = words(text)
        return [1.0 if w in found else 0.0 for w in VOCABULARY] + [0.01]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


def query_of(prompt: str) -> str:
    found = re.findall(r"(?:Query|Question): (.*)", prompt)
    return found[-1].strip() if found else ""


def answering(answer: str) -> Callable[[str], str]:
    def rule(prompt: str) -> str:
        if "Action Input" in prompt:  # a ReAct agent: search, then answer once the tool has replied
            if "two years" in prompt:
                return f"Thought: I can answer without using any more tools.\nAnswer: {answer}"
            return ('Thought: I need to search the terms.\nAction: search_terms\n'
                    f'Action Input: {{"input": "{QUESTION}"}}')
        if "Doc: 9, Relevance: 7" in prompt:  # LLMRerank: keep the documents that say "two years"
            docs = re.findall(r"Document (\d+):\n(.*?)(?=\n\nDocument \d+:|\nQuestion:)", prompt, re.S)
            return "\n".join(f"Doc: {n}, Relevance: 9" for n, text in docs if "two years" in text)
        if "Some choices are given below" in prompt:  # a router's selector: the terms engine
            return json.dumps([{"choice": 1, "reason": "the terms cover the warranty"}])
        if "sub_question" in prompt:  # the sub-question generator
            return "```json\n" + json.dumps([{"sub_question": q, "tool_name": "terms"} for q in SUB]) + "\n```"
        if "Sub question:" in prompt:  # the final synthesis over sub-answers
            return answer
        if query_of(prompt) in SUB:
            return SUB[query_of(prompt)]
        if "standalone question" in prompt.lower():  # condense the conversation into one question
            return "How long is the warranty on the pump from delivery?"
        return answer
    return rule


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(CORPUS, embed_model=KeywordEmbedding())


def engine_from(index, llm, *, k=2, post=()):
    """https://docs.llamaindex.ai/en/stable/module_guides/deploying/query_engine/usage_pattern/ (low level)."""
    return RetrieverQueryEngine.from_args(index.as_retriever(similarity_top_k=k), llm=llm,
                                          node_postprocessors=list(post))


def filtered_all(index, llm):
    """https://docs.llamaindex.ai/en/stable/module_guides/querying/node_postprocessors/node_postprocessors/
    (SimilarityPostprocessor) with a cutoff no node reaches: the engine answers from no context."""
    return engine_from(index, llm, post=[SimilarityPostprocessor(similarity_cutoff=0.99)])


def filtered(index, llm):
    return engine_from(index, llm, k=3, post=[SimilarityPostprocessor(similarity_cutoff=0.4)])


def reranked(index, llm):
    """https://docs.llamaindex.ai/en/stable/examples/node_postprocessor/LLMReranker-Gatsby/"""
    return engine_from(index, llm, k=3, post=[LLMRerank(llm=llm, top_n=2, choice_batch_size=5)])


def sub_question(index, llm):
    """https://docs.llamaindex.ai/en/stable/examples/query_engine/sub_question_query_engine/"""
    tool = QueryEngineTool.from_defaults(index.as_query_engine(llm=llm, similarity_top_k=1), name="terms",
                                         description="The pump's terms and shipping.")
    return SubQuestionQueryEngine.from_defaults(query_engine_tools=[tool], llm=llm,
                                                question_gen=LLMQuestionGenerator.from_defaults(llm=llm))


def router(index, llm):
    """https://docs.llamaindex.ai/en/stable/module_guides/querying/router/"""
    tools = [QueryEngineTool.from_defaults(index.as_query_engine(llm=llm, similarity_top_k=2), name="terms",
                                           description="Warranty and returns terms."),
             QueryEngineTool.from_defaults(index.as_query_engine(llm=llm, similarity_top_k=4), name="all",
                                           description="Everything else.")]
    return RouterQueryEngine(selector=LLMSingleSelector.from_defaults(llm=llm), query_engine_tools=tools, llm=llm)


def fusion(index, llm):
    """https://docs.llamaindex.ai/en/stable/examples/retrievers/reciprocal_rerank_fusion/ : the
    package's BM25 retriever and the vector index fused; retrievers inside a retriever."""
    bm25 = LangragRetriever.from_documents(CORPUS, similarity_top_k=2)
    fused = QueryFusionRetriever([index.as_retriever(similarity_top_k=2), bm25], llm=llm, similarity_top_k=2,
                                 num_queries=1, mode="reciprocal_rerank", use_async=False)
    return RetrieverQueryEngine.from_args(fused, llm=llm)


def condense_question(index, llm):
    """https://docs.llamaindex.ai/en/stable/examples/chat_engine/chat_engine_condense_question/ :
    the second turn is condensed with the history into a standalone question."""
    return index.as_chat_engine(chat_mode="condense_question", llm=llm, similarity_top_k=2)


def condense_plus_context(index, llm):
    """https://docs.llamaindex.ai/en/stable/examples/chat_engine/chat_engine_condense_plus_context/"""
    return index.as_chat_engine(chat_mode="condense_plus_context", llm=llm, similarity_top_k=2)


def react(index, llm):
    """https://docs.llamaindex.ai/en/stable/examples/agent/react_agent/ with a retriever tool."""
    tool = RetrieverTool.from_defaults(index.as_retriever(similarity_top_k=2), name="search_terms",
                                       description="Search the pump's terms.")
    return ReActAgent(tools=[tool], llm=llm, streaming=False)


class RetrieverEvent(Event):
    nodes: list[NodeWithScore]


class RAGWorkflow(Workflow):
    """https://docs.llamaindex.ai/en/stable/examples/workflow/rag/ : the start step reads
    ``ev.get("query")`` and ends the run early without one."""

    def __init__(self, index, llm, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index, self.llm = index, llm

    @step
    async def retrieve(self, ctx: Context, ev: StartEvent) -> RetrieverEvent | None:
        query = ev.get("query")
        if not query:
            return None
        await ctx.store.set("query", query)
        return RetrieverEvent(nodes=await self.index.as_retriever(similarity_top_k=2).aretrieve(query))

    @step
    async def synthesize(self, ctx: Context, ev: RetrieverEvent) -> StopEvent:
        query = await ctx.store.get("query", default=None)
        return StopEvent(result=await CompactAndRefine(llm=self.llm).asynthesize(query, nodes=ev.nodes))


def workflow(index, llm):
    return RAGWorkflow(index, llm, timeout=30)


def ask(app, question: str = QUESTION):
    if hasattr(app, "query"):
        return app.query(question)
    if hasattr(app, "chat"):
        app.chat("Hello, I bought a pump.")  # a first turn, so that the second is condensed
        return app.chat(question)

    async def main():
        return await (app.run(user_msg=question) if isinstance(app, ReActAgent) else app.run(query=question))
    return asyncio.run(main())


SHAPES = {"similarity_filter_dropping_all": filtered_all, "similarity_filter": filtered, "llm_rerank": reranked,
          "sub_question": sub_question, "router": router, "query_fusion": fusion,
          "condense_question_chat": condense_question, "condense_plus_context_chat": condense_plus_context,
          "react_agent": react, "rag_workflow": workflow}
EXPECTED = {"similarity_filter_dropping_all": [], "similarity_filter": ["claims", "warranty"],
            "llm_rerank": ["warranty"], "sub_question": ["seals", "warranty"], "router": ["claims", "warranty"],
            "query_fusion": ["claims", "warranty"], "condense_question_chat": ["claims", "warranty"],
            "condense_plus_context_chat": ["claims", "warranty"], "react_agent": ["claims", "warranty"],
            "rag_workflow": ["claims", "warranty"]}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_capture_is_what_reached_the_answering_prompt(shape, index, pipeline, recwarn) -> None:
    llm = Recording(answering(ANSWER))
    with capturing() as cap:
        ask(SHAPES[shape](index, llm))
    sample = cap.samples[-1]
    oracle = llm.reached(ANSWER, TEXTS)
    assert oracle == EXPECTED[shape], [p for p, _ in llm._seen]
    assert sample.question == QUESTION
    key = {t: i for i, t in TEXTS.items()}
    assert sorted(key[d.text] for d in sample.contexts) == oracle  # each once: nothing dropped, nothing extra
    assert all(d.metadata["source"] == f"{key[d.text]}.md" and d.id == key[d.text] for d in sample.contexts)
    assert not [w for w in recwarn if "captured sample" in str(w.message)] and sample.capture_note is None
    if shape == "similarity_filter_dropping_all":
        assert sample.answer == "Empty Response" and not llm._seen
        pipeline.vrag(sample, "two years")
        return
    assert sample.answer == ANSWER
    if shape == "sub_question":  # the sub-answers reached the final prompt as the app's own text
        assert sample.generated == [SUB[q] for q in SUB] or sorted(sample.generated) == sorted(SUB.values())
    elif shape == "condense_question_chat":
        assert sample.generated == ["How long is the warranty on the pump from delivery?"]
    else:
        assert sample.generated == []

    pipeline.vrag(sample, "two years")
    pipeline.thelma(sample)
    judge = pipeline.judge()
    variants = {"a": SHAPES[shape](index, Recording(answering(ANSWER))),
                "b": SHAPES[shape](index, Recording(answering("The warranty on the pump lasts two years.")))}
    result = tournament_from_query_engines(variants, [QUESTION], Judge(judge), TournamentConfig(tournaments=5, n_boot=0))
    pipeline.tournament(result, judge, queries=1, documents=sorted(TEXTS[i] for i in oracle))


def test_a_workflow_started_with_the_wrong_keyword_fails_once_and_fast(index) -> None:
    llm = Recording(answering(ANSWER))
    began = time.monotonic()
    with pytest.raises(ConfigError, match=r"app 'rag' failed on the first query .*start='query'"):
        tournament_from_query_engines({"rag": RAGWorkflow(index, llm, timeout=60)}, ["q one?", "q two?", "q three?"],
                                      Judge(llm), start="user_msg", timeout=1.0)
    assert time.monotonic() - began < 10 and not llm._seen


def test_capture_is_context_local(index) -> None:
    """Two captures in two threads at once each see their own calls; outside a block nothing is kept,
    and after it nothing stays registered on LlamaIndex's root dispatcher."""
    from concurrent.futures import ThreadPoolExecutor

    from llama_index.core.instrumentation import get_dispatcher

    def one(question: str):
        with capturing() as cap:
            engine_from(index, Recording(answering(ANSWER)), k=1).query(question)
        return cap.samples

    def registered() -> tuple[list[int], list[int]]:
        root = get_dispatcher()
        return [id(h) for h in root.event_handlers], [id(h) for h in root.span_handlers]

    before = registered()
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(one, ["When do spare seals ship?", "How much power does the pump draw?"]))
    assert [[(s.question, [d.metadata["source"][:-3] for d in s.contexts]) for s in samples] for samples in got] == [
        [("When do spare seals ship?", ["seals"])], [("How much power does the pump draw?", ["power"])]]
    with capturing() as cap:
        assert registered() != before and id(cap) in registered()[0]
    assert registered() == before  # the block's handlers only, gone with it


def test_sub_answers_are_judged_only_when_asked(index) -> None:
    with capturing(include_generated=True) as cap:
        ask(sub_question(index, Recording(answering(ANSWER))))
    (sample,) = cap.samples
    texts = [d.text for d in sample.contexts]
    assert sorted(texts[:2]) == sorted([TEXTS["seals"], TEXTS["warranty"]])
    assert sorted(texts[2:]) == sorted(SUB.values()) == sorted(sample.generated)
