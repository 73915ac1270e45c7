"""How fast the command starts: ``langrag-eval --help`` and every command's and subcommand's
``--help`` (found by walking the parser), and a ``grade`` run from the command's start
to the judge's first request reaching the server (``--judge openai:gpt-4o`` against a loopback server
that speaks OpenAI's Chat Completions API), beside what importing the SDK the judge uses (``openai``)
and building its client (``AsyncOpenAI`` over the SDK's aiohttp transport, as the judge does) cost
alone in the same interpreter.

    python benchmarks/cli_startup.py --repeat 5
    python benchmarks/cli_startup.py --help-only         # every command's --help, no judge
    benchmarks/.peers-venv/bin/python benchmarks/cli_startup.py --repeat 5   # another openai SDK

Targets: ``grade`` reaches its first request within 0.5 s of the SDK's import and client (the
"beyond the client" line); every ``--help`` within 0.3 s (``tests/cli/test_help_light.py`` checks
that none loads the judging stack, which is what keeps it there).

Each figure is the best of ``--repeat`` fresh processes, as wall time and as CPU time (user + system
of the child), the latter being what a busy machine distorts least. The overhead the command adds
before a judge's first call is "first call" minus the provider's import (and minus the provider's
client built, which also loads the HTTP stack the client imports lazily).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_MAIN = "import sys; from langrag_eval.cli import main; sys.exit(main())"
_TICK = os.sysconf("SC_CLK_TCK")
# the SDK's client as the judge builds it: its aiohttp transport where installed, else httpx
_CLIENT = ("import openai\ntry:\n    http = openai.DefaultAioHttpClient()\nexcept (AttributeError, RuntimeError):\n"
           "    http = openai.DefaultAsyncHttpxClient()\nopenai.AsyncOpenAI(http_client=http)")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, _children_cpu() - cpu


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


class _FakeOpenAI(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions`` as the API reference describes its reply; notes the first."""

    first: dict[str, float] = {}
    pid = 0

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        if not self.first:
            self.first.update(wall=time.perf_counter(), cpu=_cpu_of(self.pid))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
                           "choices": [{"index": 0, "finish_reason": "stop", "message": {
                               "role": "assistant", "content": "Score: [[4]], Reason: [[Matches.]]"}}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def first_call(folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds from the start of ``langrag-eval grade`` to the judge's first request."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    qa = folder / "qa.csv"
    qa.write_text("question,answer,label\nHow long is the warranty?,Two years.,two years\n", encoding="utf-8")
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": url, "OPENAI_API_BASE": url}
    _FakeOpenAI.first.clear()
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", _MAIN, "grade", str(qa), "--judge", "openai:gpt-4o",
                              "--store", str(folder / f"runs-{time.time_ns()}.sqlite"),
                              "--out", str(folder / f"out-{time.time_ns()}.jsonl")],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _FakeOpenAI.pid = child.pid
    child.wait()
    server.shutdown()
    if not _FakeOpenAI.first:
        raise SystemExit("the command made no call to the judge")
    return _FakeOpenAI.first["wall"] - start, _FakeOpenAI.first["cpu"]


_WALK = ("import argparse, json\nfrom langrag_eval.cli import build_parser\n"
         "def walk(p, path):\n    yield path\n    for a in p._actions:\n"
         "        if isinstance(a, argparse._SubParsersAction):\n"
         "            for name, sub in a.choices.items():\n"
         "                yield from walk(sub, path + [name])\n"
         "print(json.dumps(list(walk(build_parser(), []))))")


def commands() -> list[list[str]]:
    """Every command and subcommand, the bare ``langrag-eval`` first ([])."""
    return json.loads(subprocess.run([sys.executable, "-c", _WALK], capture_output=True, text=True,
                                     check=True).stdout)


def help_times(n: int) -> None:
    """Each command's ``--help``: best of ``n`` fresh processes, wall and CPU; the slowest last."""
    rows = []
    for argv in commands():
        runs = [_timed([sys.executable, "-c", _MAIN, *argv, "--help"]) for _ in range(n)]
        rows.append((" ".join(argv) or "(none)", min(r[0] for r in runs), min(r[1] for r in runs)))
    for name, wall, cpu in rows:
        print(f"  {name + ' --help':<32} wall {wall:.3f} s, cpu {cpu:.3f} s")
    name, wall, _ = max(rows, key=lambda r: r[1])
    print(f"slowest --help: {name} {wall:.3f} s (target 0.3 s)")


def help_modules() -> int:
    code = ("import sys, contextlib, io\nfrom langrag_eval.cli import main\n"
            "try:\n    with contextlib.redirect_stdout(io.StringIO()):\n        main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sum(1 for m in sys.modules if m == 'langrag_eval' or m.startswith('langrag_eval.')))")
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--help-only", action="store_true", help="time every command's --help only")
    options = parser.parse_args()
    n = options.repeat
    best = lambda runs: (min(r[0] for r in runs), min(r[1] for r in runs))  # noqa: E731
    bare = best([_timed([sys.executable, "-c", "pass"]) for _ in range(n)])
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of {n}")
    print(f"python start alone:            wall {bare[0]:.3f} s, cpu {bare[1]:.3f} s")
    help_times(n)
    if options.help_only:
        print(f"load average {os.getloadavg()[0]:.2f}")
        return
    helped = best([_timed([sys.executable, "-c", _MAIN, "--help"]) for _ in range(n)])
    provider = best([_timed([sys.executable, "-c", "import openai"]) for _ in range(n)])
    # the client built as well: openai imports its HTTP stack on first construction
    built = best([_timed([sys.executable, "-c", _CLIENT], env={**os.environ, "OPENAI_API_KEY": "sk-test"})
                  for _ in range(n)])
    with tempfile.TemporaryDirectory() as tmp:
        first = best([first_call(Path(tmp)) for _ in range(n)])
    print(f"langrag-eval --help:           wall {helped[0]:.3f} s, cpu {helped[1]:.3f} s, "
          f"{help_modules()} langrag_eval modules")
    print(f"import openai:                 wall {provider[0]:.3f} s, cpu {provider[1]:.3f} s")
    print(f"... and AsyncOpenAI built:     wall {built[0]:.3f} s, cpu {built[1]:.3f} s")
    print(f"grade: start to first request: wall {first[0]:.3f} s, cpu {first[1]:.3f} s")
    print(f"overhead beyond the import:    wall {first[0] - provider[0]:.3f} s, cpu {first[1] - provider[1]:.3f} s")
    print(f"overhead beyond the client:    wall {first[0] - built[0]:.3f} s, cpu {first[1] - built[1]:.3f} s")


if __name__ == "__main__":
    main()
