#!/usr/bin/env bash
# Creates the peers' virtual environment (benchmarks/.peers-venv by default).
# The peers are never dependencies of langrag-eval: they live only here, and the
# benchmark runs them as a subprocess with this environment's interpreter.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${PEERS_VENV:-$here/.peers-venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
fi
"$venv/bin/python" -m pip install --quiet -r "$here/peers/requirements.txt"
"$venv/bin/python" - <<'PY'
from importlib.metadata import version
for name in ("ragas", "ragelo", "llama-index-core"):
    print(f"{name}=={version(name)}")
PY
