"""Trajectory matches held against the agentevals package itself, run on the same generated
trajectories in every trajectory mode, every argument mode and with per-tool overrides (a mode, a
list of argument paths, a function).

Where the argument comparison is an equivalence (``exact``, ``ignore``, paths) the verdicts must be
equal. Where it is not (``subset``, ``superset``, a function), agentevals pairs calls first-fit and
can refuse a run that a one-to-one pairing exists for; there ours must equal an exhaustive search
over every pairing, and agree with agentevals whenever agentevals agrees with that search."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

agentevals = pytest.importorskip("agentevals.trajectory.match")

from langrag_eval.errors import ConfigError
from langrag_eval.trajectories import Trajectory, argument_matcher, matches

TOOLS = ("search", "weather", "lookup")
args = st.dictionaries(st.sampled_from(["query", "k", "filters"]),
                       st.one_of(st.integers(0, 2), st.dictionaries(st.sampled_from(["year", "lang"]),
                                                                    st.integers(0, 1), max_size=2)),
                       max_size=3)
call = st.builds(lambda name, a: {"name": name, "args": a}, st.sampled_from(TOOLS), args)


@st.composite
def messages(draw):
    out = [{"role": "user", "content": "question"}]
    for i in range(draw(st.integers(0, 3))):
        calls = draw(st.lists(call, max_size=2))  # at most 6 calls: the exhaustive search stays small
        if calls:
            out.append({"role": "assistant", "content": "",
                        "tool_calls": [{"id": f"c{i}{j}", "type": "function",
                                        "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                                       for j, c in enumerate(calls)]})
            out += [{"role": "tool", "content": "result", "tool_call_id": f"c{i}{j}"} for j in range(len(calls))]
        else:
            out.append({"role": "assistant", "content": draw(st.sampled_from(["thinking", "done"]))})
    return out


def _similar(draw, base):
    """A reference drawn close to the run, so that matches are neither all true nor all false."""
    ref = json.loads(json.dumps(base))
    for m in ref:
        for c in m.get("tool_calls", []):
            if draw(st.booleans()):
                a = json.loads(c["function"]["arguments"])
                if a and draw(st.booleans()):
                    a.pop(sorted(a)[0])
                c["function"]["arguments"] = json.dumps(a)
    if draw(st.booleans()):
        ref = list(reversed(ref))
    return ref


@st.composite
def pairs(draw):
    run = draw(messages())
    return run, (draw(messages()) if draw(st.booleans()) else _similar(draw, run))


EQUIVALENCES = [("exact", None), ("ignore", None), ("exact", {"search": ["query"]}),
                ("exact", {"search": "ignore", "weather": ["filters.year"]})]
ORDERS = [("subset", None), ("superset", None), ("exact", {"search": "subset"}),
          ("ignore", {"lookup": lambda a, b: len(a) <= len(b)})]


def theirs(run, ref, mode, args_mode, overrides) -> bool:
    evaluator = agentevals.create_trajectory_match_evaluator(
        trajectory_match_mode=mode, tool_args_match_mode=args_mode, tool_args_match_overrides=overrides)
    return bool(evaluator(outputs=run, reference_outputs=ref)["score"])


def exhaustive(run: Trajectory, ref: Trajectory, mode, args_mode, overrides) -> bool:
    """Every pairing tried: the definition, by brute force."""
    table = {k: argument_matcher(v) for k, v in (overrides or {}).items()}

    def ok(a, b):  # a's arguments first, as the module's text says
        return a.name == b.name and table.get(a.name, argument_matcher(args_mode))(a.arguments, b.arguments)

    def covers(first, second):  # every call of second has its own call in first
        return any(all(ok(first[i], b) for i, b in zip(chosen, second))
                   for chosen in itertools.permutations(range(len(first)), len(second)))

    o, r = run.tool_calls(), ref.tool_calls()
    if mode == "superset":
        return covers(o, r)
    if mode == "subset":
        return covers(r, o)
    if mode == "unordered":
        return covers(o, r) and covers(r, o)
    return len(run.steps) == len(ref.steps) and all(
        a.role == b.role and (a.tool_calls is None) == (b.tool_calls is None)
        and (a.tool_calls is None or (len(a.tool_calls) == len(b.tool_calls) and covers(a.tool_calls, b.tool_calls)))
        for a, b in zip(run.steps, ref.steps))


MODES = ["strict", "unordered", "subset", "superset"]


@settings(max_examples=200, deadline=None)
@given(pairs())
def test_equivalence_modes_give_agentevals_verdicts(pair) -> None:
    run, ref = pair
    for mode in MODES:
        for args_mode, overrides in EQUIVALENCES:
            ours = matches(Trajectory.of(run), Trajectory.of(ref), mode, args=args_mode, overrides=overrides)
            assert ours == theirs(run, ref, mode, args_mode, overrides), (mode, args_mode, overrides)


FIRST_FIT_REFUSALS: list[tuple] = []


@settings(max_examples=200, deadline=None)
@given(pairs())
def test_order_modes_pair_off_one_to_one(pair) -> None:
    run, ref = pair
    for mode in MODES:
        for args_mode, overrides in ORDERS:
            ours = matches(Trajectory.of(run), Trajectory.of(ref), mode, args=args_mode, overrides=overrides)
            assert ours == exhaustive(Trajectory.of(run), Trajectory.of(ref), mode, args_mode, overrides)
            other = theirs(run, ref, mode, args_mode, overrides)
            if other != ours:  # only ever a first-fit refusal of a run a one-to-one pairing accepts
                assert ours and not other
                FIRST_FIT_REFUSALS.append((mode, args_mode))


def test_a_first_fit_refusal_agentevals_makes_and_ours_does_not() -> None:
    # The run calls search twice; the reference's first call fits both run calls, its second only the
    # first. Pairing first-fit gives the first run call to the first reference call and leaves the
    # second reference call none; one to one, both are matched.
    def msg(*arguments):
        return [{"role": "assistant", "content": "", "tool_calls": [
            {"id": str(i), "type": "function", "function": {"name": "search", "arguments": json.dumps(a)}}
            for i, a in enumerate(arguments)]}]
    run, ref = msg({"q": 1, "k": 1}, {"q": 1}), msg({"q": 1}, {"q": 1, "k": 1})
    assert not theirs(run, ref, "superset", "superset", None)
    assert matches(Trajectory.of(run), Trajectory.of(ref), "superset", args="superset")


def test_langchain_messages_read_as_their_openai_form() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    lc = [HumanMessage("Warranty?"), AIMessage("", tool_calls=[{"name": "search", "args": {"query": "w"}, "id": "1"}]),
          ToolMessage("Two years.", tool_call_id="1"), AIMessage("Two years.", name="support")]
    t = Trajectory.of({"messages": lc})
    assert [s.role for s in t.steps] == ["user", "assistant", "tool", "assistant"]
    assert t.answer == "Two years." and t.agents() == ["support"]
    for mode in MODES:
        assert matches(t, t, mode) and theirs(lc, lc, mode, "exact", None)


@pytest.mark.parametrize("bad, message", [
    ("text", "trajectory is a str: pass a list of messages"),
    ([{"role": "robot"}], "trajectory[0]: a message of role 'robot'"),
    ([{"role": "assistant", "tool_calls": [{"function": {"name": "s", "arguments": "{oops"}}]}],
     "trajectory[0].tool_calls[0]: tool arguments are not JSON"),
])
def test_bad_trajectories_are_one_line(bad, message) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Trajectory.of(bad)
