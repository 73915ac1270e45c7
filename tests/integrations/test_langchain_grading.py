"""vRAG-Eval in LangChain: the classic StringEvaluator, and the LangSmith evaluator function inside
``langsmith.evaluate`` (offline client, no network) on an LCEL RAG chain built here."""

from __future__ import annotations

import uuid
import warnings
from operator import itemgetter

import pytest

pytest.importorskip("langchain_classic")
pytest.importorskip("langsmith")

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnableParallel
from langchain_langrag import LangChainJudge, LangragStringEvaluator, as_judge, langsmith_evaluator
from langsmith import Client, aevaluate, evaluate
from langsmith.schemas import Example

from langrag_eval.errors import ConfigError
from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel

DOCS = [Document(page_content="Invoice lines are stored in the invoice_items table."),
        Document(page_content="Refund disputes are filed in the disputes table."),
        Document(page_content="Card tokens live in the token_vault table.")]


class KeywordRetriever(BaseRetriever):
    docs: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        words = {w.strip("?.,").lower() for w in query.split()}
        return [d for d in self.docs if words & {w.strip(".").lower() for w in d.page_content.split()}][:2]


def rag_chain(answers: list[str]):
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    app_llm = FakeListChatModel(responses=answers)
    fmt = RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs))
    return itemgetter("question") | RunnableParallel(
        context=KeywordRetriever(docs=DOCS), question=lambda q: q
    ).assign(answer=(lambda x: {"context": fmt.invoke(x["context"]), "question": x["question"]})
             | prompt | app_llm | StrOutputParser())


# the judge grades by which answer it sees in the prompt
JUDGE = ScriptedModel({
    "invoice_items table": "Score: [[5]], Reason: [[Names the table in the Label.]]",
    "I cannot tell": "Score: [[2]], Reason: [[Honestly says it cannot answer.]]",
    "payments table": "The answer is off. Score: [[1]], Reason: [[Contradicts the Label.]]",
})


def test_string_evaluator_contract_and_result_keys() -> None:
    ev = LangragStringEvaluator(VragGrader(Judge(JUDGE)))
    assert ev.requires_reference and ev.requires_input and ev.evaluation_name == "vrag"
    r = ev.evaluate_strings(prediction="They are in the invoice_items table.", reference="invoice_items",
                            input="Where are invoice lines?")
    assert r == {"score": 1.0, "grade": 5, "normalised": 1.0, "raw_score": 5, "value": "accept",
                 "reasoning": "Names the table in the Label.", "scores": {"accept_rate": 1.0, "grade": 5.0}}
    r = ev.evaluate_strings(prediction="I cannot tell from the context.", reference="invoice_items",
                            input="Where are invoice lines?")
    assert (r["score"], r["grade"], r["normalised"], r["value"]) == (0.25, 2, 0.25, "reject")
    assert r["scores"] == {"accept_rate": 0.0, "grade": 2.0}   # each score on its own scale
    accepted = LangragStringEvaluator(VragGrader(Judge(JUDGE)), score="accept_rate").evaluate_strings(
        prediction="I cannot tell from the context.", reference="invoice_items", input="Where are invoice lines?")
    assert (accepted["score"], accepted["grade"]) == (0.0, 2)
    with pytest.raises(ValueError, match="requires a reference"):
        ev.evaluate_strings(prediction="x", input="q")
    with pytest.raises(ValueError, match="requires an input"):
        ev.evaluate_strings(prediction="x", reference="y")


async def test_unscored_has_score_none_and_the_reason() -> None:
    model = ScriptedModel(["no verdict here", "still none"])
    ev = LangragStringEvaluator(VragGrader(Judge(model)))
    r = await ev.aevaluate_strings(prediction="", reference="label", input="q")
    assert r["score"] is None and r["value"] is None and r["unscored"] == "invalid_input"
    assert "answer" in r["reasoning"] and model.calls == 0
    r = await ev.aevaluate_strings(prediction="an answer", reference="label", input="q")
    assert r["score"] is None and r["unscored"] == "unparseable" and model.calls == 2


