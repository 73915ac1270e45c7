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

from ..errors import ConfigError
from ..grading.graded import Grade, GradedJudge, grade_template
from ..prompting.templates import PromptTemplate
from ..results import Unscored
from ..runtime import Judge
from .conversation import Conversation

__all__ = ["ConversationGrade", "ConversationJudge", "Criterion"]

Criterion = Literal["goal_met", "knowledge_retention", "role_adherence"]
_VARIABLES = {"goal_met": ["goal", "conversation"], "knowledge_retention": ["conversation"],
              "role_adherence": ["role", "conversation"]}


class ConversationGrade(Grade):
    criterion: str


@dataclass
class ConversationJudge(GradedJudge[Conversation, ConversationGrade]):
    """``judge`` grades each conversation 1-5 on ``criterion``; ``threshold`` is the lowest passing
    grade; ``role`` is the assistant's role for ``role_adherence`` when a conversation states none;
    ``prompt`` replaces the shipped template (a file path or a template, with the same variables)."""

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
        self._template: PromptTemplate = grade_template(self.prompt, f"conversation/{self.criterion}",
                                                        _VARIABLES[self.criterion])

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
        return await self.graded(sample.id, self.render(sample), criterion=self.criterion)

    def score_names(self) -> tuple[str, ...]:
        return (f"{self.criterion}_pass_rate", f"{self.criterion}_grade")
