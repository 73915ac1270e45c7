"""An output written inside the folder of documents a command reads would be read back as a
document by the next run (an index's ``chunks.jsonl``, synthetic queries, an agents file). Every
such output is refused before any work, in one line naming the output and the folder, whatever
the spelling (nested, ``./``, ``../``, through a symbolic link to the folder), and nothing appears
in the folder; an output beside the folder is let through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.cli import build_parser, main
from langrag_eval.cli._files import check_files
from langrag_eval.errors import ConfigError

# command -> (arguments reading the folder "docs", {output option: a file name it takes})
COMMANDS = {
    "index": (["index", "docs", "--no-embeddings"], {"--store-dir": "idx"}),
    "synth queries": (["synth", "queries", "--corpus", "docs", "--examples", "examples.txt",
                       "--generator", "scripted:judge.json",
                       "--store", "runs.sqlite"], {"--out": "queries.jsonl", "--pool-out": "pool.jsonl"}),
    "agents": (["agents", "--corpus", "docs", "--queries", "queries.jsonl", "--judge", "scripted:judge.json",
                "--store", "runs.sqlite"], {"--out": "answers.jsonl"}),
}
CASES = [(c, o) for c, (_, outs) in COMMANDS.items() for o in outs]
SEGMENT = st.text(alphabet="abcdefghij_-", min_size=1, max_size=6)


def _work(root: Path) -> Path:
    (root / "docs" / "sub").mkdir(parents=True, exist_ok=True)
    (root / "docs" / "a.txt").write_text("Refunds take five days.\n", encoding="utf-8")
    (root / "queries.jsonl").write_text('{"qid": "q1", "query": "How long do refunds take?"}\n', encoding="utf-8")
    (root / "judge.json").write_text('["a reply"]', encoding="utf-8")
    (root / "examples.txt").write_text("How long do refunds take?\n", encoding="utf-8")
    if not (root / "link-to-docs").exists():
        (root / "link-to-docs").symlink_to(root / "docs", target_is_directory=True)
    return root


def _spell(root: Path, spelling: str, nested: list[str], name: str) -> str:
    inner = os.path.join(*nested, name) if nested else name
    return {"plain": str(root / "docs" / inner), "dot": str(root / "docs" / "." / inner),
            "dotdot": str(root / "docs" / "sub" / ".." / inner), "link": str(root / "link-to-docs" / inner),
            "relative": os.path.join("docs", inner)}[spelling]


@pytest.mark.parametrize("command, option", CASES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nested=st.lists(SEGMENT, max_size=2), spelling=st.sampled_from(["plain", "dot", "dotdot", "link", "relative"]))
def test_an_output_inside_the_documents_folder_is_refused(tmp_path: Path, monkeypatch, command: str, option: str,
                                                          nested: list[str], spelling: str) -> None:
    root = _work(tmp_path)
    monkeypatch.chdir(root)
    argv, outs = COMMANDS[command]
    target = _spell(root, spelling, nested, outs[option])
    args = build_parser().parse_args([*argv, option, target])
    with pytest.raises(ConfigError) as refused:
        check_files(args)
    message = str(refused.value)
    assert option in message and target in message and "docs" in message and "\n" not in message


@pytest.mark.parametrize("command, option", CASES)
def test_an_output_beside_the_documents_folder_passes(tmp_path: Path, monkeypatch, command: str, option: str) -> None:
    root = _work(tmp_path)
    monkeypatch.chdir(root)
    argv, outs = COMMANDS[command]
    check_files(build_parser().parse_args([*argv, option, str(root / f"docs-{outs[option]}")]))


def test_index_into_its_own_documents_folder_is_refused_and_writes_nothing(tmp_path: Path, monkeypatch,
                                                                         capsys) -> None:
    root = _work(tmp_path)
    monkeypatch.chdir(root)
    before = sorted(p.relative_to(root) for p in (root / "docs").rglob("*"))
    assert main(["index", "docs", "--no-embeddings", "--store-dir", "docs/.index"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "docs/.index" in err and "PATH docs" in err
    assert sorted(p.relative_to(root) for p in (root / "docs").rglob("*")) == before
