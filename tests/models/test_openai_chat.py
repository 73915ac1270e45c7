"""The ``openai`` judge (:mod:`langrag_eval.models.openai_chat`): the official SDK over HTTP to the
loopback fake of OpenAI's API (``tests/runtime/batch_fakes.py``, written from the API reference).
The ChatModel contract; what ``--judge openai:MODEL`` resolves to; the request it sends; one cache
key with the Batch API, both ways; replies cut by the token budget; provider errors recorded per
item; the SDK's retries kept; one pooled client per event loop."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
import pickle
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from batch_fakes import FakeOpenAI, vrag_reply  # noqa: E402

from langrag_eval.errors import ConfigError, TruncatedReplyError  # noqa: E402
from langrag_eval.grading import VragGrade, VragGrader  # noqa: E402
from langrag_eval.model import GenerationParams, TokenUsage, call_key  # noqa: E402
from langrag_eval.models import resolve_judge  # noqa: E402
from langrag_eval.models.openai_batch import OpenAIBatchAPI  # noqa: E402
from langrag_eval.models.openai_chat import OpenAIChatModel  # noqa: E402
from langrag_eval.results import Unscored  # noqa: E402
from langrag_eval.runtime import Judge, RunStore  # noqa: E402
from langrag_eval.runtime.batching import BatchModel, batch_judge  # noqa: E402
from langrag_eval.runtime.retry import RetryPolicy  # noqa: E402
from langrag_eval.testing import ChatModelContract  # noqa: E402
from langrag_eval.testing.contract import PROMPT  # noqa: E402
from langrag_eval.types import Sample  # noqa: E402

_KEYS = itertools.count()


def short_reply(prompt: str) -> str:
    """A reply within any budget the contract sets (8 tokens and more)."""
    return "reply " + hashlib.sha256(prompt.encode()).hexdigest()[:8]


def _tokens(text: str) -> int:  # the fake's count
    return max(1, len(text) // 4)


class TestOpenAIChatModel(ChatModelContract):
    """Temperature, max tokens and seed reach the server; its usage is passed on unchanged. A reply
    cut at ``max_tokens`` is a TruncatedReplyError carrying the capped text (the judge reads it as a
    generation, never as a verdict: tested below), so the contract's budget check is left out."""

    passed_params = frozenset({"temperature", "max_tokens", "seed"})
    reported_usage = TokenUsage(prompt_tokens=_tokens(PROMPT), completion_tokens=_tokens(short_reply(PROMPT)))
    fake: FakeOpenAI

    @classmethod
    def setup_class(cls) -> None:
        cls.fake = FakeOpenAI(reply=short_reply).__enter__()

    @classmethod
    def teardown_class(cls) -> None:
        cls.fake.__exit__(None, None, None)

    def _model(self, **options: Any) -> OpenAIChatModel:
        return OpenAIChatModel("gpt-4o-mini", base_url=self.fake.base_url, api_key=f"sk-contract-{next(_KEYS)}",
                               **options)

    def make_model(self) -> OpenAIChatModel:
        return self._model()

    def test_max_tokens_bounds_the_reply(self) -> None:
        self._skip("a reply the budget cut is a TruncatedReplyError, not a reply: see the test of cut replies")

    def reply_for(self, prompt: str) -> str:
        return short_reply(prompt)

    def backend_calls(self, model: Any) -> list[dict[str, Any]]:
        return [{"prompt": r["messages"][-1]["content"], **{k: r.get(k) for k in ("temperature", "max_tokens", "seed")}}
                for r in self.fake.chat_requests if r["_key"] == model._settings["api_key"]]

    def failing_model(self, error: Exception) -> OpenAIChatModel:
        model = self._model(max_retries=0, timeout=0.2)
        timeout = isinstance(error, TimeoutError)
        self.fake.chat_faults[model._settings["api_key"]] = ("delay", 1.0) if timeout else error.status_code  # type: ignore[attr-defined]
        return model

    def slow_model(self) -> OpenAIChatModel:
        model = self._model()
        self.fake.chat_faults[model._settings["api_key"]] = ("delay", 0.15)
        return model


class TestOpenAIChatModelOverHttpx(TestOpenAIChatModel):
    """The same contract on the SDK's default transport, httpx."""

    def _model(self, **options: Any) -> OpenAIChatModel:
        return super()._model(http="httpx", **options)


