"""The labelled items a judge audit runs on: the shipped PandaLM pairs and HaluEval QA rows (see
``data/README.md`` for provenance and licences), or a user's own graded file, and the stratified
sample ``--max-items`` takes from them.

>>> pairs = load_pairs()
>>> len(pairs), pairs[0].majority in ("a", "b", "tie")
(150, True)
>>> answers = load_answers()
>>> len(answers), sum(a.correct for a in answers)
(200, 100)
>>> [a.correct for a in stratified_sample(answers, lambda a: a.correct, 4, seed=0)].count(True)
2
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from importlib import resources
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from ..errors import ArgumentError, DataError
from ..files.tables import jsonl_objects
from ..grading.io import Columns, read_grading_file

__all__ = ["PairItem", "AnswerItem", "load_pairs", "load_answers", "read_labelled_file",
           "stratified_sample"]

Side = Literal["a", "b", "tie"]
_SIDE: dict[int, Side] = {0: "tie", 1: "a", 2: "b"}
X = TypeVar("X")


class PairItem(BaseModel):
    """Two responses to one instruction, with three human labels (0 tie, 1 first, 2 second better)."""

    model_config = ConfigDict(frozen=True)

    id: str
    query: str
    response1: str
    response2: str
    annotators: tuple[int, ...]

    @property
    def labels(self) -> list[Side]:
        return [_SIDE[a] for a in self.annotators]

    @property
    def majority(self) -> Side | None:
        """The label most annotators gave, None when no label has a majority."""
        side, count = Counter(self.labels).most_common(1)[0]
        return side if count * 2 > len(self.labels) else None


class AnswerItem(BaseModel):
    """An answer to a question, with the reference answer, the human verdict (``correct``) and, where
    the source has them, a 1-5 human grade and the passage the answer should rest on."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    answer: str
    label: str
    correct: bool
    human_score: int | None = None
    knowledge: str | None = None


def _shipped(name: str) -> list[dict]:
    text = resources.files("langrag_eval.audit").joinpath("data", name).read_text(encoding="utf-8")
    # JSON lines end at line feeds only: str.splitlines would also cut a record at U+2028
    return [_whole(obj) for _, obj in jsonl_objects(name, text)]


def _whole(obj: dict | DataError) -> dict:
    if isinstance(obj, DataError):
        raise obj
    return obj


def load_pairs() -> list[PairItem]:
    """The 150 shipped PandaLM pairs; the query is the instruction followed by its input."""
    out = []
    for r in _shipped("pandalm_pairs.jsonl"):
        query = r["instruction"] + (f"\n\n{r['input']}" if r["input"].strip() else "")
        out.append(PairItem(id=r["id"], query=query, response1=r["response1"], response2=r["response2"],
                            annotators=tuple(r["annotators"])))
    return out


def load_answers() -> list[AnswerItem]:
    """The 100 shipped HaluEval rows as 200 items: the right answer (correct) and the hallucinated
    one (not correct), each with the right answer as the reference and the row's passage."""
    out = []
    for r in _shipped("halueval_qa.jsonl"):
        for suffix, answer, correct in (("right", r["right_answer"], True),
                                        ("hallucinated", r["hallucinated_answer"], False)):
            out.append(AnswerItem(id=f"{r['id']}/{suffix}", question=r["question"], answer=answer,
                                  label=r["right_answer"], correct=correct, knowledge=r["knowledge"]))
    return out


def read_labelled_file(path: str | Path, *, human_col: str = "score", columns: Columns | None = None,
                       threshold: int = 4) -> tuple[list[AnswerItem], list[DataError]]:
    """A user's graded file: question, answer and label columns as for ``grade``, and a 1-5 human
    score column as for ``agreement`` (``human_col``). Rows without a usable human score or text are
    left out and reported as issues (file, line, field); a file with no usable row is a DataError."""
    base = columns or Columns()
    cols = Columns(question=base.question, answer=base.answer, label=base.label, id=base.id,
                   humans=(human_col,))
    data = read_grading_file(path, cols)
    issues = list(data.issues)
    items = []
    for s in data.samples:
        score = data.humans.get(str(s.id), {}).get(human_col)
        line = data.lines.get(str(s.id))
        if score is None:
            issues.append(DataError("no 1-5 human score; item left out of the audit", path=str(path),
                                    line=line, field=human_col))
            continue
        if not (s.question.strip() and (s.answer or "").strip() and (s.reference or "").strip()):
            continue  # already reported by read_grading_file
        items.append(AnswerItem(id=str(s.id), question=s.question, answer=s.answer or "",
                                label=s.reference or "", correct=score >= threshold, human_score=score))
    if not items:
        raise DataError(f"no row has a question, answer, label and a 1-5 human score in {human_col!r}",
                        path=str(path))
    return items, issues


def stratified_sample(items: Sequence[X], stratum: Callable[[X], Hashable], max_items: int | None, *,
                      seed: int = 0) -> list[X]:
    """At most ``max_items`` items, each stratum represented in proportion to its size (largest
    remainders get the spare places), drawn with ``seed``; items keep their original order."""
    if max_items is None or max_items >= len(items):
        return list(items)
    if max_items < 1:
        raise ArgumentError("max_items must be at least 1")
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        groups[stratum(item)].append(i)
    quotas = {k: max_items * len(v) / len(items) for k, v in groups.items()}
    take = {k: int(q) for k, q in quotas.items()}
    spare = max_items - sum(take.values())
    for k in sorted(quotas, key=lambda k: (take[k] - quotas[k], str(k)))[:spare]:
        take[k] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for k in sorted(groups, key=str):
        members = list(groups[k])
        rng.shuffle(members)
        chosen.extend(members[:take[k]])
    return [items[i] for i in sorted(chosen)]
