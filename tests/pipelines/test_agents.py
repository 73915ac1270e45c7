"""RAG and RAG-Fusion agents over the embedded backend, with a generator scripted from the prompt."""

from __future__ import annotations

import pytest
from pipeline_corpus import passage_ids, question_of

from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.errors import ConfigError, PromptError
from langrag_eval.pipelines import AGENT_NAMES, AgentAnswer, FusionAgent, RAGAgent, select_agents, six_agents
from langrag_eval.results import Unscored
from langrag_eval.retrieval import Retriever
from langrag_eval.retrieval.fusion import rrf
from langrag_eval.runtime import Judge, RetryPolicy
from langrag_eval.testing import ScriptedModel

IP_QUESTION = "What is the IP rating of the IM72D128?"


def generator(variations: dict[str, str] | None = None, **kwargs) -> tuple[Judge, ScriptedModel]:
    """Variation prompts get the scripted reply for their question; answer prompts get an answer
    naming the passages they were shown, so a test sees what reached the generator."""

    def reply(prompt: str) -> str:
        if "different search queries" in prompt:
            return (variations or {}).get(question_of(prompt), "")
        return "answer from " + ",".join(passage_ids(prompt))

    model = ScriptedModel(reply, **kwargs)
    return Judge(model, retry=RetryPolicy(max_attempts=1, base_delay=0.0)), model


def test_rag_agent_answers_from_the_retrievers_top_k(backend):
    judge, model = generator()
    retriever = Retriever(backend, mode="bm25")
    result = RAGAgent(retriever, judge, k=3).run(IP_QUESTION, qid="q1")

    expected = retriever.retrieve(IP_QUESTION, 3)
    assert isinstance(result, AgentAnswer)
    assert (result.id, result.question, result.agent, result.variations) == ("q1", IP_QUESTION, "rag-bm25", [])
    assert result.contexts == expected and result.contexts[0].id == "mic-ip"
    assert result.answer == "answer from " + ",".join(d.id for d in expected)
    assert model.calls == 1
    assert "IP rating of IP57" in model.prompts[0] and IP_QUESTION in model.prompts[0]


def test_fusion_retrieves_for_the_original_and_each_variation_and_fuses_with_rrf(backend):
    reply = ("Here are some search queries:\n1. IM72D128 sleep mode wake-up\n"
             "2) \"battery microphone listening\"\n3. What is the IP rating of the IM72D128\n"
             "- IM72D128 sleep mode wake-up\n\n4. waterproof MEMS microphone\n5. one too many")
    judge, model = generator({IP_QUESTION: reply})
    retriever = Retriever(backend, mode="bm25")
    result = FusionAgent(retriever, judge, k=4, n_variations=3, depth=5).run(IP_QUESTION, qid="q1")

    assert isinstance(result, AgentAnswer) and result.agent == "fusion-bm25"
    assert result.variations == ["IM72D128 sleep mode wake-up", "battery microphone listening",
                                 "waterproof MEMS microphone"]
    rankings = [[d.id for d in retriever.retrieve(q, 5)] for q in [IP_QUESTION, *result.variations]]
    fused = rrf(rankings, k=60)[:4]
    assert [d.id for d in result.contexts] == [doc_id for doc_id, _ in fused]
    # The fused score is the sum of 1 / (60 + rank) over the lists holding the passage, rank from 1.
    top = result.contexts[0]
    by_hand = sum(1 / (60 + r.index(top.id) + 1) for r in rankings if top.id in r)
    assert top.score == pytest.approx(by_hand)
    assert model.calls == 2 and "Write 3 different search queries" in model.prompts[0]
    assert result.answer == "answer from " + ",".join(d.id for d in result.contexts)


def test_fusion_lets_the_variations_outvote_the_original_query(backend):
    question = "sleep mode of the microphone"
    rewrites = "IM72D128 IP57 rating\nIM72D128 immersion in water\nIP57 waterproof IM72D128"
    judge, _ = generator({question: rewrites})
    retriever = Retriever(backend, mode="bm25")

    plain = RAGAgent(retriever, judge, k=1).run(question)
    fused = FusionAgent(retriever, judge, k=1, n_variations=3).run(question)

    assert plain.contexts[0].id == "mic-sleep"
    assert fused.contexts[0].id == "mic-ip"


def test_fusion_with_no_usable_variation_falls_back_to_the_original_ranking(backend):
    judge, _ = generator({IP_QUESTION: "```\nwhat is the ip rating of the im72d128?\n```\n\n"})
    retriever = Retriever(backend, mode="bm25")
    result = FusionAgent(retriever, judge, k=3).run(IP_QUESTION)

    assert result.variations == []
    assert [d.id for d in result.contexts] == [d.id for d in retriever.retrieve(IP_QUESTION, 3)]
    assert [d.score for d in result.contexts] == pytest.approx([1 / 61, 1 / 62, 1 / 63])


def test_knn_agent_finds_passages_by_meaning(backend, minilm):
    judge, _ = generator()
    agent = RAGAgent(Retriever(backend, mode="knn", embedder=minilm), judge, k=1)
    result = agent.run("Which device can notice a person breathing in the next room?")
    assert result.agent == "rag-knn" and result.contexts[0].id == "radar"


