"""A broker that cannot be reached: one log line per backoff step that says which session, where
and what to check; ``check-config --probe`` connects once and exits 3 when it cannot."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from broker import TestBroker, eventually, unique
from structlog.testing import capture_logs

from edge_agent.config import parse
from edge_agent.demo.broker import free_port
from edge_agent.transport.mqtt import MqttTransport

ROOT = Path(__file__).resolve().parent.parent


def closed_port() -> int:
    """A loopback port nothing listens on, and that no outgoing connection takes meanwhile."""
    return free_port()


@pytest.mark.parametrize("link", ["main", "bulk"])
def test_a_refused_connection_is_logged_once_per_backoff_step(link: str) -> None:
    port = closed_port()
    settings = parse({"mqtt": {"port": port, "reconnect_min_s": 0.05, "reconnect_max_s": 0.1}}).mqtt
    transport = MqttTransport(settings, unique("c"), None, ["t/#"], lambda _m: None, link=link)
    with capture_logs() as logs:
        transport.start()
        assert eventually(lambda: transport.counters.connect_failures >= 4, timeout=20)
        transport.close(timeout=2)
    failed = [e for e in logs if e["event"] == "mqtt.connect_failed"]
    steps = transport.counters.connect_failures
    assert steps - 1 <= len(failed) <= steps  # the last attempt may end with close() before its line
    assert not [e for e in logs if e["event"] == "mqtt.reconnect_wait"]
    for event in failed:
        assert event["log_level"] == "warning"
        assert event["link"] == link and event["broker"] == f"127.0.0.1:{port}"
        assert "nothing listens there" in event["hint"] and "mqtt.port" in event["hint"]
        assert event["retry_in_s"] > 0
    assert [e["attempt"] for e in failed] == list(range(1, len(failed) + 1))


def _check_config(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "check-config", str(path), *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )


def _write(tmp_path: Path, mqtt: dict[str, Any]) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump({"site_id": "probe", "mqtt": mqtt}))
    return path


@pytest.mark.parametrize(("protocol", "tls"), [("5", False), ("3.1.1", False), ("5", True)])
def test_probe_connects_to_a_real_broker(
    broker: TestBroker, tmp_path: Path, protocol: str, tls: bool
) -> None:
    proc = _check_config(_write(tmp_path, broker.agent_mqtt(protocol=protocol, tls=tls)), "--probe")
    assert proc.returncode == 0, proc.stderr
    assert f"127.0.0.1:{broker.tls_port if tls else broker.port}: connected" in proc.stdout


def test_probe_exits_3_on_a_closed_port(tmp_path: Path) -> None:
    port = closed_port()
    config = _write(tmp_path, {"host": "127.0.0.1", "port": port})
    started = time.monotonic()
    proc = _check_config(config, "--probe")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"cannot connect to 127.0.0.1:{port}" in proc.stderr and "nothing listens there" in proc.stderr
    assert time.monotonic() - started < 30
    assert _check_config(config).returncode == 0  # without --probe only the file is checked


def test_probe_reports_a_refused_login(broker: TestBroker, tmp_path: Path) -> None:
    section = broker.agent_mqtt()
    Path(section["password_file"]).write_text("not-the-password\n")
    proc = _check_config(_write(tmp_path, section), "--probe")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "refused the connection" in proc.stderr and "mqtt.username" in proc.stderr


def test_probe_reports_a_port_that_does_not_speak_mqtt(tmp_path: Path) -> None:
    with socket.socket() as server:  # accepts, then says nothing
        server.bind(("127.0.0.1", 0))
        server.listen()
        config = _write(tmp_path, {"host": "127.0.0.1", "port": server.getsockname()[1]})
        proc = _check_config(config, "--probe", "--timeout", "1")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "no CONNACK" in proc.stderr


def test_free_ports_lie_below_the_ephemeral_range() -> None:
    """Test brokers (and agents told that nothing listens there) get ports no outgoing connection
    can take in the meantime: below the kernel's ephemeral range, and free when handed out."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {free_port() for _ in range(20)}
    assert len(ports) > 1, ports
    if low >= 11000:  # room below the range (Linux's default range starts at 32768)
        assert all(10000 <= port < low for port in ports), ports
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))
