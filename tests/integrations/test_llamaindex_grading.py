"""vRAG-Eval in LlamaIndex: the one BaseEvaluator wrapping VragGrader, on a real query engine's response (VectorStoreIndex with
MockEmbedding, scripted CustomLLM), inside BatchEvalRunner, prompts get/update, Unscored results."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.evaluation import BatchEvalRunner
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.prompts import PromptTemplate as LIPromptTemplate
from llama_index.evaluation.langrag import LangragEvaluator, LlamaIndexJudge, as_judge
from llama_index.evaluation.langrag.models import resolve

from langrag_eval.errors import ConfigError
from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel


def vrag(judge, *, normalise: bool = False, **options: Any) -> LangragEvaluator:
    """vRAG-Eval's grade as the score: 1-5 (as LlamaIndex's CorrectnessEvaluator), or 0-1."""
    return LangragEvaluator(VragGrader(as_judge(judge), **options), score="grade", normalise=normalise)


class ScriptedLLM(CustomLLM):
    """Replies with the value of the first key found in the prompt; records prompts."""

    replies: dict[str, str]
    seen: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted-li")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.seen.append(prompt)
        for key, reply in self.replies.items():
            if key in prompt:
                return CompletionResponse(text=reply)
        raise KeyError(f"no scripted reply for {prompt[:80]!r}")

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        yield self.complete(prompt, formatted=formatted)


QUESTIONS = ["Which table stores invoice lines?", "Where are disputes filed?", "Where do tokens live?"]
LABELS = ["invoice_items", "the disputes table", "token_vault"]
APP = {QUESTIONS[0]: "Invoice lines are in the invoice_items table.",  # keyed on the question,
       QUESTIONS[1]: "I cannot answer that from the context.",         # not on retrieved text
       QUESTIONS[2]: "Tokens live in the payments table."}
# keyed on the answer block, so the rubric's own words never match
JUDGE = {"<answer>\nInvoice lines are in": "Score: [[5]], Reason: [[Matches the Label.]]",
         "<answer>\nI cannot answer": "Score: [[2]], Reason: [[Honest that it cannot answer.]]",
         "<answer>\nTokens live in the payments": "Score: [[1]], Reason: [[Contradicts the Label.]]"}


@pytest.fixture
def query_engine():
    docs = [Document(text="Invoice lines are stored in the invoice_items table."),
            Document(text="Disputes are filed in the disputes table."),
            Document(text="Card tokens live in the token_vault table.")]
    index = VectorStoreIndex.from_documents(docs, embed_model=MockEmbedding(embed_dim=8))
    # the app's LLM is passed explicitly: Settings.llm is never resolved (no OpenAI)
    return index.as_query_engine(llm=ScriptedLLM(replies=APP), similarity_top_k=2)


def test_evaluate_response_on_a_query_engine_response(query_engine) -> None:
    response = query_engine.query(QUESTIONS[0])
    assert response.response == APP[QUESTIONS[0]] and len(response.source_nodes) == 2
    judge_model = ScriptedModel(JUDGE)
    ev = vrag(Judge(judge_model))
    result = ev.evaluate_response(query=QUESTIONS[0], response=response, reference=LABELS[0])
    assert (result.score, result.passing, result.feedback) == (5.0, True, "Matches the Label.")
    assert not result.invalid_result
    assert result.contexts == [n.get_content() for n in response.source_nodes]
    prompt = judge_model.prompts[0]
    assert f"<question>\n{QUESTIONS[0]}\n</question>" in prompt and "<label>\ninvoice_items\n</label>" in prompt


async def test_batch_eval_runner_with_a_llamaindex_llm_as_judge(query_engine) -> None:
    judge_llm = ScriptedLLM(replies=JUDGE)
    ev = vrag(judge_llm)  # a LlamaIndex LLM is wrapped in a langrag Judge
    assert isinstance(ev.evaluator.judge.model, LlamaIndexJudge)
    runner = BatchEvalRunner({"vrag": ev}, workers=2)
    results = await runner.aevaluate_queries(query_engine, queries=QUESTIONS, reference=LABELS)
    got = [(r.query, r.score, r.passing) for r in results["vrag"]]
    assert got == [(QUESTIONS[0], 5.0, True), (QUESTIONS[1], 2.0, False), (QUESTIONS[2], 1.0, False)]
    assert len(judge_llm.seen) == 3


def test_batch_eval_runner_on_responses_with_unscored_items(query_engine) -> None:
    responses = [query_engine.query(q) for q in QUESTIONS]
    model = ScriptedModel(JUDGE)
    ev = vrag(Judge(model), normalise=True)
    runner = BatchEvalRunner({"vrag": ev}, workers=2)
    results = runner.evaluate_responses(queries=QUESTIONS, responses=responses,
                                        reference=[LABELS[0], "", LABELS[2]])
    first, second, third = results["vrag"]
    assert (first.score, first.passing) == (1.0, True) and (third.score, third.passing) == (0.0, False)
    assert (first.scores["grade"], first.result.normalised, third.scores["grade"], third.result.normalised) == (5, 1.0, 1, 0.0)
    assert second.invalid_result and second.invalid_reason.startswith("invalid_input: ")
    assert second.score is None and second.passing is None
    assert model.calls == 2  # the item without a label made no call


async def test_scale_0_1_reports_the_normalised_grade() -> None:
    ev = vrag(Judge(ScriptedModel(["Score: [[4]], Reason: [[ok]]"])), normalise=True)
    r = await ev.aevaluate(query="q", response="a", reference="l")
    assert (r.score, r.scores["grade"], r.result.score, r.result.normalised) == (0.75, 4, 4, 0.75)
    with pytest.raises(ConfigError, match="gives no score 'grad'; its scores: accept_rate, grade"):
        LangragEvaluator(VragGrader(Judge(ScriptedModel(["-"]))), score="grad")


async def test_unparseable_judge_reply_is_an_invalid_result() -> None:
    ev = vrag(Judge(ScriptedModel(["no verdict", "none again"])))
    r = await ev.aevaluate(query="q", response="a", reference="l")
    assert r.invalid_result and r.invalid_reason.startswith("unparseable: ")


async def test_confidence_and_threshold_options() -> None:
    ev = vrag(Judge(ScriptedModel(["Score: [[3]], Confidence: [[40]], Reason: [[Partly.]]"])),
              confidence=True, threshold=3)
    r = await ev.aevaluate(query="q", response="a", reference="l")
    assert (r.score, r.passing, r.feedback) == (3.0, True, "Partly.")
    assert r.result.confidence == 40


async def test_get_and_update_prompts() -> None:
    model = ScriptedModel(["Score: [[4]], Reason: [[ok]]"])
    ev = vrag(Judge(model))
    prompts = ev.get_prompts()
    text = prompts["grade"].get_template()
    assert text.startswith("{#\ntask: vrag/grade") and "The Label is definitive" in text
    ev.update_prompts({"grade": LIPromptTemplate(text.replace("Your job is", "MY WORDING. Your job is"))})
    await ev.aevaluate(query="q", response="a", reference="l")
    assert "MY WORDING. Your job is" in model.prompts[-1]
    # a header-less Jinja body is accepted; variables outside the task's are refused
    ev.update_prompts({"grade": LIPromptTemplate("Grade <answer>{{ answer }}</answer> vs {{ label }}")})
    await ev.aevaluate(query="q", response="b", reference="l")
    assert model.prompts[-1] == "Grade <answer>b</answer> vs l"
    with pytest.raises(Exception, match="context"):
        ev.update_prompts({"grade": LIPromptTemplate("{{ answer }} {{ label }} {{ context }}")})
    with pytest.raises(ConfigError):
        as_judge("gpt-4o")  # type: ignore[arg-type]


def test_the_judge_entry_point_says_what_is_missing() -> None:
    with pytest.raises(ConfigError, match="expected llamaindex:<provider>:<model>, got llamaindex:openai$"):
        resolve("openai")
    with pytest.raises(ConfigError, match="install llama-index-llms-nosuch to use llamaindex:nosuch:m"):
        resolve("nosuch:m")