@pytest.fixture
def fake() -> Any:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def env(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-online")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    return fake


def _samples(n: int) -> list[Sample]:
    return [Sample(id=f"s{i}", question=f"How long is warranty {i}?", answer=f"{i} years.",
                   reference=f"{i} years") for i in range(n)]


def _score(prompt: str) -> int:
    return int(vrag_reply(prompt).split("[[")[1].split("]]")[0])


def _prompt(grader: VragGrader, sample: Sample) -> str:
    return grader.render(question=sample.question, answer=sample.answer, label=sample.reference)


# ---------------------------------------------------------------- resolving

def test_openai_specs_resolve_to_the_core_provider(env: FakeOpenAI) -> None:
    by_flag = resolve_judge("openai:gpt-4o-mini")
    by_env = resolve_judge(None, env={"LANGRAG_JUDGE": "openai:gpt-4o-mini"})
    default = resolve_judge(None, env={"OPENAI_API_KEY": "sk-test-online"})
    for resolved in (by_flag, by_env, default):
        assert isinstance(resolved.model, OpenAIChatModel) and resolved.warning is None
    assert (by_flag.model.model_id, default.model.model_id) == ("openai:gpt-4o-mini", "openai:gpt-4o")
    grader = VragGrader(Judge(by_flag.model))
    sample = _samples(1)[0]
    grade = grader.evaluate(sample)
    assert isinstance(grade, VragGrade) and grade.score == _score(_prompt(grader, sample))
    assert env.sync_calls == 1 and env.chat_requests[0]["_key"] == "sk-test-online"


def test_a_missing_key_is_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError) as info:
        resolve_judge("openai:gpt-4o")
    message = str(info.value)
    assert message.startswith("cannot create judge 'openai:gpt-4o'") and "OPENAI_API_KEY" in message
    assert "\n" not in message


def test_without_the_openai_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # what an environment without it gives on import
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ConfigError, match=r"pip install 'langrag-eval\[openai\]'"):
        resolve_judge("openai:gpt-4o")


def test_the_openai_extra_is_declared_and_part_of_all() -> None:
    import tomllib

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    # the SDK with its aiohttp extra: the transport the judge picks by default ("auto")
    assert extras["openai"] == ["openai[aiohttp]>=1.86,<4"]
    assert "openai" in extras["all"][0].split("[", 1)[1].rstrip("]").split(",")


def test_the_installed_sdk_s_aiohttp_extra_is_what_the_judge_picks() -> None:
    from importlib.metadata import requires

    # the SDK's own metadata: its aiohttp extra brings aiohttp (directly, or through httpx-aiohttp)
    wanted = [r for r in requires("openai") or [] if r.replace('"', "'").endswith("extra == 'aiohttp'")]
    assert any(r.startswith(("aiohttp", "httpx-aiohttp", "httpx_aiohttp")) for r in wanted), wanted
    pytest.importorskip("aiohttp")
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    assert model.transport == "aiohttp"


# ---------------------------------------------------------------- what is sent, and the cache key

async def test_every_generation_setting_is_sent_and_in_the_cache_key(fake: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o-mini", base_url=fake.base_url, api_key="sk-k")
    judge = Judge(model, params=GenerationParams(temperature=0.3, max_tokens=400, seed=11))
    reply = await judge.complete("Grade this.")
    sent = fake.chat_requests[-1]
    assert {k: sent[k] for k in ("model", "messages", "temperature", "max_tokens", "seed")} == {
        "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Grade this."}],
        "temperature": 0.3, "max_tokens": 400, "seed": 11}
    assert "response_format" not in sent  # not constrained: the reply is text the runtime parses
    assert not hasattr(model, "sent_params")
    for other in (GenerationParams(temperature=0.3, max_tokens=400, seed=12),
                  GenerationParams(temperature=0.3, max_tokens=401, seed=11),
                  GenerationParams(temperature=0.4, max_tokens=400, seed=11)):
        await judge.complete("Grade this.", params=other)  # each setting is its own key: a new call
    assert fake.sync_calls == 4 and judge.usage.cached == 0
    assert (await judge.complete("Grade this.")) == reply and fake.sync_calls == 4


