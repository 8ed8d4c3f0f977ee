#!/usr/bin/env bash
# End to end with Home Assistant core: installs HA core (pinned) in a venv of its own, with the
# requirements of the integrations the test sets up, then runs tests/test_ha_wyoming_e2e.py
# (pytest -m ha_e2e) against the real agent. Needs network for the first install only; the test
# itself runs HA with skip_pip. HA needs Python >= 3.13: HA_PYTHON, else the newest 3.13 pyenv has.
#
#   nice -n 15 bash scripts/ha_wyoming_e2e.sh            # HA venv in ~/.cache/edge-agent-ha/venv
#   HA_VENV=/tmp/ha HA_VERSION=2025.4.4 bash scripts/ha_wyoming_e2e.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh

HA_VERSION=${HA_VERSION:-2025.4.4}
HA_VENV=${HA_VENV:-$HOME/.cache/edge-agent-ha/venv}

pick_python() {
    if [ -n "${HA_PYTHON:-}" ]; then echo "$HA_PYTHON"; return; fi
    local found
    found=$(ls -d "$HOME"/.pyenv/versions/3.13*/bin/python3 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$found" ] && command -v python3.13 >/dev/null; then found=$(command -v python3.13); fi
    if [ -z "$found" ]; then
        echo "ha_wyoming_e2e: no Python 3.13 found; set HA_PYTHON (Home Assistant $HA_VERSION needs >= 3.13)" >&2
        exit 2
    fi
    echo "$found"
}

if [ ! -x "$HA_VENV/bin/python" ]; then
    "$(pick_python)" -m venv "$HA_VENV"
fi
if ! "$HA_VENV/bin/python" -c "from homeassistant.const import __version__ as v; assert v == '$HA_VERSION'" 2>/dev/null; then
    echo "==> installing homeassistant==$HA_VERSION into $HA_VENV (several minutes)" >&2
    # HA's own constraints pin its transitive dependencies; without them pip backtracks for hours
    "$HA_VENV/bin/python" -m pip download -q --no-deps "homeassistant==$HA_VERSION" -d "$HA_VENV/dl"
    wheel=$(ls "$HA_VENV"/dl/homeassistant-"$HA_VERSION"-*.whl)
    "$HA_VENV/bin/python" -c "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read('homeassistant/package_constraints.txt').decode())" \
        "$wheel" > "$HA_VENV/constraints.txt"
    "$HA_VENV/bin/python" -m pip install -q "$wheel" -c "$HA_VENV/constraints.txt"
fi
"$HA_VENV/bin/python" -c "import homeassistant, pathlib; print((pathlib.Path(homeassistant.__file__).parent / 'package_constraints.txt').read_text())" \
    > "$HA_VENV/constraints.txt"
echo "==> requirements of the integrations HA sets up" >&2
"$HA_VENV/bin/python" tests/ha_e2e/ha_driver.py requirements > "$HA_VENV/e2e-requirements.txt"
"$HA_VENV/bin/python" -m pip install -q -r "$HA_VENV/e2e-requirements.txt" -c "$HA_VENV/constraints.txt"

ensure_venv
install_package dev
ensure_mosquitto
echo "==> pytest -m ha_e2e" >&2
EDGE_AGENT_HA_PYTHON="$HA_VENV/bin/python" "$VENV/bin/python" -m pytest -q -m ha_e2e tests/test_ha_wyoming_e2e.py "$@"
