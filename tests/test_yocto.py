"""The Yocto layer and the systemd unit: oelint-adv, systemd-analyze verify/security, sd_notify."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent.sdnotify import Notifier, watchdog_interval

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "yocto" / "meta-edge-agent"
RECIPE = LAYER / "recipes-ai" / "edge-agent" / "edge-agent_0.1.0.bb"
UNIT = LAYER / "recipes-ai" / "edge-agent" / "files" / "edge-agent.service"
OELINT = Path(sys.executable).parent / "oelint-adv"


def test_layer_conf_targets_scarthgap() -> None:
    text = (LAYER / "conf" / "layer.conf").read_text()
    assert re.search(r'^LAYERSERIES_COMPAT_edge-agent = "scarthgap"$', text, re.M)
    assert "meta-python" in text and "meta-tensorflow-lite" in text


def test_oelint_adv_scarthgap_passes() -> None:
    files = [*sorted(str(p) for p in LAYER.rglob("*.bb")), str(LAYER / "conf" / "layer.conf")]
    # homepageping needs the network (HTTP request per HOMEPAGE); tests run offline
    proc = subprocess.run(
        [str(OELINT), "--quiet", "--release", "scarthgap", "--suppress", "oelint.vars.homepageping", *files],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(files) >= 4


def test_recipe_has_no_insane_skip_and_no_network_in_tasks() -> None:
    for recipe in LAYER.rglob("*.bb"):
        text = recipe.read_text()
        assert "INSANE_SKIP" not in text and "AUTOREV" not in text, recipe
        assert not re.search(r"\b(pip3? install|curl|wget)\b", text), recipe
        remote = re.findall(r"(?:https?|git)://\S+", text.split("SRC_URI", 1)[-1])
        if remote:  # a remote source needs a checksum
            assert "SRC_URI[sha256sum]" in text, recipe


def test_recipe_rewrites_the_licence_for_scarthgaps_setuptools() -> None:
    """Each sed expression of the recipe's do_configure matches one line of pyproject.toml, so the
    copy it builds states the licence as a table and asks for setuptools 69 (scarthgap's)."""
    text = RECIPE.read_text()
    exprs = re.findall(r"-e 's/(.+?)/(.+?)/'", text)
    assert len(exprs) == 2, exprs
    rewritten = (ROOT / "pyproject.toml").read_text()
    for pattern, replacement in exprs:
        assert len(re.findall(pattern, rewritten, flags=re.M)) == 1, pattern
        rewritten = re.sub(pattern, replacement, rewritten, flags=re.M)
    assert re.search(r'^license = \{ text = "Apache-2.0" \}$', rewritten, flags=re.M)
    assert re.search(r'^requires = \["setuptools>=69"\]$', rewritten, flags=re.M)


def test_recipe_license_checksum_matches_the_source() -> None:
    text = RECIPE.read_text()
    m = re.search(r"file://pyproject.toml;beginline=(\d+);endline=(\d+);md5=([0-9a-f]{32})", text)
    assert m, "LIC_FILES_CHKSUM must point at the license line of pyproject.toml"
    begin, end, md5 = int(m[1]), int(m[2]), m[3]
    lines = (ROOT / "pyproject.toml").read_text().splitlines(keepends=True)[begin - 1:end]
    assert lines and lines[0].startswith("license")
    assert hashlib.md5("".join(lines).encode()).hexdigest() == md5


def test_recipe_builds_pep517_with_runtime_deps_named_as_layers_provide_them() -> None:
    text = RECIPE.read_text()
    assert re.search(r"^inherit .*python_setuptools_build_meta", text, re.M)
    for dep in ("python3-paho-mqtt", "python3-numpy", "python3-pyyaml", "python3-tensorflow-lite",
                "python3-pydantic", "python3-orjson", "python3-structlog", "python3-drain3",
                "python3-sentencepiece"):
        assert dep in text, dep
    local = re.findall(r"file://(\S+?);subdir=\$\{BP\}", text)
    assert {"pyproject.toml", "edge_agent", "configs/default.yaml"} <= set(local)
    for rel in local:  # the recipe builds this checkout: every source it names must exist
        assert (ROOT / rel).exists(), rel
    assert 'FILES:${PN}-model += "${PYTHON_SITEPACKAGES_DIR}/edge_agent/models"' in text


def _fake_root(tmp_path: Path) -> Path:
    """A root with the unit where the recipe installs it, the binary and systemd's own units."""
    root = tmp_path / "root"
    (root / "usr" / "bin").mkdir(parents=True)
    stub = root / "usr" / "bin" / "edge-agent"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    (root / "bin").mkdir()
    shutil.copy(stub, root / "bin" / "kill")  # ExecReload's (every image has one: busybox, procps)
    units = root / "usr" / "lib" / "systemd" / "system"
    units.parent.mkdir(parents=True)
    shutil.copytree("/usr/lib/systemd/system", units, symlinks=True)
    shutil.copy(UNIT, units / "edge-agent.service")
    return root


def test_systemd_analyze_verify_prints_nothing(tmp_path: Path) -> None:
    root = _fake_root(tmp_path)
    proc = subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", "/usr/lib/systemd/system/edge-agent.service"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc.stdout + proc.stderr


def test_systemd_analyze_security_exposure_at_most_3(tmp_path: Path) -> None:
    root = _fake_root(tmp_path)
    proc = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", f"--root={root}", "--no-pager",
         "/usr/lib/systemd/system/edge-agent.service"],
        capture_output=True, text=True, timeout=120,
    )
    m = re.search(r"Overall exposure level for edge-agent\.service: (\d+\.\d+)", proc.stdout)
    assert m, proc.stdout[-2000:] + proc.stderr
    print(f"systemd-analyze security exposure: {m[1]}")
    assert float(m[1]) <= 3.0


