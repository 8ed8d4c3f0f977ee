#!/usr/bin/env bash
# The whole test suite: ruff, mypy and pytest (`.ci/run` calls exactly this). Any failure fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh
ensure_venv
install_package dev
# test-only: tests/test_hermes.py checks our payloads against rhasspy-hermes' own classes; its old
# pins (dataclasses-json, paho-mqtt 1.x) are not needed for that, so it goes in without them
"$VENV/bin/python" -m pip install -q --no-deps 'rhasspy-hermes==0.6.2'
ensure_teacher_weights
ensure_mosquitto
ensure_apt_tools systemd-analyze:systemd fincore:util-linux taskset:util-linux gcc:gcc
echo "==> ruff" >&2
"$VENV/bin/ruff" check .
echo "==> mypy" >&2
"$VENV/bin/mypy"
echo "==> pytest" >&2
# one worker per core (EDGE_AGENT_TEST_WORKERS to change it, 0 for none), each test file on one
# worker (--dist loadfile), files in name order (--no-loadscope-reorder): the tiny model builds of
# tests/test_build_model.py (CPU-bound) start at once, while the other workers run the rest of the
# suite, which mostly waits on brokers and agent processes
"$VENV/bin/python" -m pytest -q -n "${EDGE_AGENT_TEST_WORKERS:-auto}" --dist loadfile --no-loadscope-reorder "$@"
