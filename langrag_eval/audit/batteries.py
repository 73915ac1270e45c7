"""The judge calls of an audit, one resumable batch per battery. Each battery asks the judge through
the package's own evaluators (the RAGElo pairwise judge, the vRAG-Eval grader, THELMA's
groundedness match), so the audit measures the judge as the package uses it, prompts included.

Every battery goes through :func:`langrag_eval.runtime.run_batch` under the audit's run id: a
re-run reads finished items back and makes no call for them.

>>> from langrag_eval.audit.data import AnswerItem
>>> claim_of(AnswerItem(id="x", question="Capital of France?", answer="Paris", label="Paris", correct=True))
'The answer to the question "Capital of France?" is: Paris'
>>> pad("Paris.").endswith("can be applied directly by anyone who needs them.")
True
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from ..grading import VragGrade, VragGrader
from ..model import GenerationParams
from ..results import Score, ScoreScale, Unscored
from ..runtime import Judge, run_batch
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

    return await run_batch(pairs, one, key=lambda p: p.id, task=task, result_type=GameRecord,
                           store=judge.store, run_id=judge.run_id, concurrency=judge.concurrency,
                           description=task, scores=evaluator.scores)


def _sample(item: AnswerItem, answer: str | None = None) -> Sample:
    return Sample(id=item.id, question=item.question, answer=answer if answer is not None else item.answer,
                     reference=item.label)


async def grade_answers(judge: Judge, items: Sequence[AnswerItem], *,
                        task: str) -> list[VragGrade | Unscored]:
    """The vRAG-Eval grade of each answer against its reference (temperature 0, as the grader fixes)."""
    grader = VragGrader(judge)
    return await run_batch(items, lambda i: grader.aevaluate(_sample(i)), key=lambda i: i.id, task=task,
                           result_type=VragGrade, store=judge.store, run_id=judge.run_id,
                           concurrency=judge.concurrency, description=task, scores=grader.scores)


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

    return await run_batch(items, one, key=lambda i: i.id, task=task, result_type=VragGrade,
                           store=judge.store, run_id=judge.run_id, concurrency=judge.concurrency,
                           description=task, scores=grader.scores)


async def judge_support(judge: Judge, items: Sequence[AnswerItem], *, task: str) -> list[Support | Unscored]:
    """THELMA's groundedness match (m_gr) on each answer's claim against its passage."""
    matcher = Matcher(judge)

    async def one(item: AnswerItem) -> Support | Unscored:
        if not item.knowledge:
            return Unscored(reason="the item has no passage to check the answer against",
                            cause="invalid_input")
        verdict = (await matcher.asupported([claim_of(item)], [item.knowledge]))[0]
        return verdict if isinstance(verdict, Unscored) else Support(supported=int(verdict))

    return await run_batch(items, one, key=lambda i: i.id, task=task, result_type=Support,
                           store=judge.store, run_id=judge.run_id, concurrency=judge.concurrency,
                           description=task, scores=support_scores)


def attack_for(index: int) -> Attack:
    """The attacks are dealt out in turn, so each is tried on about the same number of items."""
    return ATTACKS[index % len(ATTACKS)]


async def inject(judge: Judge, items: Sequence[AnswerItem], *, task: str) -> list[VragGrade | Unscored]:
    """Each (wrong) answer graded again with an attack planted in it: the ``i``-th item gets
    :func:`attack_for(i) <attack_for>`."""
    grader = VragGrader(judge)
    planted = [(item, attack_for(i)) for i, item in enumerate(items)]
    return await run_batch(planted, lambda p: grader.aevaluate(_sample(p[0], plant(p[0].answer, p[1]))),
                           key=lambda p: f"{p[0].id}|{p[1].name}", task=task, result_type=VragGrade,
                           store=judge.store, run_id=judge.run_id, concurrency=judge.concurrency,
                           description=task, scores=grader.scores)