async def test_a_judgment_bought_through_the_batch_api_is_reused_online(fake: FakeOpenAI, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    api = OpenAIBatchAPI("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)
    batched = VragGrader(batch_judge(BatchModel(api, settle=0.02, poll_interval=0.01), store=store))
    samples = _samples(6)
    first = await batched.aevaluate_many(samples, run_id=store.open_run("grade", {"batch": True}))
    assert len(fake.batches) == 1 and fake.sync_calls == 0

    online = Judge(OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url), store=store)
    assert online.model_id == api.model_id
    again = await VragGrader(online).aevaluate_many(samples, run_id=store.open_run("grade", {"batch": False}))
    assert fake.sync_calls == 0 and online.usage.cached == 6 and online.usage.calls == 0
    assert [g.score for g in again] == [g.score for g in first] == [
        _score(_prompt(batched, s)) for s in samples]
    key = call_key("openai:gpt-4o-mini", _prompt(batched, samples[0]), GenerationParams())
    assert key in fake.lines_seen  # the batch line's custom_id is the online call's key


async def test_a_judgment_bought_online_is_reused_by_the_batch_api(fake: FakeOpenAI, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    online = Judge(OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url), store=store)
    samples = _samples(5)
    first = await VragGrader(online).aevaluate_many(samples, run_id=store.open_run("grade", {"batch": False}))
    assert fake.sync_calls == 5
    api = OpenAIBatchAPI("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)
    judge = batch_judge(BatchModel(api, settle=0.02, poll_interval=0.01), store=store)
    again = await VragGrader(judge).aevaluate_many(samples, run_id=store.open_run("grade", {"batch": True}))
    assert not fake.batches and judge.usage.cached == 5
    assert [g.score for g in again] == [g.score for g in first]


# ---------------------------------------------------------------- replies cut, usage, errors

async def test_a_reply_cut_by_the_budget_is_unscored_truncated_never_parsed(fake: FakeOpenAI) -> None:
    fake.reply = lambda prompt: "Score: [[4]], Reason: [[the label and the answer agree on every point]]"
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)
    with pytest.raises(TruncatedReplyError, match="budget of 6 tokens"):
        await model.generate("Grade this.", GenerationParams(max_tokens=6))
    # the cut reply, "Score: [[4]], Reason: [[the", holds a readable score: it is still not read
    judge = Judge(model, params=GenerationParams(max_tokens=6), retry=RetryPolicy(max_attempts=3))
    grade = await VragGrader(judge).aevaluate(_samples(1)[0])
    assert isinstance(grade, Unscored) and grade.cause == "truncated" and "budget of 6 tokens" in grade.reason
    assert judge.usage.failed == 1 and judge.usage.attempts == 1  # not retried: the same cut again
    whole = await VragGrader(Judge(model, params=GenerationParams(max_tokens=100))).aevaluate(_samples(1)[0])
    assert isinstance(whole, VragGrade) and whole.score == 4


async def test_a_generation_capped_by_its_budget_is_the_capped_answer_and_cached(fake: FakeOpenAI,
                                                                                  tmp_path) -> None:
    fake.reply = lambda prompt: "Paris is the capital of France and its largest city by far"
    store = RunStore(tmp_path / "runs.sqlite")
    generator = Judge(OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url),
                      store=store).with_params(max_tokens=4)
    reply = await generator.complete("Answer: what is the capital of France?")
    assert reply.text == "Paris is the capital of France and its largest city by far"[:16]
    assert generator.usage.calls == 1 and generator.usage.failed == 0
    again = await generator.complete("Answer: what is the capital of France?")
    assert again.text == reply.text and generator.usage.cached == 1 and len(fake.chat_requests) == 1
    # the same cut is still never read as a verdict
    with pytest.raises(TruncatedReplyError):
        await generator.complete("Grade this.", whole=True)


