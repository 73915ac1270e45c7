"""One adapter per framework type takes any langrag evaluator, a user's own included: its typed
scores become LangChain string results, LangSmith results and LlamaIndex ``EvaluationResult``s,
and its prompts are both frameworks' prompt hooks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from hypothesis import given, settings, strategies as st
from langchain_langrag import LangragStringEvaluator, langsmith_evaluator
from llama_index.core.prompts import PromptTemplate as LIPromptTemplate
from llama_index.evaluation.langrag import LangragEvaluator
from pydantic import BaseModel

from langrag_eval.errors import ConfigError
from langrag_eval.evaluator import Evaluator
from langrag_eval.grammar.grading import ReferenceGrader
from langrag_eval.prompting.templates import override_template
from langrag_eval.results import Declaration, Score, ScoreScale, Unscored
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.types import Sample


class Overlap(BaseModel):
    share: float
    words: int


@dataclass
class WordOverlap(Evaluator[Sample, Overlap]):
    """A user's evaluator with no judge: the share of the reference's words the answer uses (0..1)
    and the answer's length in words (0..50, lower is better); unscored without a reference."""

    prompt: str = "Does <answer>{{ answer }}</answer> use the words of <label>{{ label }}</label>?"
    task: ClassVar[str] = "user/overlap"
    result_type: ClassVar[type[Overlap]] = Overlap
    prompt_fields: ClassVar[dict[str, str]] = {"overlap": "prompt"}

    def prompts(self):
        return {"overlap": override_template(self.prompt, "vrag/grade", allowed=["answer", "label"])}

    def score_names(self):
        return ("share", "words")

    def score_scale(self, name):
        return ScoreScale(0, 1) if name == "share" else ScoreScale(0, 50, higher_is_better=False)

    def result_scores(self, r: Overlap) -> list[Score]:
        return [ScoreScale(0, 1).score("share", r.share, passed=r.share >= 0.5, reason=f"{r.share:.2f} of the words"),
                self.score_scale("words").score("words", min(r.words, 50))]

    async def aevaluate(self, sample: Sample) -> Overlap | Unscored:
        if not sample.reference:
            return Unscored(reason="no reference to compare with", cause="invalid_input")
        ref, got = set(sample.reference.lower().split()), set((sample.answer or "").lower().split())
        return Overlap(share=len(ref & got) / len(ref), words=len((sample.answer or "").split()))


