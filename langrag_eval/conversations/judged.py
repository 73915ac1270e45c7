"""Conversation-level judges on the one evaluator contract: a 1-5 grade on the levels of the prompt
files ``conversation/goal_met``, ``conversation/knowledge_retention`` and ``conversation/role_adherence``,
passed at 4 or more.

The goal, the role and every turn reach the judge inside their own blocks, so nothing a user or the
assistant wrote can speak as the instructions, and a verdict copied from a turn is never read as the
judge's own (the judge runtime's echo rule). A conversation without turns is unscored and costs no
call; so is a role-adherence sample that states no role.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.conversations.conversation import Conversation
>>> judge = ConversationJudge(Judge(ScriptedModel(["Score: [[5]], Reason: [[Kept the model number.]]"])),
...                           criterion="knowledge_retention")
>>> r = judge.evaluate(Conversation.of_turns([("My pump is the P-20.", "Noted."), ("Warranty?", "Two years.")]))
>>> r.criterion, r.score, r.passed
('knowledge_retention', 5, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import ConfigError
from ..evaluator import Evaluator
from ..model import GenerationParams
from ..prompting.templates import PromptTemplate, load_prompt, override_template
from ..results import Score, ScoreScale, Unscored
from ..runtime import Judge
from ..verdicts.formats import ScoreFormat
from .conversation import Conversation

__all__ = ["ConversationGrade", "ConversationJudge", "Criterion"]

Criterion = Literal["goal_met", "knowledge_retention", "role_adherence"]
_VARIABLES = {"goal_met": ["goal", "conversation"], "knowledge_retention": ["conversation"],
              "role_adherence": ["role", "conversation"]}
_GRADE = ScoreScale(1, 5)
_PASS = ScoreScale(0, 1, binary=True)


class ConversationGrade(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str | None = None
    criterion: str
    score: int
    passed: bool
    reason: str | None = None
    raw: str | None = None


@dataclass
class ConversationJudge(Evaluator[Conversation, ConversationGrade]):
    """``judge`` grades each conversation 1-5 on ``criterion``; ``threshold`` is the lowest passing
    grade; ``role`` is the assistant's role for ``role_adherence`` when a conversation states none;
    ``prompt`` replaces the shipped template (a file path or a template, with the same variables)."""

    judge: Judge
    criterion: Criterion = "goal_met"
    threshold: int = 4
    role: str | None = None
    prompt: Any = None

    task = "conversation_judge"
    result_type = ConversationGrade
    description = "LLM judge of a whole conversation"
    prompt_fields: ClassVar[dict[str, str]] = {"conversation": "prompt"}

    def __post_init__(self) -> None:
        if self.criterion not in _VARIABLES:
            raise ConfigError(f"conversation criterion {self.criterion!r}: expected one of {', '.join(_VARIABLES)}")
        shipped = f"conversation/{self.criterion}"
        self._format = ScoreFormat(1, 5)
        self._template: PromptTemplate = (load_prompt(shipped) if self.prompt is None else
                                          override_template(self.prompt, shipped, allowed=_VARIABLES[self.criterion]))

    def task_name(self) -> str:
        return f"{self.task}/{self.criterion}"  # each criterion's judgments are stored apart

    def for_judge(self, judge: Judge) -> ConversationJudge:
        return ConversationJudge(judge, self.criterion, self.threshold, self.role, self.prompt)

    def render(self, conversation: Conversation) -> str:
        """The exact prompt the judge receives for ``conversation``."""
        values = {"goal": conversation.goal or "(not stated: infer it from the user's messages)",
                  "role": conversation.role or self.role or "", "conversation": conversation.render()}
        return self._template.render(**{k: values[k] for k in self._template.variables})

    def index_item(self, sample: Conversation) -> tuple[str | None, str | None, str | None]:
        return (sample.turns[0].user if sample.turns else sample.goal), None, sample.persona

    def item_content(self, sample: Conversation) -> dict[str, Any]:
        return sample.shown()  # the report's item browser shows it turn by turn

    async def aevaluate(self, sample: Conversation) -> ConversationGrade | Unscored:
        if not sample.turns:
            return Unscored(reason="the conversation has no turns", cause="invalid_input")
        if self.criterion == "role_adherence" and not (sample.role or self.role):
            return Unscored(reason="no role to hold the assistant to: set the conversation's role or role=",
                            cause="invalid_input")
        params = GenerationParams(temperature=0.0, max_tokens=self.judge.params.max_tokens,
                                  seed=self.judge.params.seed)
        answer = await self.judge.ask(self.render(sample), self._format, params=params)
        if isinstance(answer.value, Unscored):
            return answer.value
        score = answer.value.score
        return ConversationGrade(id=sample.id, criterion=self.criterion, score=score,
                                 passed=score >= self.threshold, reason=answer.value.reason, raw=answer.raw)

    def score_names(self) -> tuple[str, ...]:
        return (f"{self.criterion}_pass_rate", f"{self.criterion}_grade")

    def score_scale(self, name: str) -> ScoreScale:
        return _PASS if name.endswith("_pass_rate") else _GRADE

    def result_scores(self, result: ConversationGrade) -> list[Score]:
        rate, grade = self.score_names()
        return [_PASS.score(rate, float(result.passed), passed=result.passed, reason=result.reason),
                _GRADE.score(grade, result.score, passed=result.passed, reason=result.reason)]
