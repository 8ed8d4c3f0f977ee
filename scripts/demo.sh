#!/usr/bin/env bash
# Runs the agent end to end on this machine: a virtual environment with the package (its
# interpreter is ai-edge-litert, a base dependency), mosquitto (apt-get when missing), then
# `edge-agent demo`: a private broker on loopback, the default bundle, sample transcripts and logs.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh
ensure_venv
if ! install_package; then
    # offline re-run: go on when everything the agent imports is already there
    "$VENV/bin/python" - <<'PY' || { echo "installing edge-agent failed (see above)" >&2; exit 1; }
import importlib.util as u, sys
need = ("paho", "yaml", "pydantic", "structlog", "orjson", "numpy", "sentencepiece", "drain3")
ok = all(u.find_spec(m) for m in need) and (u.find_spec("tflite_runtime") or u.find_spec("ai_edge_litert"))
sys.exit(0 if ok else 1)
PY
    echo "==> could not install; using the packages already in $VENV" >&2
fi
ensure_mosquitto
exec "$VENV/bin/python" -m edge_agent demo "$@"
