"""Judge calls traced as child runs of the evaluation: LangChain callbacks passed to an evaluator
(or inherited from the run it is called in) see one LLM run per model call, under the evaluator's
run, with the token usage; LlamaIndex instrumentation sees one completion start / end per call."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest

pytest.importorskip("langchain_classic")
pytest.importorskip("llama_index.core")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableLambda
from langchain_langrag import LangragPairwiseEvaluator, LangragStringEvaluator, capturing
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.llm import LLMCompletionEndEvent, LLMCompletionStartEvent
from llama_index.evaluation.langrag import LangragEvaluator

from langrag_eval.grading import VragGrader
from langrag_eval.model import estimate_tokens
from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval.thelma import Thelma
from langrag_eval.tournament import PairwiseEvaluator

GRADE = "Score: [[4]], Reason: [[Close to the label.]]"


class Runs(BaseCallbackHandler):
    def __init__(self) -> None:
        self.chains: dict[UUID, tuple[str, UUID | None]] = {}
        self.llm: list[dict[str, Any]] = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
        self.chains[run_id] = (kwargs.get("name") or "", parent_run_id)

    def on_llm_start(self, serialized, prompts, *, run_id, parent_run_id=None, **kwargs):
        self.llm.append({"id": run_id, "parent": parent_run_id, "prompt": prompts[0]})

    def on_llm_end(self, response, *, run_id, **kwargs):
        call = next(c for c in self.llm if c["id"] == run_id)
        call["text"] = response.generations[0][0].text
        call["usage"] = response.llm_output["token_usage"]


def test_callbacks_passed_to_an_evaluator_reach_the_judge_calls() -> None:
    runs, model = Runs(), ScriptedModel([GRADE])
    r = LangragStringEvaluator(VragGrader(Judge(model))).evaluate_strings(prediction="Paris", reference="Paris",
                                                            input="Capital?", callbacks=[runs])
    assert r["raw_score"] == 4
    (call,) = runs.llm
    (evaluation,) = [i for i, (name, _) in runs.chains.items() if name == "vrag"]
    assert call["parent"] == evaluation and call["prompt"] == model.prompts[0] and call["text"] == GRADE
    assert call["usage"] == {"prompt_tokens": estimate_tokens(model.prompts[0]),
                             "completion_tokens": estimate_tokens(GRADE),
                             "total_tokens": estimate_tokens(model.prompts[0]) + estimate_tokens(GRADE)}


def test_every_judge_call_of_thelma_and_a_tournament_game_is_a_child_run() -> None:
    runs = Runs()
    thelma_model = ThelmaScript(default=1).model()
    LangragStringEvaluator(Thelma(Judge(thelma_model), metrics=("gr",)), score="gr").evaluate_strings(
        prediction="Ada was born in 1815.", input="When was Ada born?", contexts=["Ada was born in 1815."],
        callbacks=[runs])
    pair_model = ScriptedModel(["[[A]]"])
    LangragPairwiseEvaluator(PairwiseEvaluator(Judge(pair_model))).evaluate_string_pairs(
        prediction="a", prediction_b="b", input="q", callbacks=[runs])
    parents = {name: i for i, (name, _) in runs.chains.items()}
    assert [c["parent"] for c in runs.llm] == [parents["thelma_gr"]] * thelma_model.calls + \
        [parents["ragelo_pairwise"]] * pair_model.calls


def test_an_evaluator_called_inside_a_langchain_run_nests_under_it_and_is_not_captured() -> None:
    runs, model = Runs(), ScriptedModel([GRADE])
    grader = LangragStringEvaluator(VragGrader(Judge(model)))
    step = RunnableLambda(lambda q: grader.evaluate_strings(prediction="Paris", reference="Paris", input=q),
                          name="grading_step")
    with capturing() as cap:
        step.invoke("Capital?", config={"callbacks": [runs]})
    names = {i: name for i, (name, _) in runs.chains.items()}
    evaluation = next(i for i, n in names.items() if n == "vrag")
    assert names[runs.chains[evaluation][1]] == "grading_step" and runs.llm[0]["parent"] == evaluation
    assert [s.question for s in cap.samples] == ["Capital?"]  # the app's run only, not the evaluation's


def test_cached_replies_are_not_traced_as_model_calls() -> None:
    runs, model = Runs(), ScriptedModel([GRADE])
    ev = LangragStringEvaluator(VragGrader(Judge(model)))
    for _ in range(3):
        ev.evaluate_strings(prediction="Paris", reference="Paris", input="Capital?", callbacks=[runs])
    assert len(runs.llm) == model.calls == 1


class Events(BaseEventHandler):
    seen: list = []

    def handle(self, event, **kwargs):
        if isinstance(event, (LLMCompletionStartEvent, LLMCompletionEndEvent)):
            self.seen.append(event)


def test_llamaindex_instrumentation_sees_the_judge_calls_with_usage() -> None:
    events = Events(seen=[])
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(events)
    try:
        model = ScriptedModel([GRADE])
        r = asyncio.run(LangragEvaluator(VragGrader(Judge(model)), score="grade").aevaluate(query="Capital?", response="Paris", reference="Paris"))
    finally:
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not events]
    assert r.score == 4.0
    start, end = events.seen
    assert isinstance(start, LLMCompletionStartEvent) and start.prompt == model.prompts[0]
    assert isinstance(end, LLMCompletionEndEvent) and end.response.text == GRADE
    assert end.response.raw["usage"]["completion_tokens"] == estimate_tokens(GRADE)
    assert start.span_id == end.span_id and start.span_id  # inside the evaluation's span
