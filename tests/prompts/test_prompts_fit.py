"""Fitting a long prompt into a small context keeps every delimiter and shortens only block contents."""

from __future__ import annotations

import importlib.util
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.errors import ModelCallError
from langrag_eval.model import GenerationParams
from langrag_eval.prompting.fit import MARKER, fit_prompt, leaf_blocks
from langrag_eval.prompting.templates import load_prompt

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
TAG = re.compile(r"</?[A-Za-z_][\w-]*>")


def _grade_prompt(label: str, answer: str) -> str:
    t = load_prompt("vrag/grade")
    values = {v: "x" for v in t.variables}
    values.update(question="What is the capital of France?", label=label, answer=answer, examples=[],
                  confidence=False)
    return t.render(**values)


def _skeleton(text: str) -> list[str]:
    return TAG.findall(text)


def _old_token_cut(prompt: str, room: int) -> str:
    """What the local judge did before: keep a third of the room from the head, the rest from the
    tail of the token stream (one character per token here)."""
    head = room // 3
    return prompt[:head] + prompt[len(prompt) - (room - head):]


def test_the_old_cut_lost_a_delimiter_and_the_fit_keeps_them_all() -> None:
    prompt = _grade_prompt("Paris " * 300, "Lyon. " * 900)
    room = 3 * (prompt.index("<label>") + 100)  # the head keeps <label>, the tail starts past </label>
    assert len(prompt) - (room - room // 3) > prompt.index("<answer>") + 20
    old = _old_token_cut(prompt, room)
    assert "</label>" not in old and "<answer>" not in old
    assert re.search(r"<label>\nParis[^<]*Lyon", old)  # the answer's text now reads as the Label's
    fitted = fit_prompt(prompt, len, room)
    assert len(fitted) <= room
    assert _skeleton(fitted) == _skeleton(prompt)
    label = re.search(r"<label>\n?(.*?)\n?</label>", fitted, re.S).group(1)  # type: ignore[union-attr]
    answer = re.search(r"<answer>\n?(.*?)\n?</answer>", fitted, re.S).group(1)  # type: ignore[union-attr]
    assert "Lyon" not in label and "Paris" not in answer


def test_instructions_that_do_not_fit_are_refused() -> None:
    prompt = _grade_prompt("Paris", "Lyon")
    with pytest.raises(ModelCallError, match="larger context"):
        fit_prompt(prompt, len, 100)


def test_a_prompt_that_fits_is_unchanged() -> None:
    prompt = _grade_prompt("Paris", "Lyon")
    assert fit_prompt(prompt, len, len(prompt)) is prompt


def test_unmatched_tags_inside_a_block_are_text() -> None:
    prompt = "Go.\n<document>" + "a<br>b</i>" * 50 + "</document>\n<document>short</document>\nEnd."
    assert leaf_blocks(prompt) == [(prompt.index("<document>") + 10, prompt.index("</document>")),
                                   (prompt.rindex("<document>") + 10, prompt.rindex("</document>"))]
    fitted = fit_prompt(prompt, len, 120)
    assert len(fitted) <= 120 and fitted.count("<document>") == fitted.count("</document>") == 2


# ---------------------------------------------------------------- generated prompts

NAMES = ["question", "label", "answer", "document", "answer_a"]
CONTENT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300).map(
    lambda s: s.replace("<", "\u2039"))  # values are neutralised before fitting: no template tag inside


@st.composite
def prompts(draw: st.DrawFn) -> tuple[str, list[str]]:
    blocks = draw(st.lists(st.tuples(st.sampled_from(NAMES), CONTENT, st.booleans()), min_size=1, max_size=6))
    parts, contents = [draw(st.text(max_size=40).map(lambda s: s.replace("<", " ")))], []
    for name, content, nested in blocks:
        if nested:  # an outer block holding a leaf, as <examples><example>... do
            parts.append(f"<outer>\n<{name} id=\"1\">{content}</{name}>\n</outer>\n")
        else:
            parts.append(f"<{name}>\n{content}\n</{name}>\n")
        contents.append(content)
    parts.append("Reply with Score: [[n]].")
    return "".join(parts), contents


COUNTERS = {
    "chars": len,
    "utf8 bytes / 3": lambda s: (len(s.encode("utf-8")) + 2) // 3,
    "words": lambda s: len(s.split()) + s.count("<"),
}


@settings(max_examples=600, derandomize=True, deadline=None)
@given(case=prompts(), counter=st.sampled_from(sorted(COUNTERS)), share=st.floats(0.0, 1.0))
def test_fitting_keeps_every_tag_and_all_text_outside_the_blocks(case: tuple[str, list[str]], counter: str,
                                                                 share: float) -> None:
    prompt, _ = case
    count = COUNTERS[counter]
    spans = leaf_blocks(prompt)
    outside = "".join(prompt[a:b] for a, b in zip([0] + [e for _, e in spans], [s for s, _ in spans] + [len(prompt)]))
    floor = count(outside) + len(spans) * count(MARKER)
    budget = int(floor + share * max(0, count(prompt) - floor))
    try:
        fitted = fit_prompt(prompt, count, budget)
    except ModelCallError:
        assert budget < count(prompt)
        return
    assert count(fitted) <= budget
    assert _skeleton(fitted) == _skeleton(prompt)
    new_spans = leaf_blocks(fitted)
    assert len(new_spans) == len(spans)
    pos_old = pos_new = 0
    for (a, b), (c, d) in zip(spans, new_spans):
        assert fitted[pos_new:c] == prompt[pos_old:a]  # the text between blocks is untouched
        old, new = prompt[a:b], fitted[c:d]
        if new != old:  # shortened: a head and a tail of the original around the marker
            head, _, tail = new.partition(MARKER.strip())
            assert old.startswith(head.rstrip(" ")) and old.endswith(tail.lstrip(" "))
        pos_old, pos_new = b, d
    assert fitted[pos_new:] == prompt[pos_old:]


# ---------------------------------------------------------------- the local judge itself


@pytest.mark.skipif(not HAVE_LLAMA, reason="llama_cpp is not importable: install the extra 'langrag-eval[local]'")
def test_the_local_judge_fits_the_prompt_without_losing_a_delimiter() -> None:
    from langrag_eval.models.llamacpp import LlamaCppModel

    model = LlamaCppModel(n_ctx=512, n_threads=1)
    seen: list[str] = []

    def capture(prompt: list[int], **_: object) -> dict:  # the model is given the prompt's tokens
        seen.append(model._llm.detokenize(prompt).decode("utf-8"))
        return {"choices": [{"text": '{"score": 3, "reason": "x"}', "finish_reason": "stop"}], "usage": {}}

    model._llm.create_completion = capture  # type: ignore[method-assign]
    prompt = _grade_prompt("Paris is the capital. " * 200, "Lyon is the capital. " * 200)
    model._run(prompt, GenerationParams(max_tokens=64), None)
    (sent,) = seen
    assert model.count_tokens(sent) <= 512 - 64 - 8
    assert _skeleton(sent) == _skeleton(prompt)
    assert "Lyon" not in re.search(r"<label>(.*?)</label>", sent, re.S).group(1)  # type: ignore[union-attr]
