"""Capturing (question, contexts, answer) from an unmodified LCEL app: per-call callbacks, the
context-variable hook (no change to call sites), async, concurrent runs, nested retrievers and a run
that raises. The captured samples feed THELMA directly."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_langrag import RAGCapture, capturing

from langrag_eval.adapters.contexts import CaptureWarning
from langrag_eval.runtime import Judge
from langrag_eval.testing import ThelmaScript
from langrag_eval.thelma import Thelma

DOCS = [Document(page_content="Paris is the capital of France."),
        Document(page_content="France is known for its wine."),
        Document(page_content="Rome is the capital of Italy.")]


class KeywordRetriever(BaseRetriever):
    docs: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        words = {w.strip("?.,").lower() for w in query.split()}
        return [d for d in self.docs if words & {w.strip(".").lower() for w in d.page_content.split()}]


def app(answers):
    """A typical LCEL RAG app whose output is only the answer string: the contexts are not exposed."""
    fmt = RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs))
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    return ({"context": KeywordRetriever(docs=DOCS) | fmt, "question": RunnablePassthrough()}
            | prompt | FakeListChatModel(responses=answers) | StrOutputParser())


def test_callback_handler_per_call():
    cap = RAGCapture()
    out = app(["Paris."]).invoke("What is the capital of France?", config={"callbacks": [cap]})
    assert out == "Paris."
    (s,) = cap.samples
    assert s.question == "What is the capital of France?" and s.answer == "Paris."
    assert [d.text for d in s.contexts] == [d.page_content for d in DOCS]      # 'capital' and 'france' both hit
    assert s.id


def test_context_variable_hook_leaves_call_sites_alone():
    chain = app(["Rome.", "Paris."])
    with capturing() as cap:
        chain.invoke("capital of Italy?")
        chain.invoke("wine?")
    chain.invoke("outside the block")                      # not captured
    assert [(s.question, s.answer) for s in cap.samples] == [("capital of Italy?", "Rome."), ("wine?", "Paris.")]
    assert [d.text for d in cap.samples[1].contexts] == ["France is known for its wine."]
    assert len(cap.samples) == 2


async def test_async_and_concurrent_runs_stay_apart():
    chain = app(["A.", "B.", "C."])
    with capturing() as cap:
        await asyncio.gather(chain.ainvoke("Paris?"), chain.ainvoke("Rome?"), chain.ainvoke("wine?"))
    by_query = {s.question: s for s in cap.samples}
    assert set(by_query) == {"Paris?", "Rome?", "wine?"}
    assert [d.text for d in by_query["Rome?"].contexts] == ["Rome is the capital of Italy."]
    assert [d.text for d in by_query["wine?"].contexts] == ["France is known for its wine."]


def test_dict_input_two_retrievers_and_errors():
    r = KeywordRetriever(docs=DOCS)
    both = RunnableLambda(lambda x: x["question"]) | {"a": r, "b": r} | RunnableLambda(
        lambda d: {"answer": f"{len(d['a']) + len(d['b'])} docs"})
    boom = RunnableLambda(lambda x: 1 / 0)
    with capturing() as cap, pytest.warns(CaptureWarning, match="no model call was seen"):
        both.invoke({"question": "Rome?"})
        with pytest.raises(ZeroDivisionError):
            boom.invoke("x")
    (s,) = cap.samples
    # no model call to read a prompt from: both retrievals' documents, the same one listed once, and
    # the sample says the contexts were not checked against a prompt
    assert s.question == "Rome?" and s.answer == "2 docs" and [d.text for d in s.contexts] == [DOCS[2].page_content]
    assert "no model call" in s.capture_note and cap.errors == 1


async def test_captured_samples_feed_thelma():
    with capturing() as cap:
        app(["Paris is the capital of France."]).invoke("What is the capital of France?")
    script = ThelmaScript(supported=lambda key: int(key[0] in " ".join(key[1])), default=1)
    result = await Thelma(Judge(script.model()), metrics=("gr", "sp1")).aevaluate(cap.samples[0])
    assert result.score("gr") == 1.0 and result.score("sp1") == 1.0


def test_a_shape_that_leaves_the_contexts_open_says_so_once_per_run():
    """An app that rewrites its documents before the prompt: no retrieved text reaches it, so the
    contexts are empty and every sample says why, with one warning for the run."""
    fmt = RunnableLambda(lambda docs: "\n".join(d.page_content[:12].upper() for d in docs))
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    chain = ({"context": KeywordRetriever(docs=DOCS) | fmt, "question": RunnablePassthrough()}
             | prompt | FakeListChatModel(responses=["Paris.", "Rome."]) | StrOutputParser())
    with pytest.warns(CaptureWarning) as warned, capturing() as cap:
        chain.invoke("capital of France?")
        chain.invoke("capital of Italy?")
    assert len([w for w in warned if issubclass(w.category, CaptureWarning)]) == 1
    assert [s.contexts for s in cap.samples] == [[], []]
    assert all("none of the" in s.capture_note and "rewrote them" in s.capture_note for s in cap.samples)
