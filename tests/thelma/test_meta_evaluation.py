"""The meta-evaluation end to end with a scripted judge: negatives per metric (LLM rewrites through
the judge with prompt files, deterministic ones without a call), scored pairwise, a per-metric
agreement table."""

from __future__ import annotations

import random
import re
import zlib

import numpy as np
import pytest

from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval import Sample
from langrag_eval.thelma import METRICS, MetaEvaluation, Thelma, split_sentences
from langrag_eval.thelma.meta import add_sources, pollute_sources, repeat_sentences

COMPANIES = [("Aldren", 1901, "Leeds", "rope"), ("Brisk", 1950, "Turin", "kettles"),
             ("Corvel", 1875, "Porto", "lenses"), ("Dunmore", 1999, "Tartu", "bicycles")]


def _words(text):
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in ("indeed", "the")]


def _bag(texts):
    out = np.zeros((len(texts), 128), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in _words(t):
            out[i, zlib.crc32(w.encode()) % 128] += 1
    return out


BAG = FunctionEmbedder(_bag, model_id="bag-of-words")


def _entity(text):
    return next((c for c, *_ in COMPANIES if c in text), None)


def _asks(question, text):
    e = _entity(question)
    key = "was founded in" if "founded" in question else "is based in"
    return int(e is not None and f"{e} {key}" in text)


def domain():
    samples, questions = [], {}
    for name, year, city, product in COMPANIES:
        query = f"When was {name} founded and where is it based?"
        questions[query] = [f"When was {name} founded?", f"Where is {name} based?"]
        samples.append(Sample(id=name, question=query,
                                    contexts=[f"{name} was founded in {year}. {name} makes {product}.",
                                             f"{name} is based in {city}."],
                                    answer=f"{name} was founded in {year}. {name} is based in {city}."))

    def essential(key):
        query, fact = key
        return int(_entity(query) == _entity(fact) and ("founded" in fact or "based" in fact))

    def rewrite(kind, text):
        sentences = split_sentences(text)
        if kind == "add_extraneous":
            return text + " Trivia: the office has a red door."
        if kind == "remove_essential":
            return " ".join(sentences[:-1])
        if kind == "rephrase_repeat":
            return " ".join(sentences + [f"Indeed, {s}" for s in sentences])
        if kind == "alter_fact":
            return re.sub(r"\d{4}", lambda m: str(int(m.group()) + 7), text, count=1)
        if kind == "remove_source_facts":
            return " ".join(s for s in sentences if "founded" not in s and "based" not in s)
        raise AssertionError(kind)

    script = ThelmaScript(
        questions=questions,
        source=lambda key: int(any(essential((key[0], f)) for f in split_sentences(key[1]))),
        essential=essential,
        answers=lambda key: 0 if key[1] is None else _asks(key[0], key[1]),
        addresses=lambda key: _asks(key[0], key[1]),
        supported=lambda key: int(key[0] in " ".join(key[1])),
        rewrite=rewrite)
    return samples, script


async def test_meta_evaluation_end_to_end_agreement_table(capsys):
    samples, script = domain()
    model = script.model()
    meta = MetaEvaluation(Thelma(Judge(model), embedder=BAG), seed=3)
    report = await meta.arun(samples)
    print(report.table())
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["metric", "pairs", "agree", "ties", "worse", "unscored", "agreement"]
    assert [r.metric for r in report.rows] == list(METRICS)
    for row in report.rows:
        assert (row.pairs, row.agree, row.unscored, row.agreement) == (4, 4, 0, 1.0), row
    by = {(p.sample, p.metric): p for p in report.pairs}
    assert by[("Aldren", "rp")].original == 1.0 and by[("Aldren", "rp")].negative == pytest.approx(2 / 3)
    assert by[("Aldren", "sd")].negative == 0.0 and by[("Aldren", "sqc")].negative == 0.0
    assert by[("Aldren", "gr")].negative == 0.5
    assert "1908" in by[("Aldren", "gr")].negative_sample.answer
    # LLM perturbations went through the judge with the prompt files; SP1/SP2 negatives did not.
    rewrites = [p for p in model.prompts if "You prepare test data" in p]
    assert len(rewrites) == len(samples) * (4 + 2)   # rp, rqc, sd, gr + sqc once per source
    sp1_neg = by[("Aldren", "sp1")].negative_sample
    assert len(sp1_neg.contexts) == 4 and all(s in sp1_neg.context_texts() for s in samples[0].context_texts())


async def test_failed_rewrites_and_weak_metrics_are_reported_not_hidden():
    samples, script = domain()

    def reply(prompt):
        if "extra statements" in prompt:
            return "I refuse."                      # RP negatives cannot be built
        if "<fact" in prompt:
            return "<output>1</output>"             # an essentiality judge that accepts everything
        return script.reply(prompt)

    meta = MetaEvaluation(Thelma(Judge(ScriptedModel(reply)), embedder=BAG), metrics=("rp", "sp2", "sd"),
                          sd_mode="repeat")
    report = await meta.arun(samples)
    rows = {r.metric: r for r in report.rows}
    assert rows["rp"].unscored == 4 and rows["rp"].agreement is None
    assert rows["sp2"].ties == 4 and rows["sp2"].agreement == 0.0
    assert rows["sd"].agreement == 1.0
    assert "-" in report.table().splitlines()[1]


def test_deterministic_perturbations():
    rng = random.Random(0)
    assert repeat_sentences("A is 1. B is 2.") == "A is 1. B is 2. A is 1. B is 2."
    added = add_sources(["a", "b"], ["x", "y", "z"], rng)
    assert len(added) == 4 and {"a", "b"} <= set(added)
    polluted = pollute_sources(["A.", "B.", "C."], ["X one. X two. X three."], random.Random(1))
    assert polluted[1] == "B." and polluted[0].startswith("A. X") and polluted[2].startswith("C. X")


async def test_single_sample_has_no_pool_for_source_negatives():
    samples, script = domain()
    report = await MetaEvaluation(Thelma(Judge(script.model()), embedder=BAG), metrics=("sp1",)).arun(samples[:1])
    assert report.pairs[0].outcome == "unscored" and "no other sample" in report.pairs[0].reason
