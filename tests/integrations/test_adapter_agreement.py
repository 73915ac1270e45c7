"""The two framework adapters agree: the same sample and the same judge reply give the same vRAG-Eval
grade and normalised score, the same THELMA scores, mean and comments, the same tournament score and
the same document ids, from LangChain's and LlamaIndex's evaluators alike. Judges are the frameworks'
own fakes where a fixed reply will do (LangChain ``FakeListChatModel``, LlamaIndex ``MockLLM``); the
THELMA script, which answers by prompt, is the core's scripted model behind both."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain_classic")
pytest.importorskip("llama_index.core")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LCDocument
from langchain_core.language_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_langrag import LangChainJudge, LangragPairwiseEvaluator, LangragStringEvaluator, as_judge as lc_judge
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.callbacks import CallbackManager, CBEventType, EventPayload, LlamaDebugHandler
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.evaluation.langrag import LangragEvaluator, LlamaIndexJudge, as_judge as li_judge
from pydantic import PrivateAttr

from llama_index.core.llms.callbacks import llm_completion_callback

from langrag_eval.types import as_documents
from langrag_eval.types import text_id
from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval import Sample
from langrag_eval.grading import VragGrader
from langrag_eval.thelma import METRICS, Thelma
from langrag_eval.tournament import PairwiseEvaluator

QUESTION, LABEL, ANSWER = "Which table stores invoice lines?", "invoice_items", "The invoice_items table."


class RepliesLLM(MockLLM):
    """LlamaIndex's ``MockLLM`` answering from a list of replies (in turn) instead of echoing."""

    _replies: Any = PrivateAttr()

    @llm_completion_callback()   # as LlamaIndex's docs write a CustomLLM: the call is an LLM event
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=next(self._replies))


def LCVrag(judge: Any, **options: Any) -> LangragStringEvaluator:  # noqa: N802 - reads as the evaluator it builds
    return LangragStringEvaluator(VragGrader(lc_judge(judge), **options))


def replies_llm(replies: list[str]) -> RepliesLLM:
    llm = RepliesLLM()
    llm._replies = itertools.cycle(replies)
    return llm


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(grade=st.integers(1, 5), threshold=st.integers(1, 5),
       reason=st.text(st.characters(whitelist_categories=("L", "N", "Zs")), min_size=1, max_size=40)
       .filter(lambda r: r.strip()))
def test_vrag_grade_and_normalised_score_agree(grade: int, threshold: int, reason: str) -> None:
    reply = f"Score: [[{grade}]], Reason: [[{reason}]]"
    lc = LCVrag(FakeListChatModel(responses=[reply]), threshold=threshold).evaluate_strings(
        prediction=ANSWER, reference=LABEL, input=QUESTION)
    li = LangragEvaluator(VragGrader(li_judge(replies_llm([reply])), threshold=threshold), score="grade").evaluate(
        query=QUESTION, response=ANSWER, reference=LABEL)
    assert lc["grade"] == li.scores["grade"] == grade and li.score == float(grade)    # LlamaIndex: 1-5
    assert lc["normalised"] == li.result.normalised == lc["score"] == (grade - 1) / 4  # LangChain: 0-1
    assert (lc["value"] == "accept") == li.passing == (grade >= threshold)
    assert lc["reasoning"] == li.feedback
    # LangChain's grade is LlamaIndex's score, LlamaIndex's 0-1 scale LangChain's score
    li_unit = LangragEvaluator(VragGrader(li_judge(replies_llm([reply]))), score="grade", normalise=True).evaluate(
        query=QUESTION, response=ANSWER, reference=LABEL)
    assert lc["grade"] == li.score and li_unit.score == lc["score"]


def test_vrag_unscored_agrees() -> None:
    lc = LCVrag(FakeListChatModel(responses=["no verdict", "none"])).evaluate_strings(
        prediction=ANSWER, reference=LABEL, input=QUESTION)
    li = LangragEvaluator(VragGrader(li_judge(replies_llm(["no verdict", "none"]))), score="grade").evaluate(
        query=QUESTION, response=ANSWER, reference=LABEL)
    assert lc["score"] is lc["grade"] is lc["normalised"] is None and lc["unscored"] == "unparseable"
    assert li.invalid_result and li.score is li.scores["grade"] is None
    assert li.invalid_reason == lc["reasoning"] and lc["reasoning"].startswith("unparseable: ")


