#!/usr/bin/env bash
# Creates the BM25 peers' virtual environment (benchmarks/.retrieval-peers-venv by default).
# bm25s and rank-bm25 are never dependencies of langrag-eval: they live only here, and
# benchmarks/retrieval.py runs them as a subprocess with this environment's interpreter.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${PEERS_VENV:-$here/.retrieval-peers-venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
fi
"$venv/bin/python" -m pip install --quiet -r "$here/peers/retrieval-requirements.txt"
"$venv/bin/python" - <<'PY'
from importlib.metadata import version
for name in ("bm25s", "rank-bm25", "numpy"):
    print(f"{name}=={version(name)}")
PY
