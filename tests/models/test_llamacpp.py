"""The local llama.cpp judge (the default Gemma 3 270M GGUF, assembled from its PyPI package) and
the judge resolution rules: --judge spec, LANGRAG_JUDGE, an API key, or the local default."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.errors import ConfigError, TruncatedReplyError
from langrag_eval.models import TINY_MODEL_WARNING, resolve_judge
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import PairwiseFormat, ScoreFormat, ScoreVerdict

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(not HAVE_LLAMA, reason="llama_cpp is not importable: install the extra "
                                 "'langrag-eval[local]' (llama-cpp-python) to run the local judge")

PROMPT = """You grade an answer against a reference label on a scale of 1 to 5.
5 means fully correct, 1 means wrong.

<question>What is the capital of France?</question>
<label>Paris</label>
<answer>The capital of France is Paris.</answer>

Give the score and a short reason."""


@pytest.fixture(scope="module")
def local_default():  # noqa: ANN201
    return resolve_judge(None, env={})  # no spec, no env var, no key: the local default


@needs_llama
@pytest.mark.slow
def test_a_real_constrained_llamacpp_call_parses(local_default) -> None:  # noqa: ANN001
    model = local_default.model
    assert model.constrained and model.model_id.startswith("local:gemma-3-270m-q4_k_m.gguf@sha256:")
    judge = Judge(model)
    answer = asyncio.run(judge.ask(PROMPT, ScoreFormat()))
    assert isinstance(answer.value, ScoreVerdict), answer  # not Unscored: the reply parsed
    assert 1 <= answer.value.score <= 5
    assert json.loads(answer.raw, strict=False)["score"] == answer.value.score  # JSON from the grammar
    assert re.fullmatch(r'\{"score":[1-5]\}', answer.raw)  # compact JSON; no reason asked of the 270M model
    assert judge.usage.calls == 1 and judge.usage.repairs == 0
    assert judge.usage.prompt_tokens > 0 and judge.usage.completion_tokens > 0

    # The same question again comes from the cache; a pairwise verdict is constrained too.
    asyncio.run(judge.ask(PROMPT, ScoreFormat()))
    assert judge.usage.calls == 1 and judge.usage.cached == 1
    pair = asyncio.run(judge.ask("Which answer is better? <answer_a>Paris</answer_a> "
                                 "<answer_b>Lyon</answer_b>", PairwiseFormat()))
    assert pair.value in ("A", "B", "C")


@needs_llama
def test_no_spec_and_no_key_gives_the_local_default_with_the_warning(local_default) -> None:  # noqa: ANN001
    assert local_default.spec == "local"
    assert local_default.warning == TINY_MODEL_WARNING
    assert "NOT meaningful" in local_default.warning
    assert getattr(local_default.model, "is_tiny_default", False)


@needs_llama
def test_env_var_and_spec_pick_the_local_model(local_default) -> None:  # noqa: ANN001
    from langrag_eval.models.llamacpp import default_gguf

    by_env = resolve_judge(None, env={"LANGRAG_JUDGE": "local"})
    assert by_env.model is local_default.model  # one loaded model per path
    path = default_gguf()
    by_path = resolve_judge(f"local:{path}", env={})
    assert by_path.model.model_id == f"local:{path}@sha256:{by_path.model.sha256[:16]},seed=0"
    assert by_path.warning is None  # a user-chosen file is the user's call
    assert not by_path.model.is_tiny_default


def test_a_missing_gguf_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found|local"):
        resolve_judge(f"local:{tmp_path / 'missing.gguf'}", env={})


# ---------------------------------------------------------------- resolution without llama.cpp


def _scripted_file(tmp_path: Path) -> Path:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(["Score: [[3]], Reason: [[x]]"]), encoding="utf-8")
    return path


def test_the_env_var_picks_the_judge(tmp_path: Path) -> None:
    path = _scripted_file(tmp_path)
    resolved = resolve_judge(None, env={"LANGRAG_JUDGE": f"scripted:{path}", "OPENAI_API_KEY": "sk-x"})
    assert isinstance(resolved.model, ScriptedModel) and resolved.warning is None
    assert resolved.spec == f"scripted:{path}"


def test_an_explicit_spec_beats_the_env_var(tmp_path: Path) -> None:
    path = _scripted_file(tmp_path)
    resolved = resolve_judge(f"scripted:{path}", env={"LANGRAG_JUDGE": "nosuch"})
    assert isinstance(resolved.model, ScriptedModel)


def test_an_api_key_selects_openai_gpt_4o_of_the_core_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """With OPENAI_API_KEY and no spec, the judge is openai:gpt-4o, the core's own provider (the
    official SDK; no call is made at construction; its calls: tests/models/test_openai_chat.py)."""
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the SDK's client reads the process environment
    resolved = resolve_judge(None, env={"OPENAI_API_KEY": "sk-test"})
    assert resolved.spec == "openai:gpt-4o" and resolved.warning is None
    assert type(resolved.model).__name__ == "OpenAIChatModel" and resolved.model.model_id == "openai:gpt-4o"


def test_other_provider_models_resolve_through_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    """A provider:model the core does not claim goes to the langchain provider: LangChain's
    init_chat_model builds it (no call is made at construction)."""
    from langchain_core.language_models import FakeListChatModel

    import langchain.chat_models as chat_models

    seen: list[tuple[str, dict]] = []

    def fake_init(spec: str, **kwargs):  # noqa: ANN003, ANN202
        seen.append((spec, kwargs))
        return FakeListChatModel(responses=["Score: [[5]], Reason: [[x]]"])

    monkeypatch.setattr(chat_models, "init_chat_model", fake_init)
    resolved = resolve_judge("anthropic:claude-sonnet-4-5", env={})
    assert seen == [("anthropic:claude-sonnet-4-5", {"temperature": 0})]
    assert type(resolved.model).__name__ == "LangChainModel"
    assert resolved.model.model_id == "anthropic:claude-sonnet-4-5"
    answer = asyncio.run(Judge(resolved.model).ask("grade", ScoreFormat()))
    assert answer.value.score == 5


@pytest.mark.parametrize("spec", ["nosuch", "gpt4", "mystery:model", "local-ish"])
def test_unknown_judge_names_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_judge(spec, env={})
    assert spec in str(info.value)


def test_unknown_names_without_the_langchain_provider_list_the_installed_ones(monkeypatch) -> None:  # noqa: ANN001
    import langrag_eval.models as models

    providers = {k: v for k, v in models.judge_providers().items() if k != "langchain"}
    monkeypatch.setattr(models, "judge_providers", lambda: providers)
    with pytest.raises(ConfigError, match="installed providers are .*local.*scripted"):
        resolve_judge("mystery:model", env={})


# ---------------------------------------------------------------- check-first greedy decoding


@pytest.fixture(scope="module")
def two_decoders():  # noqa: ANN201
    """llama-cpp-python's own sampler chain and the check-first one, on the same default GGUF."""
    from llama_cpp import Llama

    from langrag_eval.models._greedy_grammar import GreedyGrammarLlama
    from langrag_eval.models.llamacpp import _silence_native_logs, default_gguf

    _silence_native_logs()
    path = str(default_gguf())
    return (Llama(model_path=path, n_ctx=1024, n_threads=1, verbose=False),
            GreedyGrammarLlama(model_path=path, n_ctx=1024, n_threads=1, verbose=False))


