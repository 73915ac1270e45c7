"""The run session (``langrag_eval.run.session``): one stored run from open to finish, the way every
command runs one. A run stopped before it is recorded resumes with no repeated model call; an
evaluator that raises on one sample leaves that sample unscored and the run recorded; each
evaluator's summary is stored for report, compare and gate; what each streamed item held is stored
for the report's item browser. The command line's handlers hand their run to the session and do
not write the store themselves (checked from their source)."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

from langrag_eval import Sample
from langrag_eval.grading import VragGrader
from langrag_eval.results import Unscored
from langrag_eval.run.session import COMMAND_ARTIFACT, SUMMARY_PREFIX, RunSession
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.runtime.parts import read_parts
from langrag_eval.testing import ScriptedModel

import langrag_eval.cli as cli_package

REPLY = "Score: [[4]], Reason: [[Close.]]"


class FaultyJudge(Judge):
    """Reading the verdict raises on one prompt: the evaluator's side failing, not the model's."""

    async def ask(self, prompt: str, *args: Any, **kwargs: Any) -> Any:
        if "BOOM" in prompt:
            raise RuntimeError("the verdict reader fell over")
        return await super().ask(prompt, *args, **kwargs)


def _samples() -> list[Sample]:
    return [Sample(id=i, question=f"Question {i}?", answer=a, reference="1815", contexts=["Ada was born in 1815."])
            for i, a in (("a", "In 1815."), ("b", "BOOM in 1815."), ("c", "In London."))]


def _open(path: Path) -> tuple[RunSession, ScriptedModel]:
    store = RunStore(path)
    model = ScriptedModel([REPLY])
    session = RunSession.open(store, "run", {"evaluators": ["vrag"]}, inputs={"file": "digest-1"})
    return session, model


def test_a_run_stopped_before_its_record_resumes_with_no_repeated_call(tmp_path: Path) -> None:
    first, model = _open(tmp_path / "runs.db")
    run = first.evaluate(_samples(), {"vrag": VragGrader(FaultyJudge(model, store=first.store))})
    ok_a, failed, ok_c = run["vrag"]
    assert isinstance(failed, Unscored) and failed.cause == "evaluator_error"
    assert not isinstance(ok_a, Unscored) and not isinstance(ok_c, Unscored)
    assert model.calls == 2
    # stopped here (a crash, ^C): nothing recorded, the run unfinished
    assert first.store.run(first.run_id)["finished"] is None
    first.store.close()

    again, model2 = _open(tmp_path / "runs.db")
    assert again.run_id == first.run_id  # the same kind, settings and inputs find the run again
    _, summaries = again.run_and_record(_samples(), {"vrag": VragGrader(FaultyJudge(model2, store=again.store))})
    assert model2.calls == 0  # the two finished items read back; the failed one fails again before its call
    assert again.reuse().reused == 2
    summary = summaries["vrag"]
    assert (summary.n, summary.scored, summary.unscored) == (3, 2, {"evaluator_error": 1})
    stored = again.store.get_artifact(again.run_id, SUMMARY_PREFIX + "vrag")
    assert stored == summary.model_dump(mode="json")
    row = again.store.run(again.run_id)
    assert row["finished"] is not None and row["summary"] == {"samples": 3, "evaluators": ["vrag"]}


def test_a_run_whose_inputs_changed_is_refused_unless_continued(tmp_path: Path) -> None:
    from langrag_eval.errors import LangragError
    session, _ = _open(tmp_path / "runs.db")
    session.store.finish_run(session.run_id, {})
    try:
        RunSession.open(session.store, "run", {"evaluators": ["vrag"]}, run_id=session.run_id,
                        inputs={"file": "digest-2"})
    except LangragError as exc:
        assert "other contents of file" in str(exc)
    else:
        raise AssertionError("a changed input was taken for the same run")
    kept = RunSession.open(session.store, "run", {"evaluators": ["vrag"]}, run_id=session.run_id,
                           inputs={"file": "digest-2"}, allow_changed=True,
                           command={"argv": ["langrag-eval", "run"], "cwd": "/", "inputs": ["d.jsonl"]})
    assert kept.run_id == session.run_id
    assert kept.store.get_artifact(kept.run_id, COMMAND_ARTIFACT)["argv"] == ["langrag-eval", "run"]


def test_a_stream_stores_each_items_contents_when_the_run_is_recorded(tmp_path: Path) -> None:
    session, model = _open(tmp_path / "runs.db")
    grader = VragGrader(FaultyJudge(model, store=session.store))

    async def stream() -> list[tuple[str, Any]]:
        return [(s.id, r) async for s, r in session.astream(
            iter(_samples()), grader, name="vrag", total=3,
            contents=lambda s, r: None if s.id == "c" else {"id": s.id, "question": s.question, "answer": s.answer,
                                                              "contexts": s.context_texts(), "reference": s.reference,
                                                              "long": "x" * 5000})]

    pairs = asyncio.run(stream())
    assert [i for i, _ in pairs] == ["a", "b", "c"] and isinstance(pairs[1][1], Unscored)
    # the last part waits for the record: a run stopped before keeps only the parts stored
    assert session.store.get_artifact(session.run_id, "item_contents") is None
    session.record({"vrag": {"scored": 2}}, finished={"items": 3})
    rows = list(read_parts(session.store.artifacts(session.run_id), "item_contents"))
    assert [r["id"] for r in rows] == ["a", "b"]
    assert rows[0]["answer"] == "In 1815." and rows[0]["contexts"] == ["Ada was born in 1815."]
    assert session.store.get_artifact(session.run_id, "item_contents")["parts"] == 1
    assert session.store.get_artifact(session.run_id, "vrag") == {"scored": 2}


def test_an_evaluators_own_item_contents_are_stored_through_the_session(tmp_path: Path) -> None:
    from langrag_eval.trajectories import TrajectoryMatch, TrajectorySample
    steps = [{"role": "user", "content": "When was Ada born?"}, {"role": "assistant", "content": "In 1815."}]
    store = RunStore(tmp_path / "runs.db")
    session = RunSession.open(store, "trajectories", {})
    session.run_and_record([TrajectorySample(id="t1", question="When?", trajectory=steps, reference=steps)],
                           {"match/strict": TrajectoryMatch(mode="strict")})
    names = [n for n in store.artifacts(session.run_id) if n.startswith("item_contents/")]
    assert names and list(read_parts(store.artifacts(session.run_id), names[0]))[0]["id"] == "t1"
    assert store.get_artifact(session.run_id, SUMMARY_PREFIX + "match/strict")["n"] == 1


def test_the_command_lines_names_agree_with_the_sessions() -> None:
    from langrag_eval.cli._common import COMMAND_ARTIFACT as commands
    from langrag_eval.cli._summaries import SUMMARY_PREFIX as summaries
    assert (commands, summaries) == (COMMAND_ARTIFACT, SUMMARY_PREFIX)


# The handlers that open their run through the session: none opens, streams or records it itself
# (grammar, tournament and the judge audit hand the opened run to their capability, which records it).
THIN = ("grade", "thelma", "run", "trajectories", "conversations", "agents", "synth", "grammar", "tournament",
        "judge")
STORE_WRITES = {"open_run", "finish_run", "put_artifact"}
RUN_LAYER = {"evaluate", "aevaluate", "astream", "record_run", "command_executor", "item_contents_writer"}


def _names(path: Path) -> tuple[set[str], set[str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return attributes, imported


def test_no_command_writes_a_runs_life_into_the_store_itself() -> None:
    root = Path(cli_package.__file__).parent
    offenders = {p.name: sorted(_names(p)[0] & STORE_WRITES) for p in sorted(root.glob("*.py"))}
    assert {n: w for n, w in offenders.items() if w} == {}


def test_the_thin_handlers_leave_running_to_the_session() -> None:
    root = Path(cli_package.__file__).parent
    found = {name: sorted(_names(root / f"{name}.py")[1] & RUN_LAYER) for name in THIN}
    assert {n: used for n, used in found.items() if used} == {}


def _section(html: str, anchor: str) -> str | None:
    import re
    found = re.search(rf'<section id="{anchor}".*?</section>', html, re.S)
    return found.group(0) if found else None


def test_run_draws_each_evaluators_own_report_section_as_its_command_does(tmp_path: Path) -> None:
    """``run --evaluator vrag --evaluator thelma`` stores what the vRAG-Eval and THELMA sections
    read, so its report draws both: the vRAG-Eval section byte for byte as ``grade`` draws it for the
    same answers and replies, THELMA's with its metrics and diagnosis."""
    import json

    from langrag_eval.cli import main
    from langrag_eval.report import build_report

    replies = {"grade one answer": "Score: [[4]], Reason: [[Close to the label.]]",
               "<passage>": "<output>\n- Ada was born in 1815.\n</output>",
               "<message>": "<output>\n- When was Ada born?\n</output>",
               "": "<output>[1]</output>"}
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(replies), encoding="utf-8")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": i, "question": "When was Ada born?", "answer": a, "reference": "1815",
                                        "contexts": ["Ada was born in 1815."]}) + "\n"
                            for i, a in (("a", "Ada was born in 1815."), ("b", "In 1815."))), encoding="utf-8")
    store_path = tmp_path / "runs.sqlite"
    common = ["--judge", f"scripted:{judge}", "--store", str(store_path)]
    assert main(["run", str(data), "--evaluator", "vrag", "--evaluator", "thelma", *common]) == 0
    assert main(["grade", str(data), "--out", str(tmp_path / "g.jsonl"), *common]) == 0
    store = RunStore(store_path)
    runs = {r["kind"]: r["id"] for r in store.runs()}
    assert set(store.artifacts(runs["run"])) >= {"vrag", "thelma"}
    html = {kind: build_report(store, run_id) for kind, run_id in runs.items()}
    assert _section(html["grade"], "vrag") is not None
    assert _section(html["run"], "vrag") == _section(html["grade"], "vrag")
    thelma = _section(html["run"], "thelma")
    assert thelma is not None and "groundedness" in thelma.lower() and "diagnos" in thelma.lower()
    assert "thelma" not in store.artifacts(runs["grade"])


class _Declaring:
    """An evaluator as the session sees it here: its declaration's sections."""

    def __init__(self, *sections: Any) -> None:
        from langrag_eval.results import Declaration
        self._declaration = Declaration(sections=sections)

    def declare(self) -> Any:
        return self._declaration


def test_section_data_is_stored_only_where_one_evaluator_fills_a_name_of_its_own() -> None:
    from langrag_eval.results import Section, Summary
    from langrag_eval.run.session import section_data

    def summary(**details: Any) -> Summary:
        return Summary(n=1, scored=1, details=details)

    evaluators = {"a": _Declaring(Section("A", "mine", "mine")), "b": _Declaring(Section("B", "shared", "shared")),
                  "c": _Declaring(Section("C", "shared", "shared")), "d": _Declaring(Section("D", "x", "summary/a")),
                  "e": _Declaring(Section("E", "empty", "empty")), "f": _Declaring(Section("F"))}
    summaries = {name: summary(figure=name) for name in evaluators} | {"e": summary()}
    # two evaluators on one name: neither; a name the run's records use: none; no details: none
    assert section_data(evaluators, summaries) == {"mine": {"figure": "a"}}