def test_unit_has_the_required_directives() -> None:
    text = UNIT.read_text()
    for directive in ("Type=notify", "WatchdogSec=", "DynamicUser=yes", "StateDirectory=edge-agent",
                      "ConfigurationDirectory=edge-agent", "LoadCredential=mqtt_password:",
                      "CPUQuota=", "MemoryMax=", "ExecStart=/usr/bin/edge-agent run"):
        assert re.search(rf"^{re.escape(directive)}", text, re.M), directive


def test_sd_notify_reaches_a_real_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        server.settimeout(5)
        notifier = Notifier.from_env({"NOTIFY_SOCKET": str(path)})
        assert notifier.ready(status="connected") and notifier.watchdog() and notifier.stopping()
        assert server.recv(1024) == b"READY=1\nSTATUS=connected"
        assert server.recv(1024) == b"WATCHDOG=1"
        assert server.recv(1024) == b"STOPPING=1"


def test_sd_notify_abstract_socket_and_disabled() -> None:
    name = f"edge-agent-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind("\0" + name)
        server.settimeout(5)
        assert Notifier(f"@{name}").status("draining")
        assert server.recv(1024) == b"STATUS=draining"
    off = Notifier.from_env({})
    assert not off.enabled and off.ready() is False
    assert Notifier(f"@{name}-gone").watchdog() is False  # nobody listening: reported, not raised


@pytest.mark.parametrize(
    ("env", "expected"),
    [({"WATCHDOG_USEC": "30000000"}, 15.0), ({}, None), ({"WATCHDOG_USEC": "0"}, None),
     ({"WATCHDOG_USEC": "x"}, None), ({"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"}, None)],
)
def test_watchdog_interval(env: dict[str, str], expected: float | None) -> None:
    assert watchdog_interval(env) == expected
    assert watchdog_interval({"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": str(os.getpid())}) == 1.0


def test_unit_credential_is_the_one_the_config_loader_reads(tmp_path: Path) -> None:
    from edge_agent.config import load

    m = re.search(r"^LoadCredential=([^:]+):", UNIT.read_text(), re.M)
    assert m
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / m[1]).write_text("s3cret\n")
    (creds / m[1]).chmod(0o600)
    config_file = tmp_path / "config.yaml"
    config_file.write_text("mqtt:\n  username: agent\n")
    config = load(config_file, environ={"CREDENTIALS_DIRECTORY": str(creds)})
    assert config.mqtt.password == "s3cret"