def test_accepts_a_langchain_chat_model_and_options() -> None:
    chat = FakeListChatModel(responses=["Score: [[3]], Confidence: [[55]], Reason: [[Partly.]]"])
    ev = LangragStringEvaluator(VragGrader(as_judge(chat), confidence=True, threshold=3))
    assert isinstance(ev.evaluator.judge.model, LangChainJudge)
    r = ev.evaluate_strings(prediction="a", reference="b", input="c")
    assert (r["raw_score"], r["value"], r["confidence"]) == (3, "accept", 55)
    assert as_judge(LangChainJudge(chat)).model_id.startswith("langchain:")
    with pytest.raises(ConfigError):
        as_judge("gpt-4o")  # type: ignore[arg-type]


def examples() -> list[Example]:
    rows = [("Where are invoice lines stored?", "invoice_items"),
            ("Where are refund disputes filed?", "disputes"),
            ("Where do card tokens live?", "token_vault")]
    return [Example(id=uuid.uuid4(), inputs={"question": q}, outputs={"answer": a}) for q, a in rows]


def offline_client() -> Client:
    return Client(api_key="offline", auto_batch_tracing=False, tracing_sampling_rate=0.0)


def test_langsmith_evaluate_offline_on_an_lcel_rag_chain() -> None:
    chain = rag_chain(["They are in the invoice_items table.", "I cannot tell from the context.",
                       "Tokens are kept in the payments table."])
    judge = Judge(ScriptedModel(JUDGE.replies))
    vrag = langsmith_evaluator(VragGrader(judge))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = evaluate(chain, data=examples(), evaluators=[vrag], upload_results=False,
                           client=offline_client(), max_concurrency=0)
    rows = list(results)
    assert len(rows) == 3
    by_question = {}
    for row in rows:
        outputs = row["run"].outputs
        assert [d.page_content for d in outputs["context"]]  # the chain exposes what it retrieved
        got = {r.key: r for r in row["evaluation_results"]["results"]}
        by_question[row["example"].inputs["question"]] = (got["vrag"].score, got["vrag"].value,
                                                          got["vrag_raw_score"].score)
    assert by_question == {"Where are invoice lines stored?": (1.0, "accept", 5),
                           "Where are refund disputes filed?": (0.25, "reject", 2),
                           "Where do card tokens live?": (0.0, "reject", 1)}
    # the judge saw each answer, question and label inside its own block
    prompts = judge.model.prompts
    assert len(prompts) == 3
    assert any("<label>\ninvoice_items\n</label>" in p and "<answer>\nThey are in the invoice_items" in p
               for p in prompts)


async def test_langsmith_aevaluate_offline_with_the_async_evaluator() -> None:
    chain = rag_chain(["They are in the invoice_items table."])
    vrag = langsmith_evaluator(VragGrader(Judge(ScriptedModel(JUDGE.replies))), asynchronous=True, key="grade")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = await aevaluate(chain, data=examples()[:1], evaluators=[vrag], upload_results=False,
                                  client=offline_client())
        rows = [row async for row in results]
    (main, raw) = rows[0]["evaluation_results"]["results"]
    assert (main.key, main.score, main.value, raw.key, raw.score) == ("grade", 1.0, "accept", "grade_raw_score", 5)


def test_langsmith_evaluator_reports_unscored_and_reads_other_keys() -> None:
    model = ScriptedModel(["Score: [[4]], Confidence: [[90]], Reason: [[ok]]"])
    vrag = langsmith_evaluator(VragGrader(Judge(model), confidence=True))
    r = vrag(inputs={"query": "q"}, outputs={"output": "an answer"}, reference_outputs={"expected": "label"})
    assert r["results"][0]["score"] == 0.75 and r["results"][0]["metadata"] == {"confidence": 90}
    r = vrag(inputs={"question": "q"}, outputs={"answer": ""}, reference_outputs={"answer": "label"})
    main = r["results"][0]
    assert main["score"] is None and main["metadata"] == {"unscored": "invalid_input"}
    assert "answer" in main["comment"]
    custom = langsmith_evaluator(VragGrader(Judge(model)), question_key="q", answer_key="a", label_key="gold")
    r = custom(inputs={"q": "?", "question": "no"}, outputs={"a": "x"}, reference_outputs={"gold": "y"})
    assert r["results"][1]["score"] == 4
    assert custom.__name__ == "vrag"