WORDS = ["Ada", "1815", "born", "program", "horses", "Paris"]
SOURCES = ["Ada was born in 1815.", "Ada wrote the first program.", "Paris is in France."]


def script_from(words: frozenset[str]) -> ThelmaScript:
    """A judge that says 1 to a component (a source, fact, claim, sub-question) naming any of ``words``."""
    def hit(at: int | None):
        return lambda key: int(any(w in str(key if at is None else key[at]) for w in words))
    return ThelmaScript(questions={"When was Ada born and what did she write?":
                                   ["When was Ada born?", "What did Ada write?"]},
                        source=hit(1), essential=hit(1), supported=hit(0), addresses=hit(0), answers=hit(None))


class FirstWord:
    """Sentences with the same first word embed identically (a deterministic self-distinctness)."""

    model_id, dimension = "first-word", 2

    def embed(self, texts):
        import numpy as np
        return np.array([[float(t.split()[0] == "Ada"), float(t.split()[0] != "Ada")] for t in texts],
                        dtype=np.float32)


@settings(max_examples=25, deadline=None)
@given(words=st.frozensets(st.sampled_from(WORDS)), n_sources=st.integers(0, 3),
       response=st.sampled_from(["Ada was born in 1815. Ada liked horses.", "Ada wrote the first program.",
                                 "", "Paris is in France. Paris is in France."]))
def test_thelma_scores_mean_and_comments_agree(words: frozenset[str], n_sources: int, response: str) -> None:
    query, sources = "When was Ada born and what did she write?", SOURCES[:n_sources]
    judge = lambda: Judge(script_from(words).model())  # noqa: E731
    core = Thelma(judge(), embedder=FirstWord()).evaluate(Sample(question=query, contexts=sources,
                                                                       answer=response))
    lc = LangragStringEvaluator(Thelma(judge(), embedder=FirstWord())).evaluate_strings(
        prediction=response, input=query, contexts=[LCDocument(page_content=s) for s in sources])
    li_eval = LangragEvaluator(Thelma(judge(), embedder=FirstWord()))
    li = li_eval.evaluate(query=query, response=response, contexts=sources)
    assert lc["metrics"] == li.result.score_values() == li.scores == core.score_values()
    assert lc["score"] == core.mean() and lc["reasoning"] == core.feedback()
    if core.mean() is None:
        assert li.invalid_result and li.invalid_reason == core.feedback()
    else:
        assert li.score == core.mean() and li.feedback == core.feedback()
        assert li.passing == core.passes(li_eval.evaluator.thresholds)
    for metric in METRICS:
        one_lc = LangragStringEvaluator(Thelma(judge(), metrics=(metric,), embedder=FirstWord()),
                                        score=metric).evaluate_strings(
            prediction=response, input=query, contexts=sources)
        one_li = LangragEvaluator(Thelma(judge(), metrics=(metric,), embedder=FirstWord()), score=metric).evaluate(
            query=query, response=response, contexts=sources)
        assert one_lc["score"] == core.score(metric) == one_li.score
        assert one_lc["reasoning"] == core.comment(metric) == (one_li.feedback or one_li.invalid_reason)


def test_thelma_comment_counts_components() -> None:
    result = Thelma(Judge(script_from(frozenset({"1815"})).model()), metrics=("gr", "rp")).evaluate(
        Sample(question="When was Ada born?", contexts=SOURCES[:1], answer="Ada was born in 1815. Ada sang."))
    assert result.comment("gr") == "groundedness: 1 of 2 components matched"
    assert result.mean() == pytest.approx((result.score("gr") + result.score("rp")) / 2)


