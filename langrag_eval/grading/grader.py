"""vRAG-Eval grading: one 1-5 grade per answer, judged against a definitive label, mapped to
accept (4-5) or reject (1-3).

The judge reads the question, the label and the answer (each inside its own tag block, so an
answer cannot speak as the instructions) and replies ``Score: [[n]], Reason: [[...]]``; with
``confidence=True`` it also states ``Confidence: [[0-100]]`` (the paper's Table A3). Calls use
temperature 0 whatever the judge's own settings. A sample without a question, answer or label is
``Unscored`` with cause ``invalid_input`` and costs no model call; a reply that cannot be read after
the runtime's one repair re-ask is ``Unscored`` with cause ``unparseable``.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[4]], Reason: [[Matches the label.]]"])))
>>> g = grader.evaluate(Sample(question="Capital of France?", answer="Paris.", reference="Paris"))
>>> g.score, g.accepted, g.reason
(4, True, 'Matches the label.')

A grade reads on two scales, the same in both framework adapters: the paper's ``1-5`` (LlamaIndex's
``CorrectnessEvaluator`` reports this one) and ``0-1``, ``(grade - 1) / 4`` (LangSmith feedback's
convention).

>>> g.on_scale("1-5"), g.on_scale("0-1")
(4.0, 0.75)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..files.reading import read_text
from ..model import GenerationParams
from ..prompting.templates import PromptTemplate, load_prompt, override_template
from ..results import Declaration, Score, ScoreScale, Section, Summary, Unscored
from ..evaluator import Evaluator, check_judge
from ..runtime import Judge
from ..types import Sample
from ..verdicts.formats import ScoreFormat, ScoreVerdict
from .summary import summarize

__all__ = ["VragGrade", "GradedExample", "VragGrader", "DEFAULT_TEMPLATE", "TASK", "Scale", "check_scale",
           "load_rubric"]

Scale = Literal["1-5", "0-1"]

DEFAULT_TEMPLATE = "vrag/grade"
TASK = "vrag"
_VARIABLES = {"question", "label", "answer", "rubric", "examples", "confidence"}


class VragGrade(BaseModel):
    """One graded answer. ``accepted`` is ``score >= threshold`` (4 by default, the paper's mapping)."""

    model_config = ConfigDict(frozen=True)

    score: int = Field(ge=1, le=5)
    accepted: bool
    reason: str | None = None
    raw: str | None = None
    confidence: int | None = Field(default=None, ge=0, le=100)

    @property
    def normalised(self) -> float:
        """The score on 0..1, ``(score - 1) / 4``."""
        return (self.score - 1) / 4

    def on_scale(self, scale: Scale) -> float:
        """The grade on ``scale``: ``"1-5"`` the paper's grade, ``"0-1"`` the normalised score."""
        return float(self.score) if check_scale(scale) == "1-5" else self.normalised


_ACCEPT, _GRADE = ScoreScale(0, 1, binary=True), ScoreScale(1, 5)


def check_scale(scale: str) -> Scale:
    """``scale`` when it names a scale a grade reads on, else a :class:`ConfigError` naming them."""
    if scale not in get_args(Scale):
        raise ConfigError(f"unknown score scale {scale!r}; choose from {', '.join(get_args(Scale))}")
    return scale  # type: ignore[return-value]


class GradedExample(BaseModel):
    """A graded answer shown to the judge as a few-shot example."""

    model_config = ConfigDict(frozen=True)

    question: str
    label: str
    answer: str
    score: int = Field(ge=1, le=5)
    reason: str


def load_rubric(rubric: str | Path | None) -> str:
    """The rubric text: the shipped five levels (``None``), a file (``Path``), or the text itself."""
    if rubric is None:
        text = load_prompt("vrag/rubric").render()
    elif isinstance(rubric, Path):
        text = read_text(rubric, what="rubric file")
    else:
        text = rubric
    if not text.strip():
        raise ConfigError(f"the rubric{f' in {rubric}' if isinstance(rubric, Path) else ''} is empty")
    return text.strip()


def _blank(value: str | None) -> bool:
    return value is None or not str(value).strip()


@dataclass
class VragGrader(Evaluator[Sample, VragGrade]):
    """The vRAG-Eval grader, an :class:`~langrag_eval.evaluator.Evaluator` of :class:`Sample`
    (question, answer, and the label as ``reference``). Fields are its settings.

    ``threshold``: lowest accepted score (default 4: 4-5 accept, 1-3 reject). ``confidence``: ask
    for verbalised confidence. ``rubric``: text, or a ``Path`` to a file, replacing the five levels.
    ``examples``: graded few-shot examples. ``prompt``: a prompt name, file path or template
    replacing ``prompts/vrag/grade.txt`` (the prompt named ``grade`` by :meth:`prompts` and
    :meth:`with_prompts`); it may use any of question, label, answer, rubric, examples, confidence.
    """

    judge: Judge
    threshold: int = 4
    confidence: bool = False
    rubric: str | Path | None = None
    examples: Sequence[GradedExample] = ()
    prompt: str | Path | PromptTemplate | None = None
    _prompt: PromptTemplate = field(init=False, repr=False)
    _rubric_text: str = field(init=False, repr=False)

    task: ClassVar[str] = TASK
    result_type: ClassVar[type[VragGrade]] = VragGrade
    description: ClassVar[str] = "vRAG-Eval grading"
    prompt_fields: ClassVar[dict[str, str]] = {"grade": "prompt"}

    def __post_init__(self) -> None:
        check_judge(self)
        if not 1 <= self.threshold <= 5:
            raise ConfigError(f"the accept threshold must be a score from 1 to 5, got {self.threshold}")
        self.examples = [e if isinstance(e, GradedExample) else GradedExample.model_validate(e)
                         for e in self.examples]
        self._rubric_text = load_rubric(self.rubric)
        # checked now: it may only use the variables this task fills, and must show answer and label
        prompt = (load_prompt(DEFAULT_TEMPLATE) if self.prompt is None else
                  override_template(self.prompt, DEFAULT_TEMPLATE, allowed=sorted(_VARIABLES)))
        for needed in ("answer", "label"):
            if needed not in prompt.variables:
                raise ConfigError(f"{prompt.source}: a grading template must use the variable {needed!r}")
        self._prompt = prompt

    def prompts(self) -> dict[str, PromptTemplate]:
        return {"grade": self._prompt}

    @property
    def rubric_text(self) -> str:
        """The rubric the judge is shown (the five shipped levels unless replaced)."""
        return self._rubric_text

    @property
    def format(self) -> ScoreFormat:
        return ScoreFormat(low=1, high=5, confidence=self.confidence)

    def render(self, *, question: str, answer: str, label: str) -> str:
        """The exact prompt the judge receives for this sample."""
        values: dict[str, Any] = {
            "question": question, "label": label, "answer": answer, "rubric": self._rubric_text,
            "examples": [e.model_dump() for e in self.examples], "confidence": self.confidence}
        return self._prompt.render(**{k: values[k] for k in self._prompt.variables})

    async def aevaluate(self, sample: Sample) -> VragGrade | Unscored:
        """Grade ``sample.answer`` against ``sample.reference`` (the label) for ``sample.question``."""
        missing = [name for name, value in (("question", sample.question), ("answer", sample.answer),
                                            ("label", sample.reference)) if _blank(value)]
        if missing:
            return Unscored(reason=f"cannot grade: {' and '.join(missing)} empty or missing",
                            cause="invalid_input")
        prompt = self.render(question=sample.question, answer=sample.answer or "",
                             label=sample.reference or "")
        # the paper fixes temperature 0 for reproducibility, so it is forced here
        params = GenerationParams(temperature=0.0, max_tokens=self.judge.params.max_tokens,
                                  seed=self.judge.params.seed)
        answer = await self.judge.ask(prompt, self.format, params=params)
        if isinstance(answer.value, Unscored):
            return answer.value
        verdict: ScoreVerdict = answer.value
        return VragGrade(score=verdict.score, accepted=verdict.score >= self.threshold,
                         reason=verdict.reason, raw=answer.raw, confidence=verdict.confidence)

    # an item is graded as a whole, or not at all: a comparison also reads the share graded; the
    # report draws the grades from the summary a run stores as ``vrag``
    declaration: ClassVar[Declaration] = Declaration({"accept_rate": _ACCEPT, "grade": _GRADE},
                                                     judged_whole="scored_rate", primary="grade",
                                                     needs_reference=True,
                                                     sections=(Section("vRAG-Eval", "vrag", "vrag"),))

    def result_scores(self, result: VragGrade) -> list[Score]:
        """Accepted (1) or rejected (0) at this grader's threshold, a yes/no score whose mean over a
        dataset is the accept rate; and the 1-5 grade, passed when accepted."""
        return [_ACCEPT.score("accept_rate", float(result.accepted), passed=result.accepted,
                              reason=result.reason),
                _GRADE.score("grade", result.score, passed=result.accepted, reason=result.reason)]

    def index_item(self, sample: Sample) -> tuple[str | None, str | None, str | None]:
        # what each item asks, so a later run of another app variant can be paired with this one
        return sample.question, sample.reference, sample.metadata.get("subject")

    def summarize(self, results: Sequence[VragGrade | Unscored], *, ids: Sequence[str] | None = None,
                  subjects: Sequence[str | None] | None = None,
                  agreement: dict[str, Any] | None = None) -> Summary:
        """The typed summary (accept rate and grade, each with its interval), with the score
        distribution, accept rate at this grader's threshold, unscored causes and a per-subject
        breakdown in ``details`` (see :func:`langrag_eval.grading.summarize`)."""
        details = summarize(results, ids=ids, subjects=subjects, threshold=self.threshold, agreement=agreement)
        return super().summarize(results).model_copy(update={"details": details})
