"""``langrag-eval trajectories`` over the trajectories ``capturing()`` recorded from two variants of a
``create_agent`` agent (one calls the order tool with the right order, one with a wrong one): every
match mode and the judge score them as one run each, resumed without a call paid twice, and
``compare`` and ``gate`` read the two runs as any others. Bad input is one line naming file, line
and field."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from langchain_langrag import capturing
from langrag_eval.cli import main
from langrag_eval.compare import compare_runs
from langrag_eval.runtime import RunStore


@tool
def order_status(order_id: str) -> str:
    """Look an order up."""
    return f"Order {order_id} shipped on Monday."


class ScriptedChat(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def captured_rows(order_ids: list[str]) -> list[dict]:
    rows = []
    for i, order in enumerate(order_ids):
        model = ScriptedChat(messages=iter([
            AIMessage(content="", tool_calls=[{"name": "order_status", "args": {"order_id": order}, "id": "c"}]),
            AIMessage(content=f"Order {order} shipped on Monday.")]))
        agent = create_agent(model, tools=[order_status])
        with capturing() as cap:
            agent.invoke({"messages": [{"role": "user", "content": f"Has order {i} shipped?"}]})
        [t] = cap.trajectories
        reference = [{"role": "user", "content": f"Has order {i} shipped?"},
                     {"role": "assistant", "tool_calls": [{"name": "order_status", "args": {"order_id": str(i)}}]},
                     {"role": "tool", "content": "...", "tool_call_id": "c"},
                     {"role": "assistant", "content": "..."}]
        rows.append({"id": f"q{i}", "question": t.question, "trajectory": t.trajectory.model_dump(mode="json"),
                     "reference": reference})
    return rows


def write(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_two_variants_scored_compared_and_gated(tmp_path, capsys) -> None:
    store = str(tmp_path / "runs.sqlite")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"": "Score: [[4]], Reason: [[Looked the order up once.]]"}))
    right = write(tmp_path / "right.jsonl", captured_rows([str(i) for i in range(16)]))
    wrong = write(tmp_path / "wrong.jsonl", captured_rows([str(i) if i < 4 else "99" for i in range(16)]))
    runs = {}
    for name, path in (("right", right), ("wrong", wrong)):
        assert main(["trajectories", path, "--judge", f"scripted:{judge}", "--store", store]) == 0
        out = capsys.readouterr().out
        runs[name] = out.split()[1]
        assert "match/strict: 16 of 16 item(s) scored" in out and "judge: 16 of 16 item(s) scored" in out
        assert re.search(rf"trajectory_strict +mean {1.0 if name == 'right' else 0.25:.3f}", out)
    assert main(["trajectories", right, "--judge", f"scripted:{judge}", "--store", store]) == 0
    assert "judged 0" in capsys.readouterr().out  # resumed: the stored judgments, no call again
    c = compare_runs(RunStore(store), runs["right"], runs["wrong"])
    strict = c.metric("trajectory_strict")
    assert (strict.mean_a, strict.mean_b, strict.n) == (1.0, 0.25, 16)
    assert main(["compare", runs["right"], runs["wrong"], "--store", store]) == 0
    assert "trajectory_superset" in capsys.readouterr().out
    code = main(["gate", runs["wrong"], "--baseline", runs["right"], "--max-drop", "trajectory_strict=0.1",
                 "--store", store])
    assert code == 1 and "trajectory_strict" in capsys.readouterr().out


def test_matches_alone_need_no_judge_and_a_line_without_reference_is_unscored(tmp_path, capsys) -> None:
    rows = captured_rows(["0"])
    rows.append({"id": "no-ref", "trajectory": rows[0]["trajectory"]})
    path = write(tmp_path / "t.jsonl", rows)
    assert main(["trajectories", path, "--match", "superset", "--args", "subset",
                 "--store", str(tmp_path / "r.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "match/superset: 1 of 2 item(s) scored (unscored: invalid_input 1)" in out and "judge:" not in out


@pytest.mark.parametrize("line, message", [
    ('{"id": "a"}', 't.jsonl:2: field "trajectory": expected an object with a \'trajectory\''),
    ('{"trajectory": [{"role": "robot"}]}', 't.jsonl:2: field "trajectory": trajectory[0]: a message of role'),
    ('{"trajectory": [], "reference": "text"}', 't.jsonl:2: field "reference": reference is a str'),
    ("{oops", "t.jsonl:2: not JSON"),
])
def test_bad_lines_are_one_line(tmp_path, monkeypatch, capsys, line, message) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text('{"trajectory": []}\n' + line + "\n")
    assert main(["trajectories", "t.jsonl", "--store", "r.sqlite"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in err[0]


def test_nothing_to_score_is_refused(tmp_path, capsys) -> None:
    path = write(tmp_path / "t.jsonl", [{"trajectory": []}])
    assert main(["trajectories", path, "--match", "none", "--store", str(tmp_path / "r.sqlite")]) == 2
    assert "nothing to score" in capsys.readouterr().err
