"""The frameworks' own fake models, subclassed to record what each call received and to reply by a
rule over the prompt: the oracle of the app conformance suite ("which documents reached the prompt
of the call that wrote the answer") is read from them, never from the capture under test."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.llms import MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from pydantic import PrivateAttr


class Recording(GenericFakeChatModel):
    """LangChain's fake chat model, recording what each call received and replying by ``rule``."""

    messages: Any = iter(())
    rule: Callable[[str], AIMessage | str]
    seen: list[tuple[str, str]] = []
    lock: Any = None

    def model_post_init(self, context: Any) -> None:
        self.seen, self.lock = [], threading.Lock()

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs):
        prompt = "\n".join(str(m.content) for m in messages)
        with self.lock:
            reply = self.rule(prompt)
            self.messages = iter([reply])
            result = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        self.seen.append((prompt, result.generations[0].message.content))
        return result

    def final_prompt(self, answer: str) -> str:
        """The input of the last call whose reply is the answer: what the answer was written from."""
        return [p for p, r in self.seen if r.strip() == answer.strip()][-1]

    def reached(self, answer: str, texts: dict[str, str]) -> list[str]:
        """The oracle: ids of the texts the answering call received."""
        prompt = self.final_prompt(answer)
        return sorted(i for i, t in texts.items() if t in prompt)


class RecordingLLM(MockLLM):
    """LlamaIndex's ``MockLLM``, recording each prompt it completes and replying by ``rule``."""

    _rule: Callable[[str], str] = PrivateAttr()
    _seen: list[tuple[str, str]] = PrivateAttr(default_factory=list)

    def __init__(self, rule: Callable[[str], str]) -> None:
        super().__init__()
        self._rule = rule

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        text = self._rule(prompt)
        self._seen.append((prompt, text))
        return CompletionResponse(text=text)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        text = self.complete(prompt).text
        pieces = re.findall(r"\S+\s*", text)
        return (CompletionResponse(text="".join(pieces[:i + 1]), delta=p) for i, p in enumerate(pieces))

    def reached(self, answer: str, texts: dict[str, str]) -> list[str]:
        """The oracle: ids of the documents whose text the call that wrote ``answer`` received, or a
        call whose reply that call received (a sub-question's answer)."""
        finals = [p for p, r in self._seen if answer in r]
        if not finals:
            return []
        prompts = [finals[-1]] + [p for p, r in self._seen if answer not in r and len(r) > 20
                                  and r.strip() in finals[-1]]
        return sorted(i for i, t in texts.items() if any(t in p for p in prompts))
