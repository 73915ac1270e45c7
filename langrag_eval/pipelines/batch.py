"""Running several agents over many queries, resumably.

Each (agent, query id) pair is one sample of :func:`langrag_eval.run.aevaluate` (the agent's answer
is that pair's result, judged by the executor given): with a run store and a run id, a finished answer is stored as soon as it is made, and running the same batch again
reads it back instead of calling the generator. Failures are recorded as :class:`Unscored` and the
other items go on.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from .agents import six_agents
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="a", text="Cats purr."), Chunk(id="b", text="Dogs bark.")])
>>> agents = six_agents(backend, None, Judge(ScriptedModel(["Dogs bark."])), k=1)[:1]
>>> runs = run_agents(agents, [Query(qid="q1", query="What do dogs do?")])
>>> runs[0].agent, runs[0].qid, runs[0].result.contexts[0].id
('rag-bm25', 'q1', 'b')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from ..results import Unscored
from ..evaluator import FunctionEvaluator
from ..run.evaluation import Executor, aevaluate
from ..runtime import RunStore, synchronous
from .agents import Agent, AgentAnswer
from .io import Query

__all__ = ["AgentRun", "arun_agents", "run_agents", "TASK"]

TASK = "pipelines/answer"


@dataclass(frozen=True)
class AgentRun:
    """One agent's outcome on one query: an :class:`AgentAnswer`, or :class:`Unscored` with the reason."""

    agent: str
    qid: str
    result: AgentAnswer | Unscored

    @property
    def ok(self) -> bool:
        return isinstance(self.result, AgentAnswer)


def item_key(agent: str, qid: str) -> str:
    """The run-store key of one (agent, query) pair; JSON so that no id can collide with another."""
    return json.dumps([agent, qid], ensure_ascii=False)


async def arun_agents(agents: Sequence[Agent], queries: Sequence[Query], *, store: RunStore | None = None,
                      run_id: str | None = None, concurrency: int = 8,
                      description: str | None = None, executor: Executor | None = None) -> list[AgentRun]:
    """Every agent on every query, agent by agent in the order given.

    With ``store`` and ``run_id`` the batch resumes: pairs already answered in that run are read back.
    ``concurrency`` bounds the (agent, query) pairs in flight; the generator's own limiter bounds model
    calls. ``executor``: where the pairs are answered (default: this process).
    """
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise ConfigError(f"agent names must be unique to key their answers, got {names}")
    qids = [q.qid for q in queries]
    if len(set(qids)) != len(qids):
        raise ConfigError("query ids must be unique to key the answers")
    pairs = [(agent, query) for agent in agents for query in queries]

    async def answer(pair: tuple[Agent, Query]) -> AgentAnswer | Unscored:
        agent, query = pair
        return await agent.arun(query.query, qid=query.qid)

    answering = FunctionEvaluator(answer, TASK, AgentAnswer, key_of=lambda p: item_key(p[0].name, p[1].qid),
                                  fingerprint_of=lambda p: (p[0].name, p[1]),
                                  description=description or f"{len(agents)} agents x {len(queries)} queries")
    results = (await aevaluate(pairs, {"answers": answering}, store=store, run_id=run_id,
                               concurrency=concurrency, executor=executor))["answers"]
    return [AgentRun(agent=a.name, qid=q.qid, result=r) for (a, q), r in zip(pairs, results)]


run_agents = synchronous(arun_agents)
