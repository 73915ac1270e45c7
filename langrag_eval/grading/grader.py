"""vRAG-Eval grading: one 1-5 grade per answer, judged against a definitive label, mapped to
accept (4-5) or reject (1-3).

The judge reads the question, the label and the answer (each inside its own tag block, so an
answer cannot speak as the instructions) and replies ``Score: [[n]], Reason: [[...]]``; with
``confidence=True`` it also states ``Confidence: [[0-100]]`` (the paper's Table A3). Calls use
temperature 0 whatever the judge's own settings. A sample without a question, answer or label is
``Unscored`` with cause ``invalid_input`` and costs no model call; a reply that cannot be read after
the runtime's one repair re-ask is ``Unscored`` with cause ``unparseable``.

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[4]], Reason: [[Matches the label.]]"])))
>>> g = grader.grade_sync(question="Capital of France?", answer="Paris.", label="Paris")
>>> g.score, g.accepted, g.reason
(4, True, 'Matches the label.')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..model import GenerationParams
from ..prompts import PromptTemplate, load_prompt, override_template
from ..results import Unscored
from ..runtime import Judge, put_item_index, run_batch, run_sync
from ..types import RAGSample
from ..verdicts import ScoreFormat, ScoreVerdict

__all__ = ["VragGrade", "GradedExample", "VragGrader", "DEFAULT_TEMPLATE", "TASK", "load_rubric"]

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
        try:
            text = rubric.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{rubric}: rubric file not found") from None
        except IsADirectoryError:
            raise ConfigError(f"{rubric}: the rubric file is a directory, not a file") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{rubric}: rubric file is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    else:
        text = rubric
    if not text.strip():
        raise ConfigError(f"the rubric{f' in {rubric}' if isinstance(rubric, Path) else ''} is empty")
    return text.strip()


def _blank(value: str | None) -> bool:
    return value is None or not str(value).strip()


@dataclass
class VragGrader:
    """The vRAG-Eval grader. Fields are its settings; :meth:`evaluate` is the one async method.

    ``threshold``: lowest accepted score (default 4: 4-5 accept, 1-3 reject). ``confidence``: ask
    for verbalised confidence. ``rubric``: text, or a ``Path`` to a file, replacing the five levels.
    ``examples``: graded few-shot examples. ``template``: a prompt name, file path or template
    replacing ``prompts/vrag/grade.txt``; it may use any of question, label, answer, rubric,
    examples, confidence.
    """

    judge: Judge
    threshold: int = 4
    confidence: bool = False
    rubric: str | Path | None = None
    examples: Sequence[GradedExample] = ()
    template: str | Path | PromptTemplate | None = None
    _prompt: PromptTemplate = field(init=False, repr=False)
    _rubric_text: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 1 <= self.threshold <= 5:
            raise ConfigError(f"the accept threshold must be a score from 1 to 5, got {self.threshold}")
        self.examples = [e if isinstance(e, GradedExample) else GradedExample.model_validate(e)
                         for e in self.examples]
        self._rubric_text = load_rubric(self.rubric)
        self.set_template(self.template)

    def set_template(self, template: str | Path | PromptTemplate | None) -> None:
        """Replace the prompt template (checked: it may only use the variables this task fills)."""
        prompt = (load_prompt(DEFAULT_TEMPLATE) if template is None else
                  override_template(template, DEFAULT_TEMPLATE, allowed=sorted(_VARIABLES)))
        for needed in ("answer", "label"):
            if needed not in prompt.variables:
                raise ConfigError(f"{prompt.source}: a grading template must use the variable {needed!r}")
        self.template, self._prompt = template, prompt

    @property
    def prompt_template(self) -> PromptTemplate:
        return self._prompt

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

    async def evaluate(self, sample: RAGSample) -> VragGrade | Unscored:
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

    async def grade(self, *, question: str | None, answer: str | None, label: str | None) -> VragGrade | Unscored:
        """:meth:`evaluate` from three strings."""
        return await self.evaluate(RAGSample(question=question or "", answer=answer, reference=label))

    def grade_sync(self, *, question: str | None, answer: str | None, label: str | None) -> VragGrade | Unscored:
        return run_sync(self.grade(question=question, answer=answer, label=label))

    def evaluate_sync(self, sample: RAGSample) -> VragGrade | Unscored:
        return run_sync(self.evaluate(sample))

    async def evaluate_batch(self, samples: Sequence[RAGSample], *, run_id: str | None = None,
                             limit: int | None = None) -> list[VragGrade | Unscored]:
        """Grade many samples, resumably: with a run store on the judge and a ``run_id``, each
        result is stored under the sample's id as it finishes and read back on a re-run."""
        ids = [s.id for s in samples]
        if any(i is None for i in ids):
            raise ConfigError("every sample in a batch needs an id (RAGSample.id)")
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
            raise ConfigError(f"sample ids must be unique in a batch; repeated: {', '.join(map(str, dup))}")
        judge = self.judge.for_run(run_id) if run_id else self.judge
        grader = self if judge is self.judge else _with_judge(self, judge)
        if judge.store is not None and run_id:
            # what each item asks, so a later run of another app variant can be paired with this one
            put_item_index(judge.store, run_id, TASK,
                           ((s.id, s.question, s.reference, s.metadata.get("subject")) for s in samples))
        return await run_batch(samples, grader.evaluate, key=lambda s: str(s.id), task=TASK,
                               result_type=VragGrade, store=judge.store, run_id=run_id,
                               limit=limit or judge.concurrency, description="vRAG-Eval grading")

    def evaluate_batch_sync(self, samples: Sequence[RAGSample], *, run_id: str | None = None,
                            limit: int | None = None) -> list[VragGrade | Unscored]:
        return run_sync(self.evaluate_batch(samples, run_id=run_id, limit=limit))


def _with_judge(grader: VragGrader, judge: Judge) -> VragGrader:
    clone = VragGrader.__new__(VragGrader)
    clone.__dict__.update(grader.__dict__)
    clone.judge = judge
    return clone
