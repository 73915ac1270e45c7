"""Every verdict format a shipped prompt asks for is still read from an honest reply, now that a
verdict is taken only when every reading of the reply agrees.

For each prompt, the real template is rendered with generated material (answers, documents, claims
that hold no verdict), and the scripted judge replies in the prompt's output format, written the
ways judges write it: spacing, case, markdown, a line of reasoning before it that may repeat the
graded text (quoted or not). ``Judge.ask`` must return the judge's verdict.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.grammar.grading import CorrectnessFormat
from langrag_eval.grammar.reliability import _Statements, _Verdicts
from langrag_eval.prompting.templates import load_prompt
from langrag_eval.runtime import Judge
from langrag_eval.synth.queries import _Questions
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma.formats import BinaryListFormat, ListFormat
from langrag_eval.tournament.evaluators import PointwiseScores, RelevanceJudgment
from langrag_eval.verdicts import BinaryFormat, JsonFormat, PairwiseFormat, ScoreFormat, TagFormat

SENTENCES = ["Paris is the capital of France.", "The warranty lasts three years.",
             "Revenue grew 12% in 2023.", "The office opened in 2012 in Sao Paulo.", "Yes, it does.",
             "The sensor runs on 5 V.", "No refunds after 30 days."]
ws = st.sampled_from(["", " ", "  ", "\t"])
nl = st.sampled_from(["\n", "\n\n", "\r\n", " \n"])


@dataclass(frozen=True)
class Format:
    prompt: str
    fmt: Any
    values: list[Any]
    write: Callable[[Any, Any], str]           # (draw, value) -> the judge's verdict as written
    variables: Callable[[list[str]], dict[str, Any]]
    read: Callable[[Any], Any] = lambda r: r


def _choice(draw: Any, *forms: str) -> str:
    return draw(st.sampled_from(forms))


def _score(draw: Any, v: int) -> str:
    s = draw(ws)
    r = "The answer " + draw(st.sampled_from(["matches the label.", "misses the year.", "is vague."]))
    return _choice(draw, f"Score: [[{v}]], Reason: [[{r}]]", f"score:{s}[[{s}{v}{s}]],{s}reason: [[{r}]]",
                   f"**Score:** [[{v}]], **Reason:** [[{r}]]", f"Score: [[{v}]]\nReason: [[{r}]]",
                   f"SCORE: [[{v}/5]], REASON: [[{r}]]", f"Score:[[{v}]],Reason:[[{r}]]",
                   f"## Score: [[{v}]]\nReason: [[{r}]]")


def _pair(draw: Any, v: str) -> str:
    s, c = draw(ws), draw(st.sampled_from([v, v.lower()]))
    return _choice(draw, f"[[{c}]]", f"Final verdict: [[{c}]]", f"**[[{c}]]**",
                   f"My verdict:{s}[[{s}{c}{s}]]",
                   f"Verdict:\n[[{c}]]", f"**Final verdict:** [[{c}]]")


def _correct(draw: Any, v: bool) -> str:
    w = "Correct" if v else "Incorrect"
    c = draw(st.sampled_from([w, w.lower(), w.upper()]))
    return _choice(draw, f"Judgement: [[{c}]]", f"judgement:{draw(ws)}[[{c}]]", f"**Judgement:** [[{c}]]",
                   f"Final judgement: [[{c}]]", f"Judgment: [[{c}]]", f"Judgement: [[ {c} ]].")


def _yes_no(draw: Any, v: int) -> str:
    w = "Yes" if v else "No"
    return _choice(draw, w, w.lower(), w.upper() + ".", f"**{w}**", f"Answer: {w}",
                   f"Final answer: {w.lower()}")


def _tag(draw: Any, body: str) -> str:
    return _choice(draw, f"<output>{body}</output>", f"<output>\n{body}\n</output>",
                   f"<output>{draw(ws)}{body}{draw(ws)}</output>", f"<OUTPUT>{body}</OUTPUT>")


def _json(draw: Any, obj: dict[str, Any]) -> str:
    text = json.dumps(obj, indent=draw(st.sampled_from([None, 2])), separators=draw(st.sampled_from(
        [(", ", ": "), (",", ":")])))
    return _choice(draw, text, f"```json\n{text}\n```", f"```\n{text}\n```")


FORMATS: dict[str, Format] = {
    "vrag/grade": Format("vrag/grade", ScoreFormat(), [1, 2, 3, 4, 5], _score,
                         lambda t: dict(question=t[1], label=t[2], answer=t[0], rubric="1 to 5", examples=[],
                                        confidence=False), lambda r: r.score),
    "vrag/grade confidence": Format(
        "vrag/grade", ScoreFormat(confidence=True), [1, 3, 5],
        lambda d, v: f"Score: [[{v}]], Confidence: [[{d(st.sampled_from([40, 80, 100]))}]], "
                     "Reason: [[It fits.]]",
        lambda t: dict(question=t[1], label=t[2], answer=t[0], rubric="1 to 5", examples=[], confidence=True),
        lambda r: r.score),
    "tournament/pairwise": Format("tournament/pairwise", PairwiseFormat(), ["A", "B", "C"], _pair,
                                  lambda t: dict(query=t[2], answer_a=t[0], answer_b=t[1], factors="accuracy",
                                                 documents=[{"id": "d1", "text": t[1], "relevance": 2,
                                                             "reason": "on topic"}])),
    "grammar/correctness": Format("grammar/correctness", CorrectnessFormat(), [True, False], _correct,
                                  lambda t: dict(question=t[2], true_answer=t[1], response=t[0])),
    "grammar/selfcheck_compare": Format("grammar/selfcheck_compare", BinaryFormat(), [0, 1], _yes_no,
                                        lambda t: dict(question=t[2], answer=t[0], sample=t[1])),
    "thelma/match_supported": Format("thelma/match_supported", BinaryFormat(), [0, 1],
                                     lambda d, v: _tag(d, str(v)), lambda t: dict(claim=t[0], sources=t[1:])),
    "thelma/batch_supported": Format("thelma/batch_supported", BinaryListFormat(3), [[1, 0, 1], [0, 0, 1]],
                                     lambda d, v: _tag(d, json.dumps(v, separators=d(st.sampled_from(
                                         [(", ", ": "), (",", ":")])))),
                                     lambda t: dict(claims=t[:3], sources=t[1:])),
    "thelma/decompose_claims": Format("thelma/decompose_claims", ListFormat(), [0, 1],
                                      lambda d, v: v, lambda t: dict(text=" ".join(t))),
    "thelma/perturb_alter_fact": Format("thelma/perturb_alter_fact", TagFormat(), [0, 1],
                                        lambda d, v: v, lambda t: dict(response=t[0], sources=t[1:])),
    "tournament/relevance": Format("tournament/relevance", JsonFormat(RelevanceJudgment), [0, 1, 2],
                                   lambda d, v: _json(d, {"reason": "It is on the question's topic.",
                                                          "relevance": v}),
                                   lambda t: dict(query=t[1], document=t[0]), lambda r: r.relevance),
    "tournament/pointwise": Format("tournament/pointwise", JsonFormat(PointwiseScores), [0, 1, 2],
                                   lambda d, v: _json(d, {c: v for c in ("relevance", "accuracy",
                                                                         "completeness", "precision")}),
                                   lambda t: dict(query=t[1], answer=t[0],
                                                  documents=[{"id": "d1", "text": t[2]}]),
                                   lambda r: r.relevance),
    "grammar/ragas_verify": Format("grammar/ragas_verify", JsonFormat(_Verdicts), [[1, 0], [-1, 1]],
                                   lambda d, v: _json(d, {"verdicts": v}),
                                   lambda t: dict(context=t[1:], statements=t[:2]), lambda r: r.verdicts),
    "grammar/ragas_statements": Format("grammar/ragas_statements", JsonFormat(_Statements), [0, 1],
                                       lambda d, v: v, lambda t: dict(question=t[1], answer=t[0]),
                                       lambda r: r.statements),
    "synth/queries": Format("synth/queries", JsonFormat(_Questions), [0, 1], lambda d, v: v,
                            lambda t: dict(passage=" ".join(t), examples=["How long is the warranty?"],
                                           count=2),
                            lambda r: r.questions),
}


@st.composite
def honest(draw: Any, name: str) -> tuple[Any, str, Any]:
    """(rendered prompt, reply, the verdict the reply gives)."""
    f = FORMATS[name]
    texts = draw(st.lists(st.sampled_from(SENTENCES), min_size=3, max_size=4))
    prompt = load_prompt(f.prompt).render(**f.variables(texts))
    value = draw(st.sampled_from(f.values))
    if name in ("thelma/decompose_claims", "thelma/perturb_alter_fact", "grammar/ragas_statements",
                "synth/queries"):  # tasks whose result repeats the graded text
        items = texts[:value + 1]
        if name == "thelma/decompose_claims":
            verdict = _tag(draw, "\n".join("- " + t for t in items))
            value = items
        elif name == "thelma/perturb_alter_fact":
            value = texts[0].replace("three", "five").replace("Paris", "Lyon")
            verdict = _tag(draw, value)
        else:
            key = "statements" if "statements" in name else "questions"
            verdict, value = _json(draw, {key: items}), items
    else:
        verdict = f.write(draw, value)
    said = draw(st.sampled_from(["", "The answer says {t}", 'The answer says "{t}"', "> {t}",
                                 "It reads: {t} That is what I checked."])).format(t=texts[0])
    reply = f"{said}{draw(nl)}{verdict}" if said else verdict
    return prompt, reply, value


@pytest.mark.parametrize("name", list(FORMATS))
def test_an_honest_reply_in_the_prompts_format_is_read(name: str) -> None:
    f = FORMATS[name]

    @settings(max_examples=60, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(honest(name))
    def check(case: tuple[Any, str, Any]) -> None:
        prompt, reply, value = case
        answer = asyncio.run(Judge(ScriptedModel([reply]), repair=False).ask(prompt, f.fmt))
        assert f.read(answer.value) == value, (reply, answer.value)

    check()
