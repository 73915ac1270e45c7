"""A scripted model for the cookbooks: it reads each prompt the package (or your app) sends and
answers in the format that prompt asks for, deciding by word overlap. Every recipe therefore runs
offline, in seconds, with the same result each time.

Word overlap is not judgement: the grades it gives show the plumbing, not the quality of your
pipeline. Swap in a real model (each cookbook names the one line) for grades that mean something.
Copy this file to test your own pipelines without a model.

>>> reply("<question>\\nWho built it?\\n</question>\\n<true_answer>\\nAda\\n</true_answer>\\n"
...       "<response>\\nAda built it.\\n</response>")
'The response states the true answer.\\nJudgement: [[Correct]]'
"""

from __future__ import annotations

import json
import re
from typing import Any

from langrag_eval.embeddings import Embedder, default_embedder
from langrag_eval.model import ChatModel
from langrag_eval.models import resolve_judge
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import ThelmaScript
from langrag_eval.thelma.decompose import split_sentences
from langrag_eval.thelma.scripted import blocks

__all__ = ["build_judge", "embedder", "overlap", "reply", "scripted_agent_model", "scripted_chat_model",
           "scripted_judge", "scripted_llm", "words"]

_STOPWORDS = """a an the of to in on at for from by with and or but not no is are was were be been
being do does did has have had i you he she it we they my your our their its this that these those
what which who whom whose when where why how much many there here can could should would will
may might me us them about into than then so if as any some all per one"""
_STOP = frozenset(_STOPWORDS.split())


def words(text: str) -> set[str]:
    """Content words, lower-cased and cut to six letters (a crude stem: 'returned' and 'returns'
    both become 'return')."""
    return {w[:6] for w in re.findall(r"\w+(?:[.'\-]\w+)*", text.casefold()) if w not in _STOP}


def overlap(a: str, b: str) -> float:
    """Share of ``a``'s content words that also occur in ``b`` (0 when ``a`` has none)."""
    wa = words(a)
    return len(wa & words(b)) / len(wa) if wa else 0.0


def _extract(question: str, texts: list[str], n: int = 2) -> str:
    """An extractive reader: the ``n`` sentences sharing most words with the question, in text order."""
    sentences = [s.strip() for t in texts for s in split_sentences(t) if s.strip()]
    best = sorted(range(len(sentences)), key=lambda i: -overlap(question, sentences[i]))[:n]
    chosen = [sentences[i] for i in sorted(best) if overlap(question, sentences[i]) > 0]
    return " ".join(chosen) or "The documents do not say."


# THELMA's decompose and match prompts are answered by the package's own ThelmaScript, here with
# overlap rules instead of truth tables. Each rule receives the most specific key of its table.
_THELMA = ThelmaScript(
    source=lambda k: overlap(k[0], k[1]) >= 0.3,                  # (query, source): SP1
    essential=lambda k: overlap(k[0], k[1]) >= 0.25,              # (query, fact): SP2, RP
    supported=lambda k: overlap(k[0], " ".join(k[1])) >= 0.7,     # (claim, sources): GR
    addresses=lambda k: overlap(k[0], k[1]) >= 0.3,               # (sub-question, response): RQC
    answers=lambda k: k[1] is not None and overlap(k[0], k[1]) >= 0.4)  # (sub-question, source): SQC


def _grade(label: str, answer: str) -> str:             # prompts/vrag/grade.txt
    share = overlap(label, answer)
    score = 1 + sum(share >= cut for cut in (0.2, 0.4, 0.6, 0.8))
    return f"Score: [[{score}]], Reason: [[The answer repeats {share:.0%} of the label's key words.]]"


def _relevance(query: str, document: str) -> str:       # prompts/tournament/relevance.txt
    share = overlap(query, document)
    level = 2 if share >= 0.5 else 1 if share >= 0.25 else 0
    return json.dumps({"reason": f"The document shares {share:.0%} of the question's key words.",
                       "relevance": level})


def _support(query: str, answer: str, documents: str) -> float:
    return overlap(query, answer) + overlap(answer, documents)


def _pairwise(prompt: str) -> str:                       # prompts/tournament/pairwise.txt
    query, docs = blocks(prompt, "question")[-1], " ".join(blocks(prompt, "document"))
    a = _support(query, blocks(prompt, "answer_a")[-1], docs)
    b = _support(query, blocks(prompt, "answer_b")[-1], docs)
    verdict = "C" if abs(a - b) < 0.05 else "A" if a > b else "B"
    return f"Answer A scores {a:.2f} on overlap with the question and documents, answer B {b:.2f}.\n[[{verdict}]]"


def _pointwise(prompt: str) -> str:                      # prompts/tournament/pointwise.txt
    query, answer = blocks(prompt, "question")[-1], blocks(prompt, "answer")[-1]
    docs = " ".join(blocks(prompt, "document"))
    def level(share: float) -> int:
        return 2 if share >= 0.6 else 1 if share >= 0.3 else 0
    scores = {"relevance": level(overlap(query, answer)), "accuracy": level(overlap(answer, docs)),
              "completeness": level(overlap(query, answer + " " + docs)), "precision": 2}
    return "Graded by word overlap.\n" + json.dumps(scores)


