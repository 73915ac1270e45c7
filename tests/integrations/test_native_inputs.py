"""Framework-native inputs read by type: a string of context is one document (never one per
character), framework documents, nodes and Responses keep their ids and metadata, and framework
prompt objects become judge templates (translated, or refused naming the variables available)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain_classic")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document as LCDocument
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.prompts import PromptTemplate as LCPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_langrag import LangragPairwiseEvaluator, LangragStringEvaluator, tournament_from_runnables
from llama_index.core.base.response.schema import Response
from llama_index.core.prompts import PromptTemplate as LIPromptTemplate
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.evaluation.langrag import LangragEvaluator

from langrag_eval.types import as_documents, as_text
from langrag_eval.errors import ConfigError, PromptError
from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.tournament import PairwiseEvaluator, TournamentConfig

RELEVANCE = "You annotate search results"
JUDGE = {RELEVANCE: 'Useful.\n{"reason": "on topic", "relevance": 2}', "": "A is better.\n[[A]]"}


def relevance_prompts(model: ScriptedModel) -> list[str]:
    return [p for p in model.prompts if p.startswith(RELEVANCE)]


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1).filter(str.strip))
def test_one_string_is_one_document(text: str) -> None:
    docs = as_documents(text)
    assert [d.text for d in docs] == [text]
    assert as_documents([text, text]) == docs * 2


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1).filter(str.strip), st.text(min_size=1, max_size=8)),
                max_size=6))
def test_framework_documents_keep_ids_and_metadata(items) -> None:
    lc = [LCDocument(page_content=t, id=f"lc-{i}", metadata={"source": s}) for i, (t, s) in enumerate(items)]
    li = [NodeWithScore(node=TextNode(text=t, id_=f"li-{i}", metadata={"source": s}), score=0.5)
          for i, (t, s) in enumerate(items)]
    for got, prefix in ((as_documents(lc), "lc"), (as_documents(li), "li")):
        assert [(d.id, d.text, d.metadata["source"]) for d in got] == [
            (f"{prefix}-{i}", t, s) for i, (t, s) in enumerate(items)]
    assert all(d.score == 0.5 for d in as_documents(li))
    response = Response(response="Paris", source_nodes=li)
    assert as_documents(response) == as_documents(li) and as_text(response) == "Paris"


def test_one_node_alone_is_one_document() -> None:
    node = TextNode(text="Paris is in France.", id_="n1")
    assert [(d.id, d.text) for d in as_documents(node)] == [("n1", "Paris is in France.")]


def test_text_of_framework_values() -> None:
    """One reader of text for the core and both adapters: strict for an answer, lenient (``str``)
    for a value a framework handed over in a shape of its own."""
    from langchain_core.messages import AIMessage
    from llama_index.core.schema import QueryBundle
    assert as_text(QueryBundle(query_str="Capital?")) == "Capital?"
    assert as_text(AIMessage(content=[{"type": "text", "text": "Par"}, {"type": "text", "text": "is"}])) == "Paris"
    with pytest.raises(ConfigError, match="answer is a dict"):
        as_text({"a": 1})
    assert as_text({"a": 1}, strict=False) == "{'a': 1}" and as_text(None, strict=False) is None


def test_unreadable_contexts_are_refused_naming_the_item() -> None:
    with pytest.raises(ConfigError, match=r"contexts\[1\] is a int"):
        as_documents(["fine", 3])
    with pytest.raises(ConfigError, match="contexts is a int"):
        as_documents(7)


def test_string_returning_runnables_in_a_tournament_judge_no_characters() -> None:
    model = ScriptedModel(JUDGE)
    apps = {"short": RunnableLambda(lambda q: f"Short answer to {q}"),
            "long": RunnableLambda(lambda q: f"A much longer answer to {q}")}
    result = tournament_from_runnables(apps, ["Capital of France?", "Capital of Peru?"], Judge(model),
                                       TournamentConfig(tournaments=5, n_boot=0))
    assert relevance_prompts(model) == []  # a string output is an answer without contexts
    assert model.calls == 2 * 2  # two queries, one game each, played in both orders
    assert len(result.games) == 2 and result.relevance == {}


def test_dict_outputs_with_a_context_string_pool_one_document_per_app() -> None:
    model = ScriptedModel(JUDGE)
    apps = {"a": RunnableLambda(lambda q: {"answer": "Lima.", "context": "Lima is the capital of Peru."}),
            "b": RunnableLambda(lambda q: {"answer": "Cusco.", "context": [LCDocument(
                page_content="Cusco was the Inca capital.", id="cusco")]})}
    tournament_from_runnables(apps, ["Capital of Peru?"], Judge(model), TournamentConfig(tournaments=5, n_boot=0))
    judged = relevance_prompts(model)
    assert len(judged) == 2 and model.calls == 4
    assert any("Lima is the capital of Peru." in p for p in judged)


def test_langchain_pairwise_with_one_context_string() -> None:
    model = ScriptedModel(JUDGE)
    ev = LangragPairwiseEvaluator(PairwiseEvaluator(Judge(model)))
    r = ev.evaluate_string_pairs(prediction="Paris", prediction_b="Lyon", input="Capital of France?",
                                 contexts="Paris is the capital of France.", contexts_b=None)
    assert r["score"] == 0.5 and r["verdicts"] == ["A", "A"]
    assert len(relevance_prompts(model)) == 1 and model.calls == 3


def test_llamaindex_pairwise_takes_response_objects() -> None:
    model = ScriptedModel(JUDGE)
    ev = LangragEvaluator(PairwiseEvaluator(Judge(model)))
    first = Response(response="Paris.", source_nodes=[
        NodeWithScore(node=TextNode(text="Paris is the capital of France.", id_="n1"), score=0.9)])
    second = Response(response="Lyon.", source_nodes=[
        NodeWithScore(node=TextNode(text="Lyon is a city in France.", id_="n2"), score=0.4)])
    r = ev.evaluate_response(query="Capital of France?", response=first, second_response=second)
    assert not r.invalid_result and r.score == 0.5
    judged = relevance_prompts(model)
    assert len(judged) == 2 and any("Lyon is a city" in p for p in judged)
    assert r.contexts == ["Paris is the capital of France.", "Lyon is a city in France."]


VRAG = {"<answer>\nParis": "Score: [[5]], Reason: [[Right.]]", "": "Score: [[1]], Reason: [[Wrong.]]"}


def test_llamaindex_update_prompts_translates_format_fields() -> None:
    model = ScriptedModel(VRAG)
    ev = LangragEvaluator(VragGrader(Judge(model)), score="grade")
    ev.update_prompts({"grade": LIPromptTemplate(
        "Question: {question}\nLabel: {label}\n<answer>\n{answer}\n</answer>\nScore: [[n]], Reason: [[...]]")})
    r = ev.evaluate(query="Capital of France?", response="Paris", reference="Paris")
    assert r.score == 5.0
    assert model.prompts[0].startswith("Question: Capital of France?\nLabel: Paris\n")
    assert "{question}" not in model.prompts[0]
    with pytest.raises(PromptError, match="query_str.*available: answer, confidence, examples, label"):
        ev.update_prompts({"grade": LIPromptTemplate("{query_str} {answer} {label}")})


def LCVrag(judge: Judge, **options) -> LangragStringEvaluator:  # noqa: N802 - reads as the evaluator it builds
    return LangragStringEvaluator(VragGrader(judge, **options))


def test_langchain_prompt_objects_and_inline_text_as_templates() -> None:
    model = ScriptedModel(VRAG)
    lc = LCPromptTemplate.from_template("Q {question}\n<answer>\n{answer}\n</answer>\nlabel {label}")
    r = LCVrag(Judge(model), prompt=lc).evaluate_strings(
        prediction="Paris", reference="Paris", input="Capital?")
    assert r["raw_score"] == 5 and model.prompts[-1].startswith("Q Capital?\n<answer>\nParis")
    jinja = LCPromptTemplate.from_template("{{ question }}|{{ answer }}|{{ label }}", template_format="jinja2")
    LCVrag(Judge(model), prompt=jinja).evaluate_strings(
        prediction="Lyon", reference="Paris", input="Capital?")
    assert model.prompts[-1] == "Capital?|Lyon|Paris"
    inline = "Grade {{ answer }} against {{ label }}"
    LCVrag(Judge(model), prompt=inline).evaluate_strings(
        prediction="Lyon", reference="Paris", input="Capital?")
    assert model.prompts[-1] == "Grade Lyon against Paris"
    with pytest.raises(PromptError, match="chat prompt"):
        LCVrag(Judge(model), prompt=ChatPromptTemplate.from_messages([("human", "{answer}")]))
    with pytest.raises(ConfigError, match="must use the variable 'answer'"):
        LCVrag(Judge(model), prompt="Only {{ label }} here")
    with pytest.raises(PromptError, match="no prompt named 'vrag/missing'"):
        LCVrag(Judge(model), prompt="vrag/missing")
