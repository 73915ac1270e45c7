"""The cookbooks' offline models. The judge is the package's scripted one
(:func:`langrag_eval.testing.overlap_reply`): it reads each prompt the package (or your app) sends and
answers in the format that prompt asks for, deciding by word overlap. The apps' own chat models
(LangChain, LlamaIndex) answer from the same script. Every recipe therefore runs offline, in
seconds, with the same result each time.

Word overlap is not judgement: the grades it gives show the plumbing, not the quality of your
pipeline. Swap in a real model (each cookbook names the one line) for grades that mean something.
Copy this file to test your own pipelines without a model.

>>> scripted_judge().model_id
'scripted:cookbook'
>>> reply("<question>\\nWho built it?\\n</question>\\n<true_answer>\\nAda\\n</true_answer>\\n"
...       "<response>\\nAda built it.\\n</response>").splitlines()[-1]
'Judgement: [[Correct]]'
"""

from __future__ import annotations

from typing import Any

from langrag_eval.models.embeddings import Embedder, default_embedder
from langrag_eval.model import ChatModel
from langrag_eval.models import resolve_judge
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, overlap_model
from langrag_eval.testing import overlap_reply as reply

__all__ = ["build_judge", "embedder", "reply", "scripted_agent_model", "scripted_chat_model",
           "scripted_judge", "scripted_llm"]


def scripted_judge() -> ScriptedModel:
    """:func:`reply` as a langrag-eval model (the ``ChatModel`` every judge and generator uses)."""
    return overlap_model(model_id="scripted:cookbook")


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