_SCHEMAS = [ScoreFormat().json_schema(), ScoreFormat(confidence=True).json_schema(),
            PairwiseFormat().json_schema(),
            {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
             "required": ["claims"]}]


@needs_llama
@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=40),
       answer=st.text(min_size=0, max_size=40), schema=st.sampled_from(_SCHEMAS), compact=st.booleans())
def test_check_first_greedy_decoding_equals_llama_cpps_own_chain(two_decoders, question: str, answer: str,
                                                                  schema: dict, compact: bool) -> None:  # noqa: ANN001
    """Offering the grammar the best token first must not change a greedy reply by one token, under
    llama-cpp-python's own JSON grammar and under the local judge's compact one, whose closing
    bracket ends the reply without evaluating it."""
    from llama_cpp import LlamaGrammar

    from langrag_eval.models._reply_limits import capped
    from langrag_eval.models.llamacpp import _grammar

    reference, fast = two_decoders
    prompt = f"Grade the answer.\n<question>{question}</question>\n<answer>{answer}</answer>\nReply in JSON."
    schema_json = json.dumps(capped(schema))
    grammar = _grammar(schema_json) if compact else LlamaGrammar.from_json_schema(schema_json, verbose=False)
    outs = [m.create_completion(prompt, max_tokens=48, temperature=0.0, seed=0, grammar=grammar)
            for m in (reference, fast)]
    assert outs[0]["choices"][0]["text"] == outs[1]["choices"][0]["text"]
    assert outs[0]["choices"][0]["finish_reason"] == outs[1]["choices"][0]["finish_reason"]
    assert outs[0]["usage"] == outs[1]["usage"]
    assert fast.last_sampler is not None  # the check-first path ran, not the fallback chain
    closed = compact and outs[1]["choices"][0]["finish_reason"] == "stop"
    # the reference evaluated the closing token only to sample the end; the check-first one did not
    assert fast.n_tokens == reference.n_tokens - closed
    if closed:
        json.loads(outs[1]["choices"][0]["text"], strict=False)  # what ended it was a complete JSON value


