#!/usr/bin/env bash
# The whole test suite: ruff, mypy and pytest (`.ci/run` calls exactly this). Any failure fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh
ensure_venv
install_package dev
ensure_mosquitto
echo "==> ruff" >&2
"$VENV/bin/ruff" check .
echo "==> mypy" >&2
"$VENV/bin/mypy"
echo "==> pytest" >&2
"$VENV/bin/python" -m pytest -q "$@"