def _variations(prompt: str, n: int) -> str:             # prompts/pipelines/query_variations.txt
    keywords = list(dict.fromkeys(w for w in re.findall(r"\w+", blocks(prompt, "question")[-1])
                                  if w.casefold() not in _STOP))
    candidates = [" ".join(keywords)] + [" ".join(keywords[:i] + keywords[i + 1:]) for i in range(len(keywords))]
    lines = [c for c in dict.fromkeys(candidates) if c][:n]
    lines += [f"{' '.join(keywords)} detail {i}" for i in range(n - len(lines))]
    return "\n".join(lines)


def _correctness(prompt: str) -> str:                     # prompts/grammar/correctness.txt
    truth, response = blocks(prompt, "true_answer")[-1], blocks(prompt, "response")[-1]
    if words(truth) and words(truth) <= words(response):
        return "The response states the true answer.\nJudgement: [[Correct]]"
    return "The response does not state the true answer.\nJudgement: [[Incorrect]]"


def reply(prompt: str) -> str:
    """A plausible reply to any prompt the cookbooks send, in the format the prompt asks for."""
    if "<true_answer>" in prompt:
        return _correctness(prompt)
    if "<label>" in prompt:
        return _grade(blocks(prompt, "label")[-1], blocks(prompt, "answer")[-1])
    if "<answer_a>" in prompt:
        return _pairwise(prompt)
    if '"completeness"' in prompt:
        return _pointwise(prompt)
    if "<document>" in prompt:
        return _relevance(blocks(prompt, "question")[-1], blocks(prompt, "document")[-1])
    if "<passages>" in prompt:                           # prompts/pipelines/answer.txt
        # a hasty reader: it answers from the top-ranked passage only, so retrieval order matters
        return _extract(blocks(prompt, "question")[-1], blocks(prompt, "passage")[:1])
    if (m := re.search(r"Write (\d+) different search queries", prompt)):
        return _variations(prompt, int(m.group(1)))
    try:
        return _THELMA.reply(prompt)
    except KeyError:
        pass
    # Anything else is taken as an app's own RAG prompt: context first, then "Question: ..." (or
    # "Query: ...", as LlamaIndex's default answer prompt writes it).
    found = list(re.finditer(r"(?:Question|Query):\s*(.+)", prompt))
    if not found:
        return _extract(prompt, [prompt])
    context = prompt[:found[-1].start()].split("Context:", 1)[-1]
    return _extract(found[-1].group(1), [context])


def scripted_judge() -> ScriptedModel:
    """:func:`reply` as a langrag-eval model (the ``ChatModel`` every judge and generator uses)."""
    return ScriptedModel(reply, model_id="scripted:cookbook")


def build_judge(choice: str | ChatModel, **options: Any) -> Judge:
    """A ``Judge`` from a model, or from a spec such as ``"openai:gpt-4o"`` resolved exactly as
    ``langrag-eval --judge`` resolves it (``local`` is the offline llama.cpp default)."""
    if isinstance(choice, str):
        resolved = resolve_judge(choice)
        if resolved.warning:
            print(f"warning: {resolved.warning}")
        return Judge(resolved.model, **options)
    return Judge(choice, **options)


def embedder() -> Embedder:
    """The packaged all-MiniLM-L6-v2, loaded once per process (for KNN and self-distinctness)."""
    return default_embedder()


def scripted_chat_model() -> Any:
    """:func:`reply` as a LangChain chat model, standing in for ``init_chat_model("openai:gpt-4o")``."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChatModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            text = reply("\n\n".join(str(m.content) for m in messages))
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    return ScriptedChatModel()


def scripted_agent_model() -> Any:
    """:func:`reply` as a tool-calling LangChain chat model, standing in for an agent's model: with
    tools bound it first calls the first tool with the user's question, then answers from what the
    tool returned; without tools (as a judge) it replies like :func:`scripted_chat_model`."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedAgentModel(BaseChatModel):
        tool_name: str | None = None

        @property
        def _llm_type(self) -> str:
            return "scripted-agent"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            name = getattr(tools[0], "name", None) or tools[0].get("name") if tools else None
            return self.model_copy(update={"tool_name": name})

        def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            question = next(str(m.content) for m in reversed(messages) if m.type == "human")
            tool_results = [str(m.content) for m in messages if m.type == "tool"]
            if self.tool_name and not tool_results:
                message = AIMessage(content="", tool_calls=[
                    {"name": self.tool_name, "args": {"query": question}, "id": f"call-{len(messages)}"}])
            elif self.tool_name:
                message = AIMessage(content=reply(f"Context: {' '.join(tool_results)}\nQuestion: {question}"))
            else:
                message = AIMessage(content=reply("\n\n".join(str(m.content) for m in messages)))
            return ChatResult(generations=[ChatGeneration(message=message)])

    return ScriptedAgentModel()


def scripted_llm() -> Any:
    """:func:`reply` as a LlamaIndex LLM, standing in for ``OpenAI(model="gpt-4o")``."""
    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback

    class ScriptedLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="scripted")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            return CompletionResponse(text=reply(prompt))

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            yield self.complete(prompt, formatted=formatted)

    return ScriptedLLM()
