"""LlamaIndex interfaces of the tournament: the pairwise evaluator as a BaseEvaluator and the one-call tournament over
query engines (contexts from ``source_nodes``)."""

from __future__ import annotations

from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import BaseEvaluator
from llama_index.core.prompts import PromptTemplate as LIPromptTemplate
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.evaluation.langrag import LangragEvaluator, tournament_from_query_engines

from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.tournament import PairwiseEvaluator, TournamentConfig


def judge_reply(prompt: str) -> str:
    if "<document>" in prompt:
        level = 2 if "Paris" in prompt.split("<document>")[1] else 0
        return f'Checked.\n{{"reason": "about Paris: {level == 2}", "relevance": {level}}}'
    first = prompt.split("<answer_a>")[1].split("</answer_a>")[0]
    second = prompt.split("<answer_b>")[1].split("</answer_b>")[0]
    if ("Paris" in first) == ("Paris" in second):
        return "Same.\n[[C]]"
    return "Compared.\n" + ("[[A]]" if "Paris" in first else "[[B]]")


class FixedEngine(CustomQueryEngine):
    answer: str
    passages: list[str]

    def custom_query(self, query_str: str) -> Response:
        nodes = [NodeWithScore(node=TextNode(id_=f"{self.answer}-{i}", text=t), score=1.0 / (i + 1))
                 for i, t in enumerate(self.passages)]
        return Response(response=self.answer, source_nodes=nodes)


def test_pairwise_evaluator_both_orders_and_threshold() -> None:
    model = ScriptedModel(judge_reply)
    ev = LangragEvaluator(PairwiseEvaluator(Judge(model)))
    assert isinstance(ev, BaseEvaluator)
    r = ev.evaluate(query="Capital of France?", response="Lyon", contexts=["Lyon has silk."],
                    second_response="Paris", second_contexts=["Paris is the capital."])
    assert (r.score, r.passing, r.pairwise_source) == (0.0, False, "original")
    assert r.feedback.startswith("A shown first:\nCompared.")
    games = [p for p in model.prompts if "<answer_a>" in p]
    assert len(games) == 2 and all("Lyon has silk." not in p for p in games)


def test_pairwise_position_flip_is_a_tie_and_failures_are_invalid() -> None:
    ev = LangragEvaluator(PairwiseEvaluator(Judge(ScriptedModel(["[[A]]"]))))
    r = ev.evaluate(query="q?", response="one", second_response="two")
    assert (r.score, r.passing, r.pairwise_source) == (0.5, None, "neither")
    bad = LangragEvaluator(PairwiseEvaluator(Judge(ScriptedModel(["cannot decide"])))).evaluate(
        query="q?", response="one", second_response="two")
    assert bad.invalid_result and bad.invalid_reason.startswith("unparseable")
    assert LangragEvaluator(PairwiseEvaluator(Judge(ScriptedModel(["[[A]]"])))).evaluate(query="q?", response="x").invalid_result


def test_prompt_can_be_read_and_replaced() -> None:
    model = ScriptedModel(["[[C]]"])
    ev = LangragEvaluator(PairwiseEvaluator(Judge(model)))
    assert "answer_a" in ev.get_prompts()["pairwise"].get_template()
    ev.update_prompts({"pairwise": LIPromptTemplate(
        "CUSTOM {{ factors }}\n<q>{{ query }}</q><a>{{ answer_a }}</a><b>{{ answer_b }}</b>"
        "{% for d in documents %}{{ d.text }}{% endfor %}\nSay [[A]], [[B]] or [[C]].")})
    ev.evaluate(query="q?", response="one", second_response="two")
    assert all(p.startswith("CUSTOM ") for p in model.prompts)


def test_tournament_from_query_engines() -> None:
    engines = {"good": FixedEngine(answer="Paris", passages=["Paris is the capital.", "France is big."]),
               "bad": FixedEngine(answer="Lyon", passages=["Lyon has silk.", "Paris is the capital."])}
    result = tournament_from_query_engines(engines, {"c1": "Capital of France?", "c2": "Seat of government?"},
                                           Judge(ScriptedModel(judge_reply)),
                                           TournamentConfig(tournaments=20, n_boot=20))
    s = result.summary
    assert [r["agent"] for r in s["ranking"]] == ["good", "bad"]
    assert s["win_matrix"]["good"]["bad"]["win"] == 1.0
    per = s["retrieval"]["per_agent"]
    assert per["good"]["mrr"]["very"] == 1.0 and per["bad"]["mrr"]["very"] == 0.5
    assert s["retrieval"]["documents_judged"] == 2 * 4      # node ids differ per engine: 4 per query
