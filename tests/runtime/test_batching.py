"""Batch judging through the official ``openai`` and ``anthropic`` SDKs against loopback fakes of
their batch APIs (``batch_fakes.py``): the fakes' lifecycles as the SDKs see them, then the batch
judge on top: one batch per stage, replies by custom_id, failed lines sent once more, then Unscored
with the provider's error, resumption from the run store, batch prices."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_fakes import FakeAnthropic, FakeOpenAI, vrag_reply  # noqa: E402

from langrag_eval.grading import VragGrade, VragGrader  # noqa: E402
from langrag_eval.model import GenerationParams, call_key  # noqa: E402
from langrag_eval.models.anthropic_batch import AnthropicBatchAPI  # noqa: E402
from langrag_eval.models.openai_batch import TAG_FIELD, OpenAIBatchAPI  # noqa: E402
from langrag_eval.results import Unscored  # noqa: E402
from langrag_eval.runtime import Judge, PriceTable, RunStore  # noqa: E402
from langrag_eval.runtime.batch_ledger import BatchLedger  # noqa: E402
from langrag_eval.runtime.batching import BatchModel, BatchRequest, batch_judge, batch_prices  # noqa: E402
from langrag_eval.testing import ScriptedModel, ThelmaScript  # noqa: E402
from langrag_eval.types import Sample  # noqa: E402


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _line(custom_id: str, prompt: str) -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}}


# ---------------------------------------------------------------- the fakes, as the SDKs see them

async def test_openai_fake_lifecycle_order_error_file_list_and_cancel() -> None:
    with FakeOpenAI(seed=1) as fake:
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-fake", max_retries=0)
        fake.fail_plan["c3"] = 1
        upload = await client.files.create(file=("in.jsonl", _jsonl([_line(f"c{i}", f"p{i}") for i in range(8)])),
                                           purpose="batch")
        assert upload.purpose == "batch" and upload.bytes > 0
        batch = await client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                            completion_window="24h", metadata={"k": "v"})
        states = [batch.status]
        while states[-1] not in {"completed", "failed", "expired", "cancelled"}:
            states.append((await client.batches.retrieve(batch.id)).status)
        assert states == ["validating", "in_progress", "finalizing", "completed"]
        done = await client.batches.retrieve(batch.id)
        assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (8, 7, 1)
        output = [json.loads(x) for x in (await client.files.content(done.output_file_id)).text.splitlines()]
        assert sorted(o["custom_id"] for o in output) == [f"c{i}" for i in range(8) if i != 3]
        assert [o["custom_id"] for o in output] != sorted(o["custom_id"] for o in output)  # not input order
        assert output[0]["response"]["body"]["choices"][0]["message"]["content"] == \
            vrag_reply(f"p{output[0]['custom_id'][1:]}")
        errors = [json.loads(x) for x in (await client.files.content(done.error_file_id)).text.splitlines()]
        assert [(e["custom_id"], e["response"]["status_code"]) for e in errors] == [("c3", 500)]

        second = await client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                             completion_window="24h")
        await client.batches.retrieve(second.id)  # in progress
        cancelling = await client.batches.cancel(second.id)
        assert cancelling.status == "cancelling"
        cancelled = await client.batches.retrieve(second.id)
        assert cancelled.status == "cancelled" and cancelled.request_counts.failed == 4
        listed = [b.id async for b in client.batches.list(limit=1)]  # paginated by the SDK, newest first
        assert listed == [second.id, batch.id]
        assert fake.sync_calls == 0


async def test_openai_fake_refuses_a_repeated_custom_id_and_expires() -> None:
    with FakeOpenAI() as fake:
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-fake", max_retries=0)
        upload = await client.files.create(file=("in.jsonl", _jsonl([_line("same", "a"), _line("same", "b")])),
                                           purpose="batch")
        batch = await client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                            completion_window="24h")
        failed = await client.batches.retrieve(batch.id)
        assert failed.status == "failed" and failed.errors.data[0].code == "duplicate_custom_id"
        assert failed.errors.data[0].line == 2 and not fake.lines_seen
        fake.expire = True
        upload = await client.files.create(file=("in.jsonl", _jsonl([_line(f"e{i}", "x") for i in range(4)])),
                                           purpose="batch")
        batch = await client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                            completion_window="24h")
        for _ in range(3):
            expired = await client.batches.retrieve(batch.id)
        assert expired.status == "expired" and expired.request_counts.failed == 2
        errors = (await client.files.content(expired.error_file_id)).text
        assert "batch_expired" in errors
        with pytest.raises(openai.NotFoundError):
            await client.batches.retrieve("batch_missing")


async def test_anthropic_fake_lifecycle_results_order_duplicates_and_cancel() -> None:
    with FakeAnthropic(seed=2) as fake:
        client = anthropic.AsyncAnthropic(base_url=fake.base_url, api_key="sk-ant-fake", max_retries=0)
        requests = [{"custom_id": f"r{i}", "params": {"model": "m", "max_tokens": 64,
                                                      "messages": [{"role": "user", "content": f"p{i}"}]}}
                    for i in range(6)]
        with pytest.raises(anthropic.BadRequestError, match="duplicate custom_id"):
            await client.messages.batches.create(requests=[requests[0], requests[0]])
        fake.fail_plan["r2"] = 1
        batch = await client.messages.batches.create(requests=requests)
        assert batch.processing_status == "in_progress" and batch.request_counts.processing == 6
        ended = await client.messages.batches.retrieve(batch.id)
        assert ended.processing_status == "ended" and ended.request_counts.errored == 1
        results = [r async for r in await client.messages.batches.results(batch.id)]
        assert sorted(r.custom_id for r in results) == [f"r{i}" for i in range(6)]
        assert [r.custom_id for r in results] != [f"r{i}" for i in range(6)]
        by_id = {r.custom_id: r.result for r in results}
        assert by_id["r2"].type == "errored" and by_id["r2"].error.error.type == "api_error"
        assert by_id["r4"].message.content[0].text == vrag_reply("p4")
        fake.hold = True
        other = await client.messages.batches.create(requests=requests[:2])
        assert (await client.messages.batches.cancel(other.id)).processing_status == "canceling"
        fake.hold = False
        gone = await client.messages.batches.retrieve(other.id)
        assert gone.processing_status == "ended" and gone.request_counts.canceled == 1
        assert [b.id async for b in client.messages.batches.list(limit=1)] == [other.id, batch.id]


# ---------------------------------------------------------------- the batch judge on the fakes

def _samples(n: int) -> list[Sample]:
    return [Sample(id=f"s{i}", question=f"Which fee applies to case {i}?", answer=f"fee {i}",
                      reference=f"the fee for case {i}") for i in range(n)]


def _score(prompt: str) -> int:
    return int(vrag_reply(prompt).split("[[")[1].split("]]")[0])


def _batch_judge(api, store, **kw) -> Judge:  # noqa: ANN001
    return batch_judge(BatchModel(api, settle=0.05, poll_interval=0.01, **kw), store=store)


def _key(grader: VragGrader, sample: Sample) -> tuple[str, str]:
    """The grader's prompt for ``sample`` and its call key (the batch line's custom_id)."""
    prompt = grader.render(question=sample.question, answer=sample.answer, label=sample.reference)
    return prompt, call_key(grader.judge.model_id, prompt, GenerationParams(temperature=0.0))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_grades_by_custom_id_failed_lines_sent_once_more_then_unscored(provider: str, tmp_path) -> None:
    Fake, API = (FakeOpenAI, OpenAIBatchAPI) if provider == "openai" else (FakeAnthropic, AnthropicBatchAPI)
    with Fake(seed=7) as fake:
        api = API("judge-model", api_key="k", base_url=fake.base_url)
        store = RunStore(tmp_path / "runs.sqlite")
        statuses: list[str] = []
        grader = VragGrader(_batch_judge(api, store, on_status=statuses.append))
        samples = _samples(30)
        keys = {s.id: _key(grader, s) for s in samples}
        # s1 fails once (sent again, then graded); s2 fails twice (Unscored with the provider's error)
        fake.fail_plan.update({keys["s1"][1]: 1, keys["s2"][1]: 2})
        run = store.open_run("grade", {"b": 1})
        results = await grader.aevaluate_many(samples, run_id=run)
        for sample, result in zip(samples, results):
            if sample.id == "s2":
                assert isinstance(result, Unscored) and result.cause == "model_error"
                assert ("server had an error" in result.reason) or ("api_error" in result.reason)
            else:
                assert isinstance(result, VragGrade) and result.score == _score(keys[sample.id][0])
        assert fake.prompts == {key: prompt for prompt, key in keys.values()}
        assert {k: n for k, n in fake.lines_seen.items() if n != 1} == {keys["s1"][1]: 2, keys["s2"][1]: 2}
        assert len(fake.batches) == 2  # the 30 lines, then the 2 failed ones once more
        assert fake.sync_calls == 0 and any("submitted 30 request(s)" in s for s in statuses)
        usage = store.usage(run)["total"]
        assert usage["calls"] == 30 and usage["failed"] == 1  # calls that reached the provider
        # run again: finished items come from the store and the failed one is not paid for again
        again = await grader.aevaluate_many(samples, run_id=run)
        assert [getattr(r, "score", None) for r in again] == [getattr(r, "score", None) for r in results]
        assert len(fake.batches) == 2


async def test_a_batch_recorded_but_killed_before_its_id_was_stored_is_found_again(tmp_path) -> None:
    with FakeOpenAI() as fake:
        api = OpenAIBatchAPI("gpt-4o-mini", api_key="k", base_url=fake.base_url)
        store = RunStore(tmp_path / "runs.sqlite")
        judge = _batch_judge(api, store)
        grader = VragGrader(judge)
        sample = _samples(1)[0]
        prompt, key = _key(grader, sample)
        # what a command killed between the provider's answer and the store's write leaves behind
        job = BatchLedger(store).intend("openai", api.model_id, [key], attempt=1)
        assert (await api.find(job.tag, job.created - 60)) is None
        await api.submit([BatchRequest(key, prompt, GenerationParams())], tag=job.tag)
        assert (await api.client.batches.retrieve("batch_000001")).metadata == {TAG_FIELD: job.tag}
        result = await grader.aevaluate(sample)
        assert result.score == _score(prompt)
        assert len(fake.batches) == 1 and fake.lines_seen[key] == 1


async def test_thelma_runs_stage_by_stage_one_batch_per_stage_same_results_as_synchronous() -> None:
    from langrag_eval.models.embeddings import FunctionEmbedder
    from langrag_eval import Sample
    from langrag_eval.thelma import Thelma
    embed = FunctionEmbedder(lambda ts: [[float(len(t) % 3 == k) for k in range(3)] + [0.1] for t in ts],
                             model_id="len3")
    script = ThelmaScript(default=1, supported={"It is very nice.": 0})
    samples = [Sample(id=f"t{i}", question=f"Where is office {i}? When does it open?",
                            contexts=[f"Office {i} is in Oslo. It opens at {i} am.", f"Office {i} has a cafe."],
                            answer=f"Office {i} is in Oslo. It opens at {i} am. It is very nice.")
               for i in range(6)]
    sync = await Thelma(Judge(script.model(model_id="openai:m")), embedder=embed).aevaluate_many(samples)
    with FakeOpenAI(reply=script.reply) as fake:
        api = OpenAIBatchAPI("m", api_key="k", base_url=fake.base_url)
        batched = await Thelma(_batch_judge(api, None), embedder=embed).aevaluate_many(samples)
    # the same verdicts; only the token counts differ (the fake counts them, the scripted model estimates)
    assert [r.model_dump(exclude={"usage"}) for r in batched] == [r.model_dump(exclude={"usage"}) for r in sync]
    assert [r.usage.calls for r in batched] == [r.usage.calls for r in sync]
    assert len(fake.batches) >= 2  # decomposition first, then the verdicts that need its claims
    assert set(fake.lines_seen.values()) == {1} and fake.sync_calls == 0


def test_batch_prices_are_half_unless_the_table_names_them() -> None:
    table = PriceTable({"openai:gpt-4o": (2.5, 10.0), "anthropic:c": (3.0, 15.0), "anthropic:c@batch": (1.0, 2.0)})
    assert batch_prices(table, "openai:gpt-4o").prices["openai:gpt-4o"] == (1.25, 5.0)
    assert batch_prices(table, "anthropic:c").prices["anthropic:c"] == (1.0, 2.0)
    assert batch_prices(None, "openai:gpt-4o") is None


async def test_expired_lines_are_sent_once_more_and_graded(tmp_path) -> None:
    with FakeOpenAI(seed=4) as fake:
        fake.expire = True
        finish = fake._finish

        def expire_once(batch: dict, final: str) -> None:
            finish(batch, final)
            fake.expire = False  # the window ran out for the first batch only

        fake._finish = expire_once  # type: ignore[method-assign]
        api = OpenAIBatchAPI("gpt-4o-mini", api_key="k", base_url=fake.base_url)
        statuses: list[str] = []
        grader = VragGrader(_batch_judge(api, RunStore(tmp_path / "r.sqlite"), on_status=statuses.append))
        samples = _samples(10)
        results = await grader.aevaluate_many(samples)
        assert [r.score for r in results] == [_score(_key(grader, s)[0]) for s in samples]
        assert [b["status"] for b in fake.batches.values()] == ["expired", "completed"]
        assert [b["request_counts"]["total"] for b in fake.batches.values()] == [10, 5]
        assert any("expired, 10 of 10 done, 5 failed" in s for s in statuses)


async def test_a_failed_line_quoting_the_key_is_stored_and_reported_masked(tmp_path) -> None:
    # A failed line's error, as OpenAI words a refused key, reaches the ledger's ``failures`` column,
    # the Unscored reason and the store: everywhere masked.
    secret = "sk-proj-Q7vL2mX9pR4tK8wN1bZ6cY3d"
    with FakeOpenAI() as fake:
        api = OpenAIBatchAPI("gpt-4o-mini", api_key="k", base_url=fake.base_url)
        path = tmp_path / "runs.sqlite"
        store = RunStore(path)
        grader = VragGrader(_batch_judge(api, store))
        sample = _samples(1)[0]
        fake.fail_plan[_key(grader, sample)[1]] = 2
        fake.line_error = f"Incorrect API key provided: {secret}. You can find your API key at ..."
        result = await grader.aevaluate(sample)
        assert isinstance(result, Unscored) and "Incorrect API key provided: ***" in result.reason
        jobs = BatchLedger(store).jobs("openai", api.model_id)
        assert [j.state for j in jobs] == ["collected", "collected"]
        assert all("Incorrect API key provided: ***" in e for j in jobs for e in j.failures.values())
        store.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("runs.sqlite*"))
    assert b"Incorrect API key provided" in stored and secret.encode() not in stored


async def test_two_different_output_lines_for_one_request_are_a_failure_asked_again(tmp_path) -> None:
    with FakeOpenAI(seed=5) as fake:
        api = OpenAIBatchAPI("judge-model", api_key="k", base_url=fake.base_url)
        store = RunStore(tmp_path / "runs.sqlite")
        grader = VragGrader(_batch_judge(api, store))
        samples = _samples(4)
        keys = {s.id: _key(grader, s) for s in samples}
        fake.twice[keys["s1"][1]] = "Score: [[1]], Reason: [[a second line]]"
        results = await grader.aevaluate_many(samples, run_id=store.open_run("grade", {"b": 1}))
        # s1's two lines disagree: never the last one read; asked again, and again two lines: Unscored
        assert isinstance(results[1], Unscored) and "two different lines" in results[1].reason
        assert fake.lines_seen[keys["s1"][1]] == 2
        assert all(isinstance(r, VragGrade) and r.score == _score(keys[s.id][0])
                   for s, r in zip(samples, results) if s.id != "s1")


async def test_a_reply_holding_a_line_separator_is_read_whole(tmp_path) -> None:
    reply = "Score: [[3]], Reason: [[first part\u2028second part\u2029third]]"
    with FakeOpenAI(reply=lambda prompt: reply) as fake:
        fake.raw_unicode = True  # the output file holds U+2028 unescaped, as JSON allows
        api = OpenAIBatchAPI("judge-model", api_key="k", base_url=fake.base_url)
        store = RunStore(tmp_path / "runs.sqlite")
        results = await VragGrader(_batch_judge(api, store)).aevaluate_many(
            _samples(2), run_id=store.open_run("grade", {"b": 1}))
        assert [r.score for r in results] == [3, 3] and "second part" in results[0].reason
        assert set(fake.lines_seen.values()) == {1}  # paid once each, nothing lost
