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
