#!/usr/bin/env bash
# Creates the BM25 peers' virtual environment (benchmarks/.retrieval-peers-venv by default):
# bm25s and rank-bm25, never dependencies of langrag-eval; benchmarks/retrieval.py runs them as a
# subprocess with this environment's interpreter.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_VENV="${PEERS_VENV:-$here/.retrieval-peers-venv}" \
PEERS_REQUIREMENTS="$here/peers/retrieval-requirements.txt" \
PEERS_PACKAGES="bm25s rank-bm25 numpy" \
    exec bash "$here/peers/setup_peers.sh"
