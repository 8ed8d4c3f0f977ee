"""The XNNPACK weight cache by default: on when segments stream on ai-edge-litert, in the agent's
cache directory; a config key and a command-line flag move it or turn it off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from delegates.fixtures import synth_bundle_dir
from structlog.testing import capture_logs

from edge_agent.config import parse
from edge_agent.runtime.backend import load_backend
from edge_agent.runtime.bundle import Bundle, load_bundle
from edge_agent.runtime.cachedir import cache_home, parse_setting, weight_cache_dir
from edge_agent.runtime.chain import open_runtime, resolve_weight_cache
from edge_agent.runtime.config import RuntimeConfig
from edge_agent.runtime.delegates import CpuConfig

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundle(synth_bundle_dir())


def test_cache_home_is_systemd_then_xdg_then_home() -> None:
    home = Path.home()
    assert cache_home({"CACHE_DIRECTORY": "/var/cache/edge-agent:/other", "XDG_CACHE_HOME": "/x"}) == Path(
        "/var/cache/edge-agent"
    )
    assert cache_home({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/edge-agent")
    assert cache_home({"XDG_CACHE_HOME": "relative/cache"}) == home / ".cache" / "edge-agent"
    assert cache_home({}) == home / ".cache" / "edge-agent"


def test_auto_is_on_only_for_streamed_segments_on_litert() -> None:
    env = {"XDG_CACHE_HOME": "/c"}
    assert weight_cache_dir("auto", "litert", "stream", env) == Path("/c/edge-agent/xnnpack")
    assert weight_cache_dir("auto", "litert", "resident", env) is None
    assert weight_cache_dir("auto", "litert", "auto", env) is None
    assert weight_cache_dir("auto", "tflite-runtime", "stream", env) is None
    assert weight_cache_dir("off", "litert", "stream", env) is None
    assert weight_cache_dir(None, "litert", "stream", env) is None
    assert weight_cache_dir(Path("/d"), "litert", "resident", env) == Path("/d")
    assert [parse_setting(v) for v in ("auto", "off", "/d")] == ["auto", "off", Path("/d")]


def test_config_key_takes_auto_off_null_and_a_directory() -> None:
    def cpu(value: object) -> object:
        entry = {"kind": "cpu", "xnnpack_weight_cache": value}
        return parse({"runtime": {"delegates": [entry]}}).runtime.delegates[0].xnnpack_weight_cache  # type: ignore[union-attr]

    assert parse({}).runtime.delegates[0].xnnpack_weight_cache == "auto"  # type: ignore[union-attr]
    assert cpu(False) == "off"  # YAML's unquoted off
    assert cpu("off") == "off" and cpu(None) is None
    assert cpu("/var/cache/x") == Path("/var/cache/x")


def test_the_chain_resolves_auto_for_its_residency(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    litert = load_backend("litert")
    stream = RuntimeConfig(residency="stream", weight_budget_mb=1)
    resolved = resolve_weight_cache(CpuConfig(), stream, litert)
    assert resolved.xnnpack_weight_cache == tmp_path / "edge-agent" / "xnnpack"  # type: ignore[union-attr]
    assert resolve_weight_cache(CpuConfig(), RuntimeConfig(), litert).xnnpack_weight_cache == "off"  # type: ignore[union-attr]
    tflite = load_backend("tflite-runtime")
    assert resolve_weight_cache(CpuConfig(), stream, tflite).xnnpack_weight_cache == "off"  # type: ignore[union-attr]
    explicit = CpuConfig(xnnpack_weight_cache=tmp_path / "mine")
    assert resolve_weight_cache(explicit, stream, litert) == explicit


def test_the_agent_runtime_streams_through_the_default_cache(bundle: Bundle, tmp_path: Path) -> None:
    """Default delegates, residency stream, litert: packed weights land in $XDG_CACHE_HOME/edge-agent
    (the suite's conftest points XDG_CACHE_HOME at a temporary directory)."""
    xnn = cache_home() / "xnnpack"
    assert xnn.is_relative_to(os.environ["XDG_CACHE_HOME"]) and not xnn.exists()
    ids = np.arange(1, 1 + bundle.manifest["tokenizer"]["max_len"], dtype=np.int32)[None, :]
    cfg = RuntimeConfig(backend="litert", residency="stream", weight_budget_mb=0.1)
    rt = open_runtime(bundle, cfg)
    try:
        out = rt.queue.submit("intents", {"ids": ids}).result(timeout=60)
        active = rt.stats()["active"]
    finally:
        rt.close()
    assert out["intent_logits"].shape[0] == 1 and active == "cpu"
    assert len(list(xnn.glob("*.xnn"))) == len(set(bundle.graph("intents")) | set(bundle.graph("logs")))


def _intents(bundle: Bundle, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "intents", "--bundle", str(bundle.path), "--backend", "litert",
         "--residency", "stream", "--weight-budget-mb", "0.1", *flags],
        input=b"turn on the lights\nwhat time is it\n",
        capture_output=True, cwd=tmp_path, timeout=180, check=False,
    )


def test_intents_command_streams_through_the_cache_by_default_and_takes_the_flag(
    bundle: Bundle, tmp_path: Path
) -> None:
    xnn = cache_home() / "xnnpack"
    graph = set(bundle.graph("intents"))
    off = _intents(bundle, tmp_path, "--xnnpack-weight-cache", "off")
    assert off.returncode == 0, off.stderr.decode()
    assert not xnn.exists()
    default = _intents(bundle, tmp_path)
    assert default.returncode == 0, default.stderr.decode()
    assert len(list(xnn.glob("*.xnn"))) == len(graph)
    intents = [json.loads(line)["intent"] for line in default.stdout.splitlines()]
    assert intents == [json.loads(line)["intent"] for line in off.stdout.splitlines()] and len(intents) == 2
    mine = tmp_path / "mine"
    chosen = _intents(bundle, tmp_path, "--xnnpack-weight-cache", str(mine))
    assert chosen.returncode == 0, chosen.stderr.decode()
    assert len(list(mine.glob("*.xnn"))) == len(graph)
    for proc in (off, default, chosen):
        assert b"INFO:" not in proc.stderr, proc.stderr.decode()


def test_auto_goes_without_the_cache_when_its_directory_cannot_be_made(
    bundle: Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    stream = RuntimeConfig(residency="stream", weight_budget_mb=1)
    with capture_logs() as logs:
        resolved = resolve_weight_cache(CpuConfig(), stream, load_backend("litert"))
    assert resolved.xnnpack_weight_cache == "off"  # type: ignore[union-attr]
    reasons = [e["reason"] for e in logs if e["event"] == "weight_cache_off"]
    assert len(reasons) == 1 and reasons[0].startswith(f"cannot create {blocker}")
    proc = _intents(bundle, tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(proc.stdout.splitlines()) == 2
    assert b"XNNPACK weight cache off: cannot create" in proc.stderr
    mine = _intents(bundle, tmp_path, "--xnnpack-weight-cache", str(blocker / "xnn"))  # explicit: an error
    assert mine.returncode == 2, mine.stderr.decode()
    assert b"xnnpack_weight_cache: cannot create" in mine.stderr
