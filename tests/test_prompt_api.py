"""The one prompt API every evaluator shares: ``prompts()`` names the templates it renders and
``with_prompts(**overrides)`` returns a copy rendering the user's instead, checked at once."""

from __future__ import annotations

import pytest

from langrag_eval.errors import ConfigError, PromptError
from langrag_eval.evaluator import Evaluator
from langrag_eval.grading import VragGrader
from langrag_eval.grammar.grading import ReferenceGrader
from langrag_eval.grammar.reliability import RagasFact, SelfCheckQA
from langrag_eval.prompting.templates import PromptTemplate
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import Thelma
from langrag_eval.tournament import PairwiseEvaluator
from langrag_eval.tournament.evaluators import PointwiseEvaluator, RelevanceEvaluator


def _evaluators() -> list[Evaluator]:
    judge = Judge(ScriptedModel(["unused"]))
    return [VragGrader(judge), Thelma(judge), Thelma(judge, metrics=("gr",), batched=True),
            PairwiseEvaluator(judge), RelevanceEvaluator(judge), PointwiseEvaluator(judge),
            ReferenceGrader(judge), RagasFact(judge), SelfCheckQA(judge, judge)]


@pytest.mark.parametrize("evaluator", _evaluators(), ids=lambda e: type(e).__name__)
def test_each_prompt_can_be_replaced_by_name(evaluator: Evaluator) -> None:
    prompts = evaluator.prompts()
    assert prompts and all(isinstance(t, PromptTemplate) for t in prompts.values())
    for name, template in prompts.items():
        # the same wording as the user's own text, with a header naming it: recognisably theirs
        mine = template.to_text().replace(f"task: {template.task}", "task: mine", 1)
        copy = evaluator.with_prompts(**{name: mine})
        assert copy.prompts()[name].task == "mine" and copy.prompts()[name].body == template.body
        assert {n: t for n, t in copy.prompts().items() if n != name} == \
            {n: t for n, t in prompts.items() if n != name}
        assert evaluator.prompts() == prompts  # the original is left as it was
        assert type(copy) is type(evaluator)


@pytest.mark.parametrize("evaluator", _evaluators(), ids=lambda e: type(e).__name__)
def test_unknown_names_and_unfillable_templates_are_refused(evaluator: Evaluator) -> None:
    with pytest.raises(ConfigError, match="has no prompt 'nonsense'; its prompts: "):
        evaluator.with_prompts(nonsense="Grade {{ answer }}")
    name = next(iter(evaluator.prompts()))
    with pytest.raises(PromptError):
        evaluator.with_prompts(**{name: "{{ a_variable_no_task_fills }}"})
    assert evaluator.with_prompts() is evaluator


def test_an_evaluator_without_prompts_has_none() -> None:
    class Plain(Evaluator[str, PromptTemplate]):
        task, result_type = "plain", PromptTemplate

        async def aevaluate(self, sample):  # pragma: no cover - never called
            raise AssertionError

    assert Plain().prompts() == {}
    with pytest.raises(ConfigError, match=r"its prompts: \(none\)"):
        Plain().with_prompts(grade="x")
