"""Shared fixtures: one real mosquitto (auth, ACL, TLS) for the session, clients, unique sites."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from broker import AgentProcess, Collector, TestBroker, unique
from tiny_build import TinyBuild, shared_tiny_build

from edge_agent.config import Config

# tflite-runtime before TensorFlow, in every test process: the two wheels carry their own copies of
# TFLite's schema code, and a process that imported TensorFlow first cannot read a model's
# signatures with tflite-runtime ('vector::reserve', std::bad_alloc, or a crash). The other order
# works for both. Which test files share an xdist worker (and so which imports come first) depends
# on timing, so the order is fixed here for all of them. The agent itself never imports TensorFlow.
with contextlib.suppress(ImportError):
    import tflite_runtime.interpreter  # noqa: F401


@pytest.fixture(autouse=True)
def _private_state_and_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """State and caches of whatever a test runs, in-process or as a child process (which inherits
    the environment), go to a temporary tree, never to ~/.local/state or ~/.cache."""
    root = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
    monkeypatch.setenv("STATE_DIRECTORY", str(root / "state" / "edge-agent"))
    monkeypatch.delenv("CACHE_DIRECTORY", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(root / "keras"))  # TensorFlow's Keras writes keras.json there


@pytest.fixture(scope="session")
def tiny_build(tmp_path_factory: pytest.TempPathFactory) -> TinyBuild:
    """``build-model --tiny --seed 3``, once per test session (tests/tiny_build.py)."""
    return shared_tiny_build(tmp_path_factory)


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestBroker]:
    b = TestBroker(tmp_path_factory.mktemp("mosquitto")).start()
    yield b
    b.stop()


@pytest.fixture
def site() -> str:
    return unique("site")


@pytest.fixture
def client(broker: TestBroker) -> Iterator[paho.Client]:
    c = broker.client()
    yield c
    c.disconnect()
    c.loop_stop()


@pytest.fixture
def collect(client: paho.Client, site: str) -> Collector:
    """Everything published under ``edge/<site>/#``."""
    return Collector(client, f"edge/{site}/#")


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[list[AgentProcess]]:
    """Agent subprocesses started by a test; killed at the end whatever happened."""
    started: list[AgentProcess] = []
    yield started
    for agent in started:
        agent.kill()


def agent_config(broker: TestBroker, site: str, **sections: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"site_id": site, "mqtt": broker.agent_mqtt()}
    if "reliability" in Config.model_fields:  # keep agent state (outbox, dedup) in the test's tree
        config["reliability"] = {"state_dir": str(broker.workdir / "state" / site)}
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key].update(value)
        else:
            config[key] = value
    return config
