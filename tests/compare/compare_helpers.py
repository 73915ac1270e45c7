"""Runs of known effect, built straight into a run store the way the graders store them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from langrag_eval import Unscored
from langrag_eval.compare import Observation
from langrag_eval.grading import VragGrade, VragGrader
from langrag_eval.runtime import Judge, RunStore, put_item_index
from langrag_eval.runtime.batch import judgment_payload
from langrag_eval.testing import ScriptedModel

GRADER = VragGrader(Judge(ScriptedModel(["unused"])))
SCALES = {name: GRADER.score_scale(name) for name in GRADER.score_names()}


def _stored(result: VragGrade | Unscored) -> dict:
    """A judgment as the batch stores it: the result with the grader's typed scores."""
    return judgment_payload(result, GRADER.scores)


def question(i: int) -> str:
    return f"Question number {i}: what does clause {i} of the policy say?"


def reference(i: int) -> str:
    return f"Clause {i} says the thing numbered {i}."


def put_grade_run(store: RunStore, run_id: str, scores: Sequence[int | None], *, ids: Sequence[str] | None = None,
                  subjects: Sequence[str | None] | None = None, index: bool = True, reason: str = "judge says {s}") -> str:
    """A vRAG-Eval run: ``scores[i]`` is item i's grade (None: unscored, invalid input)."""
    store.open_run("grade", {"name": run_id}, run_id=run_id, judge="scripted")
    ids = list(ids or [f"q{i}" for i in range(len(scores))])
    for i, (item, s) in enumerate(zip(ids, scores)):
        if s is None:
            store.put_judgment(run_id, item, "vrag", _stored(Unscored(
                reason=f"cannot grade item {i}: answer empty", cause="invalid_input")), scored=False)
        else:
            store.put_judgment(run_id, item, "vrag", _stored(VragGrade(
                score=s, accepted=s >= 4, reason=reason.format(s=s, i=i))), scored=True)
    if index:
        put_item_index(store, run_id, "vrag", [(item, question(i), reference(i), (subjects or [None] * len(ids))[i])
                                               for i, item in enumerate(ids)])
    return run_id


def grade_observations(scores: Sequence[int | None], subjects: Sequence[str | None] | None = None) -> list[Observation]:
    out = []
    for i, s in enumerate(scores):
        if s is None:
            out.append(Observation(id=f"q{i}", key=f"k{i}", unscored={"accept_rate": "invalid_input: x",
                                                                       "grade": "invalid_input: x"}, scales=SCALES))
        else:
            out.append(Observation(id=f"q{i}", key=f"k{i}", subject=(subjects or [None] * len(scores))[i],
                                   values={"accept_rate": float(s >= 4), "grade": float(s)}, scales=SCALES))
    return out


def baseline_scores(n: int, seed: int, accept: float = 0.75) -> np.ndarray:
    """Grades 1-5 with about ``accept`` of them 4 or 5."""
    rng = np.random.default_rng(seed)
    accepted = rng.random(n) < accept
    return np.where(accepted, rng.choice([4, 5], size=n), rng.choice([1, 2, 3], size=n))


def perturb(scores: np.ndarray, seed: int, *, lose: float, gain: float) -> np.ndarray:
    """Each accepted item falls to a reject grade with probability ``lose``, each rejected one rises
    with probability ``gain``; the rest keep their grade."""
    rng = np.random.default_rng(seed)
    out = scores.copy()
    u = rng.random(len(scores))
    down = (scores >= 4) & (u < lose)
    up = (scores < 4) & (u < gain)
    out[down] = rng.choice([2, 3], size=int(down.sum()))
    out[up] = rng.choice([4, 5], size=int(up.sum()))
    return out
