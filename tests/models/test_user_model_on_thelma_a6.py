"""THELMA's Appendix A.6 example through a GGUF file the user names (``local:/path/model.gguf``), on the
real model: the decomposition the judge wrote reaches the metric whole, or the item says it was cut.

The user's file is the packaged 270M GGUF under another name (a hard link): the same weights, but a
path the user gave. A model of that size does not decompose A.6 into the paper's seven claims, so
what is asserted is what the package guarantees for any model: the grammar bounds neither a claim's
length nor the number of claims, the claims scored are the reply's claims in full, and a reply that
ran out of tokens is ``Unscored`` with cause ``truncated``, never parsed as complete.

The model runs with a 1,024-token context instead of the default 8,192: every budget here is a share
of the context, so the same guarantees hold, and the model's reply (it repeats a list item until the
budget cuts it) costs about 900 generated tokens instead of 9,900, which took 15 minutes on a
2-core machine shared with other test runs."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from langrag_eval.models import resolve_judge
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge
from langrag_eval import Sample
from langrag_eval.thelma import ListFormat, MetricScore, Thelma
from tests.thelma.thelma_paper import A6_RESPONSE, A6_SOURCE, QUERY

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="the local judge needs the extra 'local' (llama-cpp-python)"),
              pytest.mark.slow]
N_CTX = 1024

# How llama-cpp-python writes a bounded string or list into a grammar: nested optional repetitions
# ("(char (char ...)?)?") or a counted one ("{0,32}"); an open one is a star ("char*").
_BOUNDED = re.compile(r"\)\?\)\?|\{\d*,\d*\}")


def test_a6_through_a_users_gguf_scores_the_judges_whole_decomposition(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from langrag_eval.models import llamacpp
    from langrag_eval.models.llamacpp import _grammar, default_gguf

    path = tmp_path / "my-judge.gguf"
    try:
        os.link(default_gguf(), path)
    except OSError:  # another file system: a copy is the same model too
        shutil.copyfile(default_gguf(), path)
    # Resolved as ``--judge local:PATH`` is, with the smaller context as the constructor's setting.
    monkeypatch.setattr(llamacpp, "LlamaCppModel", functools.partial(llamacpp.LlamaCppModel, n_ctx=N_CTX))
    resolved = resolve_judge(f"local:{path}")
    model = resolved.model
    assert model._llm.n_ctx() == N_CTX
    assert resolved.warning is None and not model.is_tiny_default  # a model of the user's choosing

    # The decomposition asks for the claims as they are: no reasoning beside them, no length limit.
    schema = ListFormat().json_schema()
    assert model.reply_schema(schema) == (schema, {})
    claims_grammar = _grammar(json.dumps(schema))

    calls: list[tuple[dict[str, Any], dict[str, Any], int]] = []
    complete = model._llm.create_completion

    def spy(tokens: list[int], **kwargs: Any) -> Any:
        out = complete(tokens, **kwargs)
        calls.append((kwargs, out["choices"][0], len(tokens)))
        return out

    monkeypatch.setattr(model._llm, "create_completion", spy)
    sample = Sample(question=QUERY, contexts=[A6_SOURCE], answer=A6_RESPONSE)
    result = Thelma(Judge(model), metrics=("gr",)).evaluate(sample)

    for kwargs, _, _ in calls:
        assert not _BOUNDED.search(kwargs["grammar"]._grammar), kwargs["grammar"]._grammar
    decompositions = [(kwargs, choice, n) for kwargs, choice, n in calls if kwargs["grammar"] is claims_grammar]
    assert decompositions, "the judge was never asked for the claims"
    kwargs, choice, prompt_tokens = decompositions[-1]
    assert kwargs["max_tokens"] >= model._llm.n_ctx() // 4  # a budget fit for a long list, not 192
    gr = result.metrics["gr"]
    print(f"A.6 through {model.model_id}: reply {choice['text']!r}, finish {choice['finish_reason']}, "
          f"claims {result.claims}, groundedness {gr}")
    if choice["finish_reason"] == "length":
        # cut by the budget even once raised to all the context had room for: not a decomposition
        assert len(decompositions) == 2 and kwargs["max_tokens"] + prompt_tokens == model._llm.n_ctx()
        assert isinstance(gr, Unscored) and gr.cause == "truncated" and result.claims is None
        return
    # The reply closed its own JSON: every claim it wrote is scored, each as written.
    written = ListFormat().from_json(json.loads(choice["text"]))
    assert result.claims == written
    assert isinstance(gr, MetricScore) and gr.components == written and len(gr.verdicts) == len(written)
    assert gr.score == sum(gr.verdicts) / len(written)