@needs_llama
@pytest.mark.slow
def test_a_full_prefix_cache_lets_go_of_the_state_its_newest_one_covers() -> None:
    """Room for two states, and one task calling three times between two calls of another: each new
    state of the busy task replaces that task's earlier one (the same instructions, kept again), so
    the quiet task's state is still there for its next call. By age alone, it would have gone."""
    from langrag_eval.model import GenerationParams
    from langrag_eval.models._prefix_cache import PrefixCache
    from langrag_eval.models.llamacpp import LlamaCppModel

    def body(path: str) -> str:
        return Path(path).read_text(encoding="utf-8").split("#}\n", 1)[1]

    busy, quiet = body("prompts/thelma/decompose_claims.txt"), body("prompts/tournament/relevance.txt")
    model = LlamaCppModel(n_ctx=2048, n_threads=1)
    model._prefixes = PrefixCache(model._llm, slots=2, budget=0)
    params = GenerationParams(max_tokens=8)
    for prompt in (busy + "1", quiet + "1", busy + "22 more words here", busy + "3", quiet + "2"):
        try:
            asyncio.run(model.generate(prompt, params, schema=ScoreFormat().json_schema()))
        except TruncatedReplyError:
            pass  # a reply cut by the small budget; the prompt's state is kept all the same
    # busy's second call restores; its third starts from the live state; quiet's second restores
    assert model._prefixes.restored == 2 and model._prefixes.reused == 1
    assert len(model._prefixes._states) == 2


def test_the_core_judges_are_registered_in_code_without_any_entry_point(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    """A source checkout that was never pip-installed has no entry points at all; the core's own
    judges are listed and resolved all the same."""
    import langrag_eval.models as models

    monkeypatch.setattr(models, "entry_points", lambda group: [])
    assert sorted(models.judge_providers()) == ["local", "openai", "scripted"]
    path = tmp_path / "replies.json"
    path.write_text('["Score: [[4]], Reason: [[fine]]"]', encoding="utf-8")
    resolved = resolve_judge(f"scripted:{path}", env={})
    assert resolved.model.model_id.startswith("scripted:replies.json@sha256:")
    assert models.judge_providers()["local"].load() is __import__(
        "langrag_eval.models.llamacpp", fromlist=["resolve"]).resolve
    assert models.judge_providers()["openai"].load() is __import__(
        "langrag_eval.models.openai_chat", fromlist=["resolve"]).resolve


@needs_llama
@pytest.mark.slow
def test_a_call_its_caller_gave_up_on_stops_and_frees_the_model(local_default, monkeypatch) -> None:  # noqa: ANN001
    """The retry policy's timeout gives up on a long generation: it stops at its next token instead
    of writing its whole budget, and a call still waiting for the model never starts."""
    from langrag_eval.model import GenerationParams

    model = local_default.model
    runs: list[dict] = []
    complete = model._llm.create_completion

    def spy(tokens, **kwargs):  # noqa: ANN001, ANN202
        out = complete(tokens, **kwargs)
        runs.append(out["usage"])
        return out

    monkeypatch.setattr(model._llm, "create_completion", spy)
    story = GenerationParams(max_tokens=1500)

    async def give_up() -> None:
        long_calls = [asyncio.ensure_future(model.generate(f"Tell a long story about a cat named {name}.", story))
                      for name in ("Tom", "Felix")]  # the second waits for the model
        done, pending = await asyncio.wait(long_calls, timeout=0.5)
        assert not done
        for call in pending:
            call.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        reply = await model.generate("Say hi.", GenerationParams(max_tokens=4))
        assert reply.text and reply.usage.completion_tokens <= 4

    asyncio.run(give_up())
    # the dropped story stopped early; the queued one never ran; the short call ran after them
    assert len(runs) == 2, runs
    assert runs[0]["completion_tokens"] < 1500 and runs[1]["completion_tokens"] <= 4