async def test_usage_is_the_servers_or_estimated_when_it_reports_none(fake: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)
    prompt = "Grade this answer. " * 20
    reported = await model.generate(prompt, GenerationParams())
    assert reported.usage == TokenUsage(prompt_tokens=_tokens(prompt), completion_tokens=_tokens(reported.text))
    fake.report_usage = False
    estimated = await model.generate(prompt + "again", GenerationParams())
    assert estimated.usage == TokenUsage(prompt_tokens=(len(prompt) + 5 + 3) // 4,
                                         completion_tokens=(len(estimated.text) + 3) // 4)


async def test_provider_errors_are_recorded_per_item_and_the_rest_graded(fake: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)
    judge = Judge(model, retry=RetryPolicy(max_attempts=3, base_delay=0.01))
    grader = VragGrader(judge)
    samples = _samples(8)
    prompts = [_prompt(grader, s) for s in samples]
    fake.chat_faults.update({prompts[1]: 400, prompts[2]: 422, prompts[3]: "no choices", prompts[4]: "not json",
                             prompts[5]: 409})
    grades = await grader.aevaluate_many(samples)
    for i in (0, 6, 7):
        assert isinstance(grades[i], VragGrade) and grades[i].score == _score(prompts[i])
    reasons = {i: grades[i].reason for i in range(1, 6)}
    assert all(isinstance(grades[i], Unscored) and grades[i].cause == "model_error" for i in range(1, 5))
    assert "OpenAI HTTP 400: fault 400 on demand" in reasons[1] and "OpenAI HTTP 422" in reasons[2]
    assert "a response without a message" in reasons[3] and "a response without a message" in reasons[4]
    assert grades[5].cause == "transient" and "OpenAI HTTP 409" in grades[5].reason  # tried again: 3 times
    # a refused request is not sent again, by the SDK or the runtime (a conflict, 409, is: 3 x 3 tries)
    assert sum(r["messages"][-1]["content"] in prompts[1:5] for r in fake.chat_requests) == 4
    assert judge.usage.failed == 5 and judge.usage.calls == 3


async def test_a_refused_key_stops_the_batch_and_the_judge_sends_nothing_more(fake: FakeOpenAI) -> None:
    from langrag_eval.errors import JudgeUnavailableError

    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-revoked", base_url=fake.base_url)
    judge = Judge(model, concurrency=1, retry=RetryPolicy(max_attempts=3, base_delay=0.01))
    fake.chat_faults["sk-revoked"] = [None, None, 401, None]
    with pytest.raises(JudgeUnavailableError, match="OpenAI HTTP 401: fault 401 on demand; the API key was "
                                                    "refused: set OPENAI_API_KEY"):
        await VragGrader(judge).aevaluate_many(_samples(8))
    assert len(fake.chat_requests) == 3 and judge.unavailable is not None
    with pytest.raises(JudgeUnavailableError):  # the judge stays stopped: nothing is sent
        await judge.complete("anything")
    assert len(fake.chat_requests) == 3


async def test_rate_limits_and_server_errors_are_retried_by_the_sdk_then_the_runtime(fake: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)  # the SDK's 2 retries
    judge = Judge(model, retry=RetryPolicy(max_attempts=2, base_delay=0.01))
    fake.chat_faults["rate limited twice"] = [429, 429]
    reply = await judge.complete("rate limited twice")
    assert reply.text == vrag_reply("rate limited twice") and judge.usage.attempts == 1  # inside the SDK
    fake.chat_faults["down for a while"] = [503, 500, 502]  # one more than the SDK's retries
    reply = await judge.complete("down for a while")
    assert reply.text == vrag_reply("down for a while") and judge.usage.attempts == 1 + 2
    fake.chat_faults["always limited"] = 429
    answer = await judge.ask("always limited", VragGrader(judge).format)
    assert isinstance(answer.value, Unscored) and answer.value.cause == "rate_limit"
    seen = [r["messages"][-1]["content"] for r in fake.chat_requests]
    assert (seen.count("rate limited twice"), seen.count("down for a while"), seen.count("always limited")) == (3, 4, 6)


# ---------------------------------------------------------------- clients and connections

def test_one_client_per_event_loop_and_its_connections_reused(fake: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)
    judge = Judge(model, concurrency=4)

    async def burst(tag: str, n: int) -> list[str]:
        return [r.text for r in await asyncio.gather(*(judge.complete(f"{tag} {i}") for i in range(n)))]

    async def two_bursts() -> tuple[Any, Any]:
        await burst("first", 12)
        opened = fake.connections
        await burst("second", 12)
        return opened, await model._client()

    opened, client = asyncio.run(two_bursts())
    assert opened <= 4 and fake.connections == opened  # the judge's 4 slots, each connection kept
    # a new loop (each synchronous call runs on one) gets a client of its own, as does each thread
    assert asyncio.run(burst("third", 4)) == [vrag_reply(f"third {i}") for i in range(4)]
    again: dict[int, list[str]] = {}
    threads = [threading.Thread(target=lambda t=t: again.update({t: asyncio.run(burst(f"thread {t}", 4))}))
               for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert again == {t: [vrag_reply(f"thread {t} {i}") for i in range(4)] for t in range(3)}
    assert fake.sync_calls == 12 + 12 + 4 + 12 and len(model._clients) <= 5
    assert client.is_closed()  # closed as its loop shut down


@pytest.mark.parametrize("http", ["aiohttp", "httpx"])
def test_clients_close_with_their_loops_without_a_word_on_stderr(fake: FakeOpenAI, http: str,
                                                                 capfd: pytest.CaptureFixture[str]) -> None:
    if http == "aiohttp":
        pytest.importorskip("aiohttp")
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url, http=http)
    assert model.transport == http
    made: list[Any] = []
    new_client = model._new_client
    model._new_client = lambda: made.append(new_client()) or made[-1]  # type: ignore[method-assign]
    grader = VragGrader(Judge(model))
    for sample in _samples(4):  # one event loop per synchronous call
        assert isinstance(grader.evaluate(sample), VragGrade)
        gc.collect()
    assert fake.sync_calls == 4 and len(made) == 3  # the first loop took the client built with the model
    assert all(client.is_closed() for client in made)
    err = capfd.readouterr().err
    assert "Unclosed" not in err and "Event loop is closed" not in err and "never retrieved" not in err, err


def test_an_unknown_transport_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="auto, aiohttp or httpx"):
        OpenAIChatModel("gpt-4o", api_key="sk-k", http="requests")


