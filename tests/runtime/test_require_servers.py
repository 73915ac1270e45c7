"""A test whose database server is missing skips, saying why; where ``LANGRAG_REQUIRE_SERVERS=1``
(CI sets it) it fails, so a CI run that lost its servers cannot pass by skipping their tests. Both
helpers that find servers (run stores here, GRAMMAR's scratch schemas) are run by a real pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
CASES = f"""
import sys
sys.path[:0] = [{str(TESTS / "runtime")!r}, {str(TESTS / "grammar")!r}]
import sql_servers
import store_backends


def test_run_store_server_gone():
    store_backends.server_missing("no PostgreSQL server reachable (gone)")


def test_grammar_server_gone():
    sql_servers.server_missing("no MariaDB server reachable (gone)")
"""


@pytest.mark.parametrize("required,outcome", [(None, "2 skipped"), ("0", "2 skipped"), ("1", "2 failed")])
def test_a_missing_server_skips_unless_servers_are_required(tmp_path: Path, required: str | None,
                                                            outcome: str) -> None:
    (tmp_path / "test_cases.py").write_text(CASES, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "LANGRAG_REQUIRE_SERVERS"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the cases need no plugin; loading them all is slow
    if required is not None:
        env["LANGRAG_REQUIRE_SERVERS"] = required
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rsf", "-p", "no:cacheprovider",
                           "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert outcome in out, out
    assert "no PostgreSQL server reachable (gone)" in out and "no MariaDB server reachable (gone)" in out
    if required == "1":
        assert done.returncode == 1
        for server in ("PostgreSQL", "MariaDB"):  # each failure names its server and the variable
            assert (f"no {server} server reachable (gone); LANGRAG_REQUIRE_SERVERS=1 says the servers"
                    " must be there") in out
        assert "Traceback" not in out  # one line each, not a stack
    else:
        assert done.returncode == 0
