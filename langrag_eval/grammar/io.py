"""Reading other evaluators' verdicts for GRAMMAR's reliability assessment
(``langrag-eval grammar analyze --verdicts``).

A verdicts file is JSONL, one verdict a line: ``qid`` (the dataset id), ``evaluator`` (its name),
``verdict`` (true, false or a score) and optionally ``agent``. A line that is not such an object is a
:class:`~langrag_eval.errors.DataError` naming file, line and field.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "verdicts.jsonl"
>>> _ = p.write_text('{"qid": "q1", "evaluator": "mine", "verdict": true}\\n'
...                  '{"qid": "q2", "evaluator": "mine", "verdict": 0.2, "agent": "rag"}\\n')
>>> read_verdicts(p)
{'mine': {'q1': True, 'rag/q2': 0.2}}
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import DataError
from ..files.tables import jsonl_objects

if TYPE_CHECKING:
    from .reliability import ReliabilitySample

__all__ = ["read_verdicts", "verdict_lookup"]


def read_verdicts(path: str | Path) -> dict[str, dict[str, object]]:
    """``{evaluator: {"agent/qid" or "qid": verdict}}`` from a verdicts file."""
    table: dict[str, dict[str, object]] = {}
    for n, obj in jsonl_objects(path, what="verdicts file"):
        if isinstance(obj, DataError):
            raise obj
        for f in ("qid", "evaluator", "verdict"):
            if f not in obj:
                raise DataError("is missing", path=str(path), line=n, field=f)
        if not isinstance(obj["verdict"], (bool, int, float)) or obj["verdict"] is None:
            raise DataError("must be true, false or a number", path=str(path), line=n, field="verdict")
        key = f"{obj['agent']}/{obj['qid']}" if obj.get("agent") else str(obj["qid"])
        table.setdefault(str(obj["evaluator"]), {})[key] = obj["verdict"]
    return table


def verdict_lookup(verdicts: dict[str, object]) -> Callable[[ReliabilitySample], object]:
    """One evaluator's verdict on a sample (``agent/qid``), else on its query (``qid``), else None:
    the function a :class:`~langrag_eval.grammar.reliability.FunctionVerdict` asks."""
    def verdict(sample: ReliabilitySample) -> object:
        qid = sample.id.split("/", 1)[1] if "/" in sample.id else sample.id
        return verdicts.get(sample.id, verdicts.get(qid))
    return verdict
