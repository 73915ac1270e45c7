"""The judge calls of an audit, one resumable batch per battery. Each battery asks the judge through
the package's own evaluators (the RAGElo pairwise judge, the vRAG-Eval grader, THELMA's
groundedness match), so the audit measures the judge as the package uses it, prompts included.

Every battery goes through :func:`langrag_eval.run.aevaluate` under the audit's run id, its
per-item step a :class:`~langrag_eval.evaluator.FunctionEvaluator`: a re-run reads finished items
back and makes no call for them, and an exception on one item is that item's ``Unscored``.

>>> from langrag_eval.audit.data import AnswerItem
>>> claim_of(AnswerItem(id="x", question="Capital of France?", answer="Paris", label="Paris", correct=True))
'The answer to the question "Capital of France?" is: Paris'
>>> pad("Paris.").endswith("can be applied directly by anyone who needs them.")
True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..grading import VragGrade, VragGrader
from ..model import GenerationParams
from ..results import Declaration, Score, ScoreScale, Unscored
from ..evaluator import FunctionEvaluator
from ..run.evaluation import aevaluate
from ..runtime import Judge
from ..thelma.match import Matcher
from ..tournament.pairwise import GameRecord, GameSample, PairwiseEvaluator
from ..types import Sample
from .attacks import ATTACKS, Attack, plant
from .data import AnswerItem, PairItem

__all__ = ["Support", "PADDING", "pad", "claim_of", "judge_pairs", "grade_answers", "regrade",
           "judge_support", "inject", "support_scores"]

# Words that lengthen an answer and add nothing it did not already say: the verbosity probe pads
# the worse response with them and checks whether the judge now prefers it.
PADDING = ("To expand on this a little: the response above addresses the request as it was stated. "
           "It has been written to be clear, complete and easy to follow, and it takes into account "
           "the details that were given. In summary, the points above cover what was asked, and they "
           "can be applied directly by anyone who needs them.")


class Support(BaseModel):
    """A groundedness verdict: 1 when the judge finds the claim supported by the passage."""

    model_config = ConfigDict(frozen=True)

    supported: int


_SUPPORTED = ScoreScale(0, 1, binary=True)


def support_scores(result: Support | Unscored) -> list[Score]:
    """A groundedness verdict as its one typed score, ``supported`` (1 or 0; passed when supported).

    >>> [(s.value, s.passed) for s in support_scores(Support(supported=1))]
    [(1.0, True)]
    """
    if isinstance(result, Unscored):
        return [_SUPPORTED.unscored("supported", result)]
    return [_SUPPORTED.score("supported", float(result.supported), passed=bool(result.supported))]


def pad(text: str) -> str:
    """``text`` with :data:`PADDING` appended as a paragraph of its own."""
    return f"{text.rstrip()}\n\n{PADDING}"


def claim_of(item: AnswerItem) -> str:
    """The claim an answer makes, in one sentence the groundedness match can check on its own."""
    return f'The answer to the question "{item.question.strip()}" is: {item.answer.strip()}'


async def judge_pairs(judge: Judge, pairs: Sequence[PairItem], *, task: str,
                      padded: dict[str, str] | None = None) -> list[GameRecord | Unscored]:
    """Each pair judged in both orders (response 1 as agent ``a``). ``padded`` maps an item id to
    the side ("a" or "b") whose response gets :data:`PADDING`."""
    evaluator = PairwiseEvaluator(judge, threshold=0)
    padded = padded or {}

    async def one(item: PairItem) -> GameRecord | Unscored:
        first, second = item.response1, item.response2
        side = padded.get(item.id)
        if side == "a":
            first = pad(first)
        elif side == "b":
            second = pad(second)
        return await evaluator.aevaluate(GameSample(query=item.query, answer_a=first, answer_b=second,
                                                    agent_a="response1", agent_b="response2", qid=item.id))

    return await _battery(judge, pairs, one, task=task, result_type=GameRecord, key=lambda p: p.id,
                          scorer=evaluator)


class _SupportScores:
    """The groundedness battery's one score, ``supported``, as an evaluator's scores read."""

    def declare(self) -> Declaration:
        return Declaration({"supported": _SUPPORTED})

    def result_scores(self, result: Support) -> list[Score]:
        return support_scores(result)


async def _battery(judge: Judge, items: Sequence[Any], one: Callable[[Any], Awaitable[Any]], *, task: str,
                   result_type: type[BaseModel], key: Callable[[Any], str], scorer: Any) -> list[Any]:
    """One battery as a run: ``one`` per item through :func:`langrag_eval.run.aevaluate`, stored
    under the audit's run id with ``scorer``'s typed scores."""
    step = FunctionEvaluator(one, task, result_type, key_of=key, description=task, scorer=scorer)
    run = await aevaluate(items, {task: step}, store=judge.store, run_id=judge.run_id,
                          concurrency=judge.concurrency)
    return run[task]


def _sample(item: AnswerItem, answer: str | None = None) -> Sample:
    return Sample(id=item.id, question=item.question, answer=answer if answer is not None else item.answer,
                     reference=item.label)


async def grade_answers(judge: Judge, items: Sequence[AnswerItem], *,
                        task: str) -> list[VragGrade | Unscored]:
    """The vRAG-Eval grade of each answer against its reference (temperature 0, as the grader fixes)."""
    grader = VragGrader(judge)
    async def one(item: AnswerItem) -> VragGrade | Unscored:
        return await grader.aevaluate(_sample(item))

    return await _battery(judge, items, one, task=task, result_type=VragGrade, key=lambda i: i.id, scorer=grader)


async def regrade(judge: Judge, items: Sequence[AnswerItem], *, task: str, temperature: float,
                  seed: int) -> list[VragGrade | Unscored]:
    """The same grading prompt asked again at ``temperature``. The ``seed`` is part of the reply
    cache key, so a repeat is a fresh call rather than the cached first reply."""
    grader = VragGrader(judge)
    params = GenerationParams(temperature=temperature, max_tokens=judge.params.max_tokens, seed=seed)

    async def one(item: AnswerItem) -> VragGrade | Unscored:
        prompt = grader.render(question=item.question, answer=item.answer, label=item.label)
        answer = await judge.ask(prompt, grader.format, params=params)
        if isinstance(answer.value, Unscored):
            return answer.value
        v = answer.value
        return VragGrade(score=v.score, accepted=v.score >= grader.threshold, reason=v.reason, raw=answer.raw)

    return await _battery(judge, items, one, task=task, result_type=VragGrade, key=lambda i: i.id, scorer=grader)


async def judge_support(judge: Judge, items: Sequence[AnswerItem], *, task: str) -> list[Support | Unscored]:
    """THELMA's groundedness match (m_gr) on each answer's claim against its passage."""
    matcher = Matcher(judge)

    async def one(item: AnswerItem) -> Support | Unscored:
        if not item.knowledge:
            return Unscored(reason="the item has no passage to check the answer against",
                            cause="invalid_input")
        verdict = (await matcher.asupported([claim_of(item)], [item.knowledge]))[0]
        return verdict if isinstance(verdict, Unscored) else Support(supported=int(verdict))

    return await _battery(judge, items, one, task=task, result_type=Support, key=lambda i: i.id,
                          scorer=_SupportScores())


def attack_for(index: int) -> Attack:
    """The attacks are dealt out in turn, so each is tried on about the same number of items."""
    return ATTACKS[index % len(ATTACKS)]


async def inject(judge: Judge, items: Sequence[AnswerItem], *, task: str) -> list[VragGrade | Unscored]:
    """Each (wrong) answer graded again with an attack planted in it: the ``i``-th item gets
    :func:`attack_for(i) <attack_for>`."""
    grader = VragGrader(judge)
    planted = [(item, attack_for(i)) for i, item in enumerate(items)]
    async def one(p: tuple[AnswerItem, Attack]) -> VragGrade | Unscored:
        return await grader.aevaluate(_sample(p[0], plant(p[0].answer, p[1])))

    return await _battery(judge, planted, one, task=task, result_type=VragGrade,
                          key=lambda p: f"{p[0].id}|{p[1].name}", scorer=grader)