def test_the_model_travels_to_another_process_by_its_settings(fake: FakeOpenAI) -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url, connections=8)
    copy = pickle.loads(pickle.dumps(model))
    assert (copy.model_id, copy._settings) == (model.model_id, model._settings)
    assert asyncio.run(copy.generate("hello", GenerationParams())).text == vrag_reply("hello")


def test_an_sdk_without_its_aiohttp_client_takes_httpx(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai, "DefaultAioHttpClient", None, raising=False)  # what openai before 1.86 has
    model = OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url)
    assert model.transport == "httpx"
    assert asyncio.run(model.generate("hello", GenerationParams())).text == vrag_reply("hello")
    with pytest.raises(ConfigError, match=r"openai\[aiohttp\]"):
        OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url, http="aiohttp")


class _StickyFake(FakeOpenAI):
    """A server behind a load balancer that pins a client with a cookie (``sticky``), or one that
    sets none; records the ``Cookie`` header of every chat request."""

    def __init__(self, sticky: bool) -> None:
        super().__init__()
        self.sticky, self.cookies_sent = sticky, []

    def route(self, method: str, path: str, query: dict[str, str], body: bytes, headers: Any) -> tuple[int, Any]:
        status, payload = super().route(method, path, query, body, headers)
        if path == "/v1/chat/completions":
            self.cookies_sent.append(headers.get("Cookie"))
            if self.sticky:
                return status, (payload, {"Set-Cookie": "lb=node-7; Path=/"})
        return status, payload


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_cookie_the_server_sets_is_sent_back_and_a_reply_without_one_is_not_searched(
        transport: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import http.cookiejar

    if transport == "aiohttp":
        pytest.importorskip("aiohttp")
    searched = []
    extract = http.cookiejar.CookieJar.extract_cookies
    monkeypatch.setattr(http.cookiejar.CookieJar, "extract_cookies",
                        lambda jar, response, request: searched.append(1) or extract(jar, response, request))
    for sticky in (True, False):
        with _StickyFake(sticky) as fake:
            grader = VragGrader(Judge(OpenAIChatModel("gpt-4o-mini", api_key="sk-k", base_url=fake.base_url,
                                                      http=transport)))
            assert all(isinstance(g, VragGrade) for g in grader.evaluate_many(_samples(3), concurrency=1))
        if sticky:  # the client keeps the server's cookie and sends it back
            assert fake.cookies_sent == [None, "lb=node-7", "lb=node-7"] and len(searched) == 3
        else:  # nothing to keep: no reply was searched for cookies (httpx2 skips them itself;
            # with httpx 0.28, the SDK's before 3.0, only the judge's jar does)
            assert fake.cookies_sent == [None] * 3 and len(searched) == 3
