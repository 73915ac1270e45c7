#!/usr/bin/env bash
# Creates a peers' virtual environment (benchmarks/.peers-venv by default) from a requirements file
# (benchmarks/peers/requirements.txt by default) and prints the versions of PACKAGES.
# The peers are never dependencies of langrag-eval: they live only here, and the
# benchmarks run them as a subprocess with this environment's interpreter.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${PEERS_VENV:-$here/.peers-venv}"
requirements="${PEERS_REQUIREMENTS:-$here/peers/requirements.txt}"
packages="${PEERS_PACKAGES:-ragas ragelo llama-index-core deepeval}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
fi
"$venv/bin/python" -m pip install --quiet -r "$requirements"
"$venv/bin/python" - $packages <<'PY'
import sys
from importlib.metadata import version
for name in sys.argv[1:]:
    print(f"{name}=={version(name)}")
PY