def test_six_agents_have_stable_names_modes_and_all_answer(backend, minilm):
    variations = {IP_QUESTION: "IM72D128 waterproof rating\nmicrophone immersion water"}
    judge, _ = generator(variations)
    agents = six_agents(backend, minilm, judge, k=2)

    assert tuple(a.name for a in agents) == AGENT_NAMES
    assert [a.retriever.mode for a in agents] == ["bm25", "knn", "hybrid"] * 2
    assert [type(a) for a in agents] == [RAGAgent] * 3 + [FusionAgent] * 3
    results = [a.run(IP_QUESTION, qid="q1") for a in agents]
    assert all(isinstance(r, AgentAnswer) and len(r.contexts) == 2 for r in results)
    assert all(r.contexts[0].id == "mic-ip" for r in results)
    assert [len(r.variations) for r in results] == [0, 0, 0, 2, 2, 2]
    # One variation prompt per Fusion agent and mode is the same prompt: the cache answers twice.
    assert judge.usage.cached >= 2


def test_select_agents_by_name(backend):
    judge, _ = generator()
    six = six_agents(backend, None, judge)
    assert [a.name for a in select_agents(six, ["fusion-knn", "rag-bm25", "fusion-knn"])] == \
        ["fusion-knn", "rag-bm25"]
    with pytest.raises(ConfigError, match="unknown agent.*rag-bm26"):
        select_agents(six, ["rag-bm26"])


def test_generator_failures_are_unscored_not_raised(backend):
    judge, _ = generator({IP_QUESTION: "IP57 microphone"}, rate_limit_rate=1.0)
    retriever = Retriever(backend, mode="bm25")

    rag = RAGAgent(retriever, judge).run(IP_QUESTION)
    fusion = FusionAgent(retriever, judge).run(IP_QUESTION)

    assert isinstance(rag, Unscored) and rag.cause == "rate_limit" and "answer generation" in rag.reason
    assert isinstance(fusion, Unscored) and fusion.cause == "rate_limit" and "variation" in fusion.reason


def test_empty_answer_and_empty_query_are_unscored(backend):
    empty = Judge(ScriptedModel(["   "]))
    result = RAGAgent(Retriever(backend), empty).run(IP_QUESTION)
    assert isinstance(result, Unscored) and result.cause == "unparseable" and "empty answer" in result.reason

    judge, model = generator()
    for agent in (RAGAgent(Retriever(backend), judge), FusionAgent(Retriever(backend), judge)):
        blank = agent.run("  \n")
        assert isinstance(blank, Unscored) and blank.cause == "invalid_input"
    assert model.calls == 0


def test_retrieval_failure_is_unscored_with_the_backends_reason(backend):
    wrong_size = FunctionEmbedder(lambda texts: [[1.0, 0.0, 0.0] for _ in texts], model_id="3d")
    judge, _ = generator({IP_QUESTION: "waterproof microphone"})
    for agent in (RAGAgent(Retriever(backend, mode="knn", embedder=wrong_size), judge),
                  FusionAgent(Retriever(backend, mode="knn", embedder=wrong_size), judge)):
        result = agent.run(IP_QUESTION)
        assert isinstance(result, Unscored) and result.cause == "transient"
        assert "retrieval failed" in result.reason and "dimension" in result.reason.lower()


def test_user_prompt_override_and_its_variables_are_checked(backend, tmp_path):
    custom = tmp_path / "short.txt"
    custom.write_text("{#\ntask: pipelines/answer\nvariables: question, passages\noutput: text\n#}\n"
                      "Q: {{ question }}\n{% for p in passages %}[{{ p.id }}] {{ p.text }}\n{% endfor %}"
                      "<passage id=\"end\">", encoding="utf-8")
    judge, model = generator()
    RAGAgent(Retriever(backend), judge, k=2, prompt=custom).run(IP_QUESTION)
    assert model.prompts[0].startswith(f"Q: {IP_QUESTION}\n[mic-ip] ")

    bad = tmp_path / "bad.txt"
    bad.write_text("{#\ntask: x\nvariables: question, label\noutput: text\n#}\n{{ question }}{{ label }}",
                   encoding="utf-8")
    with pytest.raises(PromptError, match="label"):
        RAGAgent(Retriever(backend), judge, prompt=bad)


def test_settings_are_checked(backend):
    judge, _ = generator()
    with pytest.raises(ConfigError, match="k must be"):
        RAGAgent(Retriever(backend), judge, k=0)
    with pytest.raises(ConfigError, match="n_variations"):
        FusionAgent(Retriever(backend), judge, n_variations=0)


async def test_async_agents_answer_concurrently(backend):
    judge, _ = generator({IP_QUESTION: "IP57\nwaterproof"}, latency=0.01)
    agent = FusionAgent(Retriever(backend), judge, k=2)
    results = [await agent.arun(IP_QUESTION, qid="a"), await agent.arun("KP253 airbag", qid="b")]
    assert [r.id for r in results] == ["a", "b"]
    assert results[1].contexts[0].id == "pressure"
