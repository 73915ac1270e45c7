"""The real judges work after the README's set-up: ``--judge openai:...`` resolves to the core's
OpenAI provider (the official SDK, extra ``openai`` in ``all``), ``anthropic:...`` to a LangChain chat
model of the provider's own package (``langchain-anthropic``, in the ``judges`` extra the set-up
installs). Only built, never called: no network."""

from __future__ import annotations

import importlib.util

import pytest

from langrag_eval.models import resolve_judge


@pytest.mark.parametrize("spec, key, package, cls", [
    ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY", "langchain_anthropic", "ChatAnthropic"),
])
def test_a_provider_model_resolves_to_the_provider_chat_model(monkeypatch: pytest.MonkeyPatch, spec: str,
                                                              key: str, package: str, cls: str) -> None:
    module = pytest.importorskip(package, reason=f"{package} comes with langchain-langrag[judges]")
    from langchain_langrag import LangChainJudge

    monkeypatch.setenv(key, "sk-test-not-a-real-key")
    resolved = resolve_judge(spec)
    assert isinstance(resolved.model, LangChainJudge) and resolved.warning is None
    assert isinstance(resolved.model.llm, getattr(module, cls))
    assert resolved.model.model_id == spec
    name = getattr(resolved.model.llm, "model_name", None) or getattr(resolved.model.llm, "model", None)
    assert name == spec.split(":", 1)[1]


def test_openai_models_resolve_to_the_core_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai", reason="openai comes with langrag-eval[openai]")
    from langrag_eval.models.openai_chat import OpenAIChatModel

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    resolved = resolve_judge("openai:gpt-4o")
    assert isinstance(resolved.model, OpenAIChatModel) and resolved.warning is None
    assert (resolved.model.model_id, resolved.model.model) == ("openai:gpt-4o", "gpt-4o")
    if importlib.util.find_spec("langchain_openai") is not None:  # LangChain's route, asked for by name
        from langchain_langrag import LangChainJudge

        through = resolve_judge("langchain:openai:gpt-4o")
        assert isinstance(through.model, LangChainJudge) and type(through.model.llm).__name__ == "ChatOpenAI"


def test_the_judges_extra_names_both_provider_packages() -> None:
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).parents[2] / "integrations" / "langchain" / "pyproject.toml")
                           .read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {p.split(">")[0] for p in extras["judges"]} == {"langchain-openai", "langchain-anthropic"}
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert '-e "integrations/langchain[judges]"' in readme.split("```bash", 1)[1].split("```", 1)[0]


# OpenAI's client refuses a missing key when built (Anthropic's only when called, so it is left out:
# this test must not reach for the network)
@pytest.mark.parametrize("spec, key, package", [("openai:gpt-4o", "OPENAI_API_KEY", "openai")])
def test_a_missing_api_key_is_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], tmp_path,
                                                           spec: str, key: str, package: str) -> None:
    pytest.importorskip(package)
    from langrag_eval.cli import main

    monkeypatch.delenv(key, raising=False)
    qa = tmp_path / "qa.csv"
    qa.write_text("question,answer,label\nHow long?,Two years.,two years\n", encoding="utf-8")
    assert main(["grade", str(qa), "--judge", spec, "--store", str(tmp_path / "runs.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"langrag-eval grade: error: cannot create judge '{spec}'")
    assert key in err and "Traceback" not in err