def test_tournament_game_agrees() -> None:
    judge = {"<answer_a>": "A is better.\n[[A]]", "": '{"reason": "on topic", "relevance": 2}'}
    docs = [LCDocument(page_content="Invoice lines live in invoice_items."), "Disputes are filed in disputes."]
    lc = LangragPairwiseEvaluator(PairwiseEvaluator(Judge(ScriptedModel(judge)))).evaluate_string_pairs(
        prediction="invoice_items", prediction_b="I cannot say", input=QUESTION, contexts=docs[:1],
        contexts_b=docs[1:])
    li = LangragEvaluator(PairwiseEvaluator(Judge(ScriptedModel(judge)))).evaluate(
        query=QUESTION, response="invoice_items", contexts=docs[:1], second_response="I cannot say",
        second_contexts=docs[1:])
    assert lc["score"] == li.score == 0.5 and lc["verdicts"] == ["A", "A"]  # [[A]] both ways: a tie
    assert lc["reasoning"] == li.feedback and li.pairwise_source == "neither"
    # both pooled the two sides' documents and showed each (relevance 2) to the judge
    assert sorted(lc["documents"]) == sorted(d.id for d in as_documents(docs)) and lc["dropped_documents"] == 0
    assert sorted(li.contexts) == sorted(d.text for d in as_documents(docs))


@given(text=st.text(min_size=1).filter(str.strip), ident=st.text(min_size=1, max_size=12).filter(str.strip))
def test_one_document_identity(text: str, ident: str) -> None:
    """A document without an id is known by its text's digest, in whatever shape it arrives; one
    with an id keeps it (LangChain's ``Document.id``, LlamaIndex's ``node_id``, a dict's ``id``)."""
    unnamed = [text, {"text": text}, {"page_content": text}, LCDocument(page_content=text)]
    assert {as_documents(u)[0].id for u in unnamed} == {text_id(text)}
    named = [LCDocument(page_content=text, id=ident), LCDocument(page_content=text, metadata={"id": ident}),
             TextNode(id_=ident, text=text), NodeWithScore(node=TextNode(id_=ident, text=text), score=1.0),
             {"text": text, "id": ident}]
    assert {as_documents(n)[0].id for n in named} == {ident}


class _Params(BaseCallbackHandler):
    def __init__(self) -> None:
        self.params: list[dict[str, Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.params.append(kwargs.get("invocation_params", {}))


def test_both_judges_pass_the_judges_settings_by_default() -> None:
    """One name and one default: ``pass_params=True`` sends the judge's temperature with each call
    (the grader's 0, whatever the model was built with)."""
    seen = _Params()
    lc_model = GenericFakeChatModel(messages=iter([AIMessage(content="Score: [[5]], Reason: [[ok]]")]),
                                    callbacks=[seen])
    LCVrag(Judge(LangChainJudge(lc_model))).evaluate_strings(
        prediction=ANSWER, reference=LABEL, input=QUESTION)
    assert seen.params[0]["temperature"] == 0.0
    debug = LlamaDebugHandler()
    li_model = replies_llm(["Score: [[5]], Reason: [[ok]]"])
    li_model.callback_manager = CallbackManager([debug])
    LangragEvaluator(VragGrader(Judge(LlamaIndexJudge(li_model)))).evaluate(query=QUESTION, response=ANSWER,
                                                                          reference=LABEL)
    start, _ = debug.get_event_pairs(CBEventType.LLM)[0]
    assert start.payload[EventPayload.ADDITIONAL_KWARGS]["temperature"] == 0.0
    assert LangChainJudge(lc_model).pass_params and LlamaIndexJudge(li_model).pass_params


def test_old_names_are_gone() -> None:
    """The package is unreleased: renamed names were removed, not kept as shims."""
    import langchain_langrag
    import llama_index.evaluation.langrag as li

    with pytest.raises(TypeError):
        LangChainJudge(FakeListChatModel(responses=["x"]), bind_params=False)  # type: ignore[call-arg]
    for old in ("ragelo_comparative_evaluator", "VragStringEvaluator", "ThelmaStringEvaluator", "RAGEloPairwiseEvaluator",
                "vrag_langsmith_evaluator", "thelma_langsmith_evaluator", "ragelo_langsmith_evaluator"):
        assert not hasattr(langchain_langrag, old)
    for old in ("GroundednessEvaluator", "ThelmaMetricEvaluator", "SourcePrecisionEvaluator", "VragEvaluator",
                "VragResult", "ThelmaEvaluator", "RAGEloPairwiseEvaluator"):
        assert not hasattr(li, old)