"""What the Ray actors run in the Ray tests, module-level so that actors import it rather than unpickle
code: ``pg_worker``'s judging of N items on a shared PostgreSQL run, a grader that raises on one
sample, a judge model whose first actor dies mid-run, and ``stream_worker``'s streaming of a run."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass

from langrag_eval.grading import VragGrader


@dataclass(frozen=True)
class GradeItems:
    url: str
    log: str
    n: int
    out_dir: str
    latency: float = 0.2
    claim_ttl: float = 3.0
    lead: int = 0  # worker 0 starts once the call log holds this many calls (the others' head start)

    def __call__(self, index: int) -> int:
        os.environ["CLAIM_TTL"] = str(self.claim_ttl)
        from pg_worker import main
        from stream_worker import wait_until
        if index == 0 and self.lead:
            wait_until(lambda: _lines(self.log) >= self.lead, f"the other workers made fewer than {self.lead} calls",
                       timeout=300)
        out = os.path.join(self.out_dir, f"w{index}.json")
        asyncio.run(main(self.url, self.log, self.n, out, self.latency))
        with open(out, encoding="utf-8") as fh:
            return len(json.load(fh))


def _lines(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as fh:
            return sum(1 for _ in fh)
    except FileNotFoundError:
        return 0


class GraderFailingOnQ07(VragGrader):
    """A vRAG grader that raises on the sample ``q07`` (module-level: actors import it)."""

    async def aevaluate(self, sample):
        if sample.id == "q07":
            raise RuntimeError(f"no grade for {sample.id}")
        return await super().aevaluate(sample)


@dataclass(frozen=True)
class DyingModel:
    """The judge's model as each actor makes it: a scripted model, except that the first actor to
    make one (the one that creates ``marker``) exits after ``calls`` calls, as a killed node would.
    The others' models are handed over once it is about to (its ``dying`` file), so its death never depends on how fast each actor started: an actor that started first
    could otherwise judge every item before the doomed one made its calls."""

    replies: dict
    marker: str
    calls: int
    latency: float = 0.05
    timeout: float = 120.0

    def __call__(self):
        from stream_worker import dying, exit_as_killed, wait_until

        from langrag_eval.testing import ScriptedModel
        model = ScriptedModel(self.replies, latency=self.latency)
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            wait_until(lambda: os.path.exists(dying(self.marker)),
                       f"the doomed actor made fewer than {self.calls} calls", self.timeout)
            return model
        generate, limit = model.generate, self.calls

        async def generate_then_die(*args, **kwargs):
            if model.calls >= limit:
                exit_as_killed(self.marker)
            return await generate(*args, **kwargs)

        model.generate = generate_then_die
        return model


@dataclass(frozen=True)
class StreamShare:
    """One actor streaming the whole run (``stream_worker``) on the shared store; the one that
    creates ``marker`` exits after ``die_after`` items, and the other starts once it is about to, so
    the doomed one's death never depends on how fast each actor started. Returns what it yielded
    and the rows it read."""

    url: str
    log: str
    n: int
    chunk: int
    marker: str
    die_after: int
    claim_ttl: float = 2.0

    def __call__(self, index: int) -> tuple[list, int]:
        from stream_worker import Measure, dying, stream, wait_until
        measure = Measure(self.log, marker=self.marker, die_after=self.die_after)
        if not measure.doomed:
            wait_until(lambda: os.path.exists(dying(self.marker)),
                       f"the doomed actor made fewer than {self.die_after} calls")
        return asyncio.run(stream(self.url, self.n, self.chunk, measure, claim_ttl=self.claim_ttl))
