"""RAGElo's per-item judges: document relevance and pointwise answer scores (the pairwise games are
in :mod:`langrag_eval.tournament.pairwise`).

- :class:`RelevanceEvaluator` rates one retrieved document for a query 0 / 1 / 2 (not, somewhat,
  very relevant) with a one-sentence reason. Output format: a last-line JSON object
  ``{"reason": ..., "relevance": n}`` read with ``JsonFormat`` (the paper gives the levels, not a
  format; JSON keeps the reason and the level in one parseable place).
- :class:`PointwiseEvaluator` scores an answer 0-2 on relevance, accuracy, completeness and precision
  from a last-line JSON object (Appendix A.2), with the agent's documents in the prompt.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> ev = RelevanceEvaluator(Judge(ScriptedModel(['{"reason": "It names the capital.", "relevance": 2}'])))
>>> ev.evaluate(RelevanceSample(query="Capital of France?", document="Paris is the capital.")).relevance
2
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from ..types import as_documents
from ..prompting.templates import PromptTemplate, load_prompt, override_template
from ..results import Declaration, Score, ScoreScale, Unscored
from ..evaluator import Evaluator, check_judge
from ..runtime import Judge
from ..types import Document
from ..verdicts.formats import JsonFormat
from .config import DEFAULT_FACTORS  # defined beside the settings that use it

__all__ = [
    "CRITERIA",
    "DEFAULT_FACTORS",
    "PointwiseEvaluator",
    "PointwiseSample",
    "PointwiseScores",
    "RelevanceEvaluator",
    "RelevanceJudgment",
    "RelevanceSample",
]

CRITERIA = ("relevance", "accuracy", "completeness", "precision")


class RelevanceJudgment(BaseModel):
    """One document's relevance to one query: 0 not, 1 somewhat, 2 very relevant."""

    model_config = ConfigDict(frozen=True)

    reason: str = ""
    relevance: int = Field(ge=0, le=2)


class PointwiseScores(BaseModel):
    """Appendix A.2's four criteria, each 0-2."""

    model_config = ConfigDict(frozen=True)

    relevance: int = Field(ge=0, le=2)
    accuracy: int = Field(ge=0, le=2)
    completeness: int = Field(ge=0, le=2)
    precision: int = Field(ge=0, le=2)


def _template(prompt: Any, shipped: str, allowed: set[str]) -> PromptTemplate:
    """A shipped prompt name, a user's template file or text, a LangChain / LlamaIndex prompt
    object, or an already parsed template, checked to use only ``allowed`` variables."""
    if isinstance(prompt, str) and prompt == shipped:
        return load_prompt(shipped)
    return override_template(prompt, shipped, allowed=sorted(allowed))


def _invalid(reason: str) -> Unscored:
    return Unscored(reason=reason, cause="invalid_input")


# documents, LangChain documents, LlamaIndex nodes, dicts or strings, read as Documents
Documents = Annotated[list[Document], BeforeValidator(lambda v: as_documents(v, field="documents"))]


class RelevanceSample(BaseModel):
    """One retrieved document for one query: what a relevance judgment reads."""

    model_config = ConfigDict(frozen=True)

    query: str
    document: Document
    id: str | None = None

    @field_validator("document", mode="before")
    @classmethod
    def _document(cls, value: Any) -> Any:
        return value if isinstance(value, (Document, dict)) else as_documents([value], field="document")[0]


class PointwiseSample(BaseModel):
    """One agent's answer to one query with the documents it retrieved, best first."""

    model_config = ConfigDict(frozen=True)

    query: str
    answer: str
    documents: Documents = Field(default_factory=list)
    id: str | None = None


@dataclass
class RelevanceEvaluator(Evaluator[RelevanceSample, RelevanceJudgment]):
    """Judges one retrieved document for one query."""

    judge: Judge
    prompt: str | Path | PromptTemplate = "tournament/relevance"

    task: ClassVar[str] = "tournament/relevance"
    result_type: ClassVar[type[RelevanceJudgment]] = RelevanceJudgment
    description: ClassVar[str] = "relevance"
    prompt_fields: ClassVar[dict[str, str]] = {"relevance": "prompt"}
    declaration: ClassVar[Declaration] = Declaration({"relevance": ScoreScale(0, 2)})

    def __post_init__(self) -> None:
        check_judge(self)
        self._template = _template(self.prompt, "tournament/relevance", {"query", "document"})

    def prompts(self) -> dict[str, PromptTemplate]:
        return {"relevance": self._template}

    def result_scores(self, result: RelevanceJudgment) -> list[Score]:
        return [ScoreScale(0, 2).score("relevance", result.relevance, reason=result.reason or None)]

    def fingerprint(self, sample: RelevanceSample) -> Any:
        return sample.query, sample.document.text  # the judgment reads the text, not the id

    async def aevaluate(self, sample: RelevanceSample) -> RelevanceJudgment | Unscored:
        if not sample.document.text.strip():
            return _invalid("the document is empty")
        answer = await self.judge.ask(self._template.render(query=sample.query, document=sample.document.text),
                                      JsonFormat(RelevanceJudgment))
        return answer.value


@dataclass
class PointwiseEvaluator(Evaluator[PointwiseSample, PointwiseScores]):
    """Scores one answer on relevance, accuracy, completeness and precision (0-2 each)."""

    judge: Judge
    prompt: str | Path | PromptTemplate = "tournament/pointwise"

    task: ClassVar[str] = "tournament/pointwise"
    result_type: ClassVar[type[PointwiseScores]] = PointwiseScores
    description: ClassVar[str] = "pointwise"
    prompt_fields: ClassVar[dict[str, str]] = {"pointwise": "prompt"}
    # each criterion is the result's field of that name, 0..2 (the default result_scores reads them)
    declaration: ClassVar[Declaration] = Declaration({name: ScoreScale(0, 2) for name in CRITERIA})

    def __post_init__(self) -> None:
        check_judge(self)
        self._template = _template(self.prompt, "tournament/pointwise", {"query", "answer", "documents"})

    def prompts(self) -> dict[str, PromptTemplate]:
        return {"pointwise": self._template}

    def fingerprint(self, sample: PointwiseSample) -> Any:
        return sample.query, sample.answer, sample.documents

    async def aevaluate(self, sample: PointwiseSample) -> PointwiseScores | Unscored:
        if not sample.answer.strip():
            return _invalid("the answer is empty")
        docs = [{"id": d.id, "text": d.text} for d in sample.documents]
        prompt = self._template.render(query=sample.query, answer=sample.answer, documents=docs)
        return (await self.judge.ask(prompt, JsonFormat(PointwiseScores))).value
