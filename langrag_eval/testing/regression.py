"""The regression gate as a test assertion: ``langrag-eval gate`` inside a user's test suite."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

__all__ = ["assert_no_regression"]


def assert_no_regression(run: str, baseline: str, max_drop: Mapping[str, float] | Sequence[str], *,
                         store: Any = None, confidence: float = 0.95, seed: int = 0) -> Any:
    """``langrag-eval gate`` inside a test suite: raise ``AssertionError`` (with the gate's summary)
    when ``run`` drops below ``baseline`` by more than ``max_drop`` allows with confidence, or when
    the gate cannot decide. ``store`` is a ``RunStore`` or a path (default: the CLI's store).
    Returns the :class:`~langrag_eval.compare.GateResult` when the gate passes.

    >>> from langrag_eval import Judge, Sample
    >>> from langrag_eval.grading import VragGrader
    >>> from langrag_eval.runtime import RunStore
    >>> from langrag_eval.testing import ScriptedModel
    >>> store = RunStore(":memory:")
    >>> grader = VragGrader(Judge(ScriptedModel(lambda prompt: "Score: [[5]], Reason: [[Right.]]")))
    >>> samples = [Sample(id=f"q{i}", question=f"Q{i}?", answer="A.", reference="A") for i in range(50)]
    >>> for run in ("main", "branch"):
    ...     _ = store.open_run("grade", {}, run_id=run)
    ...     _ = grader.evaluate_many(samples, run_id=run, store=store)
    >>> assert_no_regression("branch", "main", {"accept_rate": 0.02}, store=store).exit_code
    0
    """
    from ..compare import format_gate, gate_runs  # the gate needs the stores and stats; tests often do not
    from ..runtime import DEFAULT_STORE, RunStore

    opened = store if isinstance(store, RunStore) else RunStore(store or DEFAULT_STORE)
    result = gate_runs(opened, run, baseline, max_drop, confidence=confidence, seed=seed)
    if result.exit_code != 0:
        raise AssertionError("regression gate did not pass\n" + format_gate(result))
    return result
