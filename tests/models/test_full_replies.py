"""Full replies from a model the user chose, and no cut reply parsed as complete.

The user's model is the packaged GGUF under another name (a hard link): the same weights, but a
path the user gave, so none of the tiny default's caps may apply. The replies the llama.cpp
completion returns are scripted at llama-cpp-python's own boundary (``create_completion``), so every
line of our code between it and the parsed verdict runs."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from langrag_eval.model import GenerationParams
from langrag_eval.prompting.templates import load_prompt
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge
from langrag_eval.thelma.formats import BinaryListFormat, ListFormat
from langrag_eval.verdicts.formats import PairwiseFormat, ScoreFormat
from tests.thelma.thelma_paper import A3_CLAIMS, A6_RESPONSE

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="the local judge needs the extra 'local' (llama-cpp-python)")

# A.6's decomposition with the response's wrong year, as a judge would write it: seven claims, the
# first and last wrong, each longer than any cap the tiny default has.
A6_CLAIMS = [c.replace("1896", "1856") for c in A3_CLAIMS]


def _all_schemas() -> list[dict[str, Any]]:
    from langrag_eval.grammar.grading import CorrectnessFormat
    from langrag_eval.grammar.reliability import _Statements
    from langrag_eval.synth.queries import _Questions
    from langrag_eval.tournament.evaluators import PointwiseScores, RelevanceJudgment
    from langrag_eval.verdicts.formats import JsonFormat, TagFormat

    return [ScoreFormat().json_schema(), PairwiseFormat().json_schema(), ListFormat().json_schema(),
            BinaryListFormat(7).json_schema(), TagFormat().json_schema(), CorrectnessFormat().json_schema(),
            JsonFormat(_Questions).json_schema(), JsonFormat(_Statements).json_schema(),
            JsonFormat(RelevanceJudgment).json_schema(), JsonFormat(PointwiseScores).json_schema()]


@pytest.fixture(scope="module")
def user_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from langrag_eval.models.llamacpp import default_gguf

    path = tmp_path_factory.mktemp("models") / "my-judge.gguf"
    try:
        os.link(default_gguf(), path)
    except OSError:  # another file system: a copy is the same model too
        shutil.copyfile(default_gguf(), path)
    return path


@pytest.fixture(scope="module")
def models(user_gguf: Path):  # noqa: ANN201
    from langrag_eval.models.llamacpp import LlamaCppModel

    return LlamaCppModel(user_gguf, n_ctx=2048, n_threads=1), LlamaCppModel(n_ctx=2048, n_threads=1)


class _Scripted:
    """Stands in for ``Llama.create_completion``: replies from a list, records what it was asked."""

    def __init__(self, *replies: tuple[str, str]) -> None:
        self.replies, self.calls = list(replies), []

    def __call__(self, prompt: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        text, finish = self.replies.pop(0)
        return {"choices": [{"text": text, "finish_reason": finish}],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(text) // 4}}


def _walk(node: Any):  # noqa: ANN202
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_a_user_model_gets_every_schema_without_a_length_limit(models) -> None:  # noqa: ANN001
    user, tiny = models
    assert not user.is_tiny_default and tiny.is_tiny_default
    for schema in _all_schemas():
        enforced, names = user.reply_schema(schema)
        assert names == {}  # its own property names: they are part of the instructions
        for node in _walk(enforced):
            assert "maxLength" not in node
            # a list of a stated size is the format (one verdict per claim), not a cap
            assert "maxItems" not in node or node.get("minItems") == node["maxItems"]
        # every property the format asks for, reasons included; a bare verdict is reasoned first
        props = [p for p in (n.get("properties") for n in _walk(schema)) if isinstance(p, dict)]
        got = [p for p in (n.get("properties") for n in _walk(enforced)) if isinstance(p, dict)]
        assert [set(p) for p in got][1:] == [set(p) for p in props][1:]
        assert set(got[0]) - set(props[0]) <= {"reasoning"}
        if set(got[0]) != set(props[0]):
            assert list(got[0])[0] == "reasoning" and enforced["required"][0] == "reasoning"
    pairwise, _ = user.reply_schema(PairwiseFormat().json_schema())
    assert list(pairwise["properties"]) == ["reasoning", "verdict"]  # RAGElo A.2: explain, then the verdict
    tiny_score, _ = tiny.reply_schema(ScoreFormat().json_schema())
    assert "reason" not in json.dumps(tiny_score)  # the 270M model is not asked for text beside its score


def test_a_users_model_returns_a_long_decomposition_whole(models, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """THELMA's decomposition of the A.6 response, seven claims in full, reaches the verdict as written:
    the wrong year at character 43 of the first claim and the seventh claim both kept."""
    user, _ = models
    script_reply = json.dumps({"items": A6_CLAIMS})
    script = _Scripted((script_reply, "stop"))
    monkeypatch.setattr(user._llm, "create_completion", script)
    prompt = load_prompt("thelma/decompose_claims").render(text=A6_RESPONSE)
    answer = asyncio.run(Judge(user).ask(prompt, ListFormat()))
    assert answer.value == A6_CLAIMS and len(answer.value) == 7 and answer.raw == script_reply
    assert answer.value[0].index("1856") == 43
    grammar = script.calls[0]["grammar"]._grammar
    assert "char*" in grammar and "(char (char" not in grammar  # no bounded repetition of characters
    assert script.calls[0]["max_tokens"] >= 2048 // 4  # a budget fit for a long list, not 192


def test_the_tiny_default_never_passes_a_capped_reply_as_complete(models, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    _, tiny = models
    capped = [c[:32] for c in A6_CLAIMS[:6]]  # what its grammar lets through: 32 characters, 6 items
    monkeypatch.setattr(tiny._llm, "create_completion", _Scripted((json.dumps({"items": capped}), "stop")))
    answer = asyncio.run(Judge(tiny, repair=False).ask("Extract the claims.", ListFormat()))
    assert isinstance(answer.value, Unscored) and answer.value.cause == "truncated"
    assert "items" in answer.value.reason
    # short values below every cap are a complete reply
    monkeypatch.setattr(tiny._llm, "create_completion", _Scripted((json.dumps({"items": ["A is B."]}), "stop")))
    assert asyncio.run(Judge(tiny).ask("Extract the claims again.", ListFormat())).value == ["A is B."]


def test_a_reply_cut_by_its_budget_gets_the_whole_context_once_then_is_truncated(models, monkeypatch) -> None:  # noqa: ANN001
    user, _ = models
    whole = json.dumps({"items": A6_CLAIMS})
    script = _Scripted((whole[:40], "length"), (whole, "stop"))
    monkeypatch.setattr(user._llm, "create_completion", script)
    answer = asyncio.run(Judge(user).ask("Extract the claims, please.", ListFormat()))
    assert answer.value == A6_CLAIMS  # the raised budget was enough
    first, second = (c["max_tokens"] for c in script.calls)
    assert second > first and second + user.count_tokens("Extract the claims, please.") == user._llm.n_ctx()

    script = _Scripted((whole[:40], "length"), (whole[:80], "length"))
    monkeypatch.setattr(user._llm, "create_completion", script)
    answer = asyncio.run(Judge(user).ask("Extract the claims, now.", ListFormat()))
    assert isinstance(answer.value, Unscored) and answer.value.cause == "truncated"
    assert len(script.calls) == 2  # not retried: the same call would be cut the same way
    # a caller's own budget is kept, and a reply it cuts is reported, not parsed
    script = _Scripted(('{"items":["The Chimnabai Clock Tower was completed in 1856."', "length"))
    monkeypatch.setattr(user._llm, "create_completion", script)
    cut = asyncio.run(Judge(user, params=GenerationParams(max_tokens=12)).ask("Claims?", ListFormat()))
    assert isinstance(cut.value, Unscored) and cut.value.cause == "truncated" and len(script.calls) == 1


def test_the_judge_is_named_by_its_file_content_and_seed(models, user_gguf: Path) -> None:  # noqa: ANN001
    from langrag_eval.models.llamacpp import default_gguf
    from langrag_eval.models._file_digest import file_digest

    user, tiny = models
    import hashlib

    want = hashlib.sha256(default_gguf().read_bytes()).hexdigest()
    assert user.sha256 == tiny.sha256 == want == file_digest(user_gguf)
    assert user.model_id == f"local:{user_gguf}@sha256:{want[:16]},seed=0"
    assert tiny.model_id.startswith("local:gemma-3-270m")  # the report's tiny-judge warning keys on it


def test_a_file_digest_is_cached_by_path_size_time_and_inode(tmp_path: Path) -> None:
    from langrag_eval.models._file_digest import file_digest

    model, cache = tmp_path / "m.gguf", tmp_path / "digests.json"
    model.write_bytes(b"first weights")
    first = file_digest(model, cache=cache)
    known = json.loads(cache.read_text(encoding="utf-8"))
    (key,) = known
    known[key] = "f" * 64  # read back, not recomputed, while the file is unchanged
    cache.write_text(json.dumps(known), encoding="utf-8")
    assert file_digest(model, cache=cache) == "f" * 64
    replacement = tmp_path / "other.gguf"
    replacement.write_bytes(b"other weights")
    os.replace(replacement, model)  # another file at the same path: a new inode and content
    second = file_digest(model, cache=cache)
    import hashlib

    assert second == hashlib.sha256(b"other weights").hexdigest() != first
    cache.write_text("not json", encoding="utf-8")  # a damaged cache is rebuilt, not an error
    assert file_digest(model, cache=cache) == second