words = st.lists(st.sampled_from(["paris", "is", "the", "capital", "of", "france", "lyon"]), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(answer=words, reference=words)
def test_scores_reach_every_framework_as_the_evaluator_gave_them(answer, reference) -> None:
    ev = WordOverlap()
    answer, reference = " ".join(answer), " ".join(reference)
    share = len(set(reference.split()) & set(answer.split())) / len(set(reference.split()))
    n = min(len(answer.split()), 50)

    lc = LangragStringEvaluator(ev, requires_reference=True).evaluate_strings(
        prediction=answer, reference=reference, input="q")
    assert lc["scores"] == {"share": share, "words": n}
    assert lc["score"] == pytest.approx((share + (1 - n / 50)) / 2)  # each on 0..1, lower-is-better flipped
    assert lc["value"] == ("pass" if share >= 0.5 else "fail")
    one = LangragStringEvaluator(ev, score="share", requires_reference=True).evaluate_strings(prediction=answer, reference=reference, input="q")
    assert one["score"] == pytest.approx(share) and one["reasoning"] == f"{share:.2f} of the words"

    ls = langsmith_evaluator(ev)({"question": "q"}, {"answer": answer}, {"label": reference})
    assert [(r["key"], r["score"]) for r in ls["results"]] == [("share", share), ("words", n)]

    li = LangragEvaluator(ev, score="share").evaluate(query="q", response=answer, reference=reference)
    assert (li.score, li.passing, li.invalid_result) == (pytest.approx(share), share >= 0.5, False)


def test_an_unscored_item_is_a_missing_score_with_its_cause_everywhere() -> None:
    ev = WordOverlap()
    lc = LangragStringEvaluator(ev).evaluate_strings(prediction="Paris", input="q")
    assert (lc["score"], lc["unscored"]) == (None, "invalid_input")
    ls = langsmith_evaluator(ev, key_prefix="user_")({"question": "q"}, {"answer": "Paris"}, {})
    assert [(r["key"], r["score"], r["metadata"]["unscored"]) for r in ls["results"]] == \
        [("user_share", None, "invalid_input"), ("user_words", None, "invalid_input")]
    li = LangragEvaluator(ev).evaluate(query="q", response="Paris")
    assert li.invalid_result and li.invalid_reason == "invalid_input: no reference to compare with"


def test_a_failing_evaluator_is_a_result_in_langsmith_not_a_crash() -> None:
    class Broken(WordOverlap):
        async def aevaluate(self, sample):
            raise KeyError("missing column")

    out = langsmith_evaluator(Broken(), name="broken")({"question": "q"}, {"answer": "a"}, {"label": "b"})
    assert [(r["key"], r["score"]) for r in out["results"]] == [("share", None), ("words", None)]
    assert "KeyError" in out["results"][0]["comment"]


def test_llamaindex_prompt_hooks_are_the_evaluators_prompts() -> None:
    model = ScriptedModel(["Correct"])
    ev = LangragEvaluator(ReferenceGrader(Judge(model)))
    assert set(ev.get_prompts()) == {"correctness"}
    ev.update_prompts({"correctness": LIPromptTemplate("MINE {question} / {response} / {true_answer}")})
    ev.evaluate(query="Capital?", response="Paris", reference="Paris")
    assert model.prompts[-1].startswith("MINE Capital? / ")
    with pytest.raises(ConfigError, match="its prompts: correctness"):
        ev.update_prompts({"grade": "x"})
    user = LangragEvaluator(WordOverlap())
    user.update_prompts({"overlap": "{{ answer }} vs {{ label }}"})
    assert user.evaluator.prompts()["overlap"].body.strip() == "{{ answer }} vs {{ label }}"


class Graded(BaseModel):
    grade: int


@dataclass
class LengthGrade(Evaluator[Sample, Graded]):
    """A user's graded evaluator: the answer's length against the reference's, 1 to 5 (3 passes),
    declared as its primary score and needing a reference, as vRAG-Eval's grade does."""

    task: ClassVar[str] = "user/length_grade"
    result_type: ClassVar[type[Graded]] = Graded
    declaration: ClassVar = Declaration({"grade": ScoreScale(1, 5)}, primary="grade", needs_reference=True)

    def result_scores(self, r: Graded) -> list[Score]:
        return [ScoreScale(1, 5).score("grade", r.grade, passed=r.grade >= 3, reason=f"grade {r.grade}")]

    async def aevaluate(self, sample: Sample) -> Graded | Unscored:
        ratio = len(sample.answer or "") / max(1, len(sample.reference or ""))
        return Graded(grade=max(1, min(5, round(5 * ratio))))


def test_a_declared_primary_score_is_reported_as_vrag_grade_is() -> None:
    # what the adapters report as "the" score, and whether they ask for a reference, is read from
    # the declaration: a user's evaluator gets the graded shape the package's own grader has
    ev = LangragStringEvaluator(LengthGrade())
    assert ev.requires_reference and not LangragStringEvaluator(WordOverlap()).requires_reference
    out = ev.evaluate_strings(prediction="Two years.", reference="Two years.", input="Warranty?")
    assert (out["grade"], out["value"], out["score"]) == (5, "accept", 1.0)
    low = ev.evaluate_strings(prediction="Two", reference="Two years, from the day of purchase.", input="Warranty?")
    assert (low["grade"], low["value"]) == (1, "reject")
    [main, raw] = langsmith_evaluator(LengthGrade())(inputs={"question": "Warranty?"},
                                                     outputs={"answer": "Two years."},
                                                     reference_outputs={"answer": "Two years."})["results"]
    assert (main["key"], main["score"], main["value"]) == ("user/length_grade", 1.0, "accept")
    assert (raw["key"], raw["score"]) == ("user/length_grade_raw_score", 5)
