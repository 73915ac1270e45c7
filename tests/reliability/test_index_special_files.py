"""A named pipe in place of one of an index folder's files, or named as a CA bundle, is refused in
one line before anything opens it. Reading a pipe waits for a writer that never comes: ``search``
and ``index`` used to hang on such a folder. Each case runs the installed command in a child process
with a time limit, so a hang fails the test instead of stopping the suite."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from langrag_eval.errors import ConfigError

FILES = ["manifest.json", "chunks.jsonl", "vectors.npy", "has_vector.npy", "postings.npz", "vocabulary.json"]


def _command(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = "import sys; from langrag_eval.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "HF_HUB_OFFLINE": "1"})


@pytest.fixture(scope="module")
def index_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("index")
    (root / "corpus.jsonl").write_text('{"id": "d1", "text": "red apples"}\n{"id": "d2", "text": "green pears"}\n',
                                       encoding="utf-8")
    done = _command("index", "corpus.jsonl", "--store-dir", "idx", "--no-embeddings", cwd=root)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (root / "idx").iterdir()) == sorted(FILES)
    return root


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("command", ["search", "index"])
def test_a_named_pipe_in_an_index_folder_is_refused_without_a_hang(index_folder: Path, name: str, command: str,
                                                                    tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    shutil.copytree(index_folder / "idx", folder)
    (folder / name).unlink()
    os.mkfifo(folder / name)
    argv = (["search", "apples", "--store-dir", str(folder)] if command == "search"
            else ["index", str(index_folder / "corpus.jsonl"), "--store-dir", str(folder), "--no-embeddings"])
    done = _command(*argv, cwd=tmp_path)  # a read of the pipe would wait past the time limit
    assert done.returncode == 2 and done.stdout == "", done.stderr
    [line] = done.stderr.strip().splitlines()
    assert f"{folder / name}: the index file {name} is a named pipe (FIFO), not a regular file" in line, line
    assert stat.S_ISFIFO(os.stat(folder / name).st_mode)  # left as it was


def test_the_unchanged_folder_still_searches(index_folder: Path) -> None:
    done = _command("search", "apples", "--store-dir", "idx", "--json", cwd=index_folder)
    assert done.returncode == 0 and '"id": "d1' in done.stdout, done.stderr


def test_a_named_pipe_as_ca_bundle_is_refused(tmp_path: Path) -> None:
    from langrag_eval.retrieval import OpenSearchBackend

    os.mkfifo(tmp_path / "ca.pem")
    argv = ["search", "apples", "--backend", "opensearch", "--url", "https://127.0.0.1:9", "--ca-certs", "ca.pem"]
    done = _command(*argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "ca.pem: --ca-certs is a named pipe (FIFO), not a regular file" in done.stderr
    with pytest.raises(ConfigError, match="ca_certs is a named pipe"):
        OpenSearchBackend("https://127.0.0.1:9", ca_certs=str(tmp_path / "ca.pem"))
