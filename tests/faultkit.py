"""Real processes for the fault, fuzz and scale-out tests: a durable mosquitto that survives SIGKILL,
a TCP relay that can cut the agent off the broker, persistent-session MQTT clients, agents.

Nothing here is a mock: the broker is mosquitto, the agent is ``edge-agent run`` with the shipped
bundle, the relay moves real bytes between real sockets.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from broker import AgentProcess
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from edge_agent.demo.broker import Mosquitto, free_port, wait_port

__all__ = [
    "DurableBroker",
    "Relay",
    "Results",
    "agent_config",
    "persistent_client",
    "publish_all",
    "rss_kb",
    "start_agent",
    "wait_until",
]


class DurableBroker:
    """mosquitto on a fixed port with on-disk persistence saved after every change, so a SIGKILL loses
    at most the change being saved at that instant (mosquitto writes its database after the PUBACK)."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        lines = [
            "allow_anonymous true",
            "persistence true",
            f"persistence_location {workdir}/",
            "autosave_on_changes true",
            "autosave_interval 1",
            "max_queued_messages 100000",
            "max_inflight_messages 0",
        ]
        self.mosquitto = Mosquitto(lines, port=self.port, workdir=workdir)

    def start(self) -> DurableBroker:
        self.mosquitto.start()
        return self

    def kill(self) -> None:
        self.mosquitto.kill()

    def stop(self) -> None:
        self.mosquitto.stop()

    def log_tail(self) -> str:
        return self.mosquitto.log_tail()


class Relay:
    """A TCP relay 127.0.0.1:``port`` -> ``target_port``. ``cut()`` closes every connection and
    refuses new ones (like a pulled cable that the peers notice); ``restore()`` lets them back in."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._open = threading.Event()
        self._open.set()
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._stop = False
        threading.Thread(target=self._accept, name="relay-accept", daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            if not self._open.is_set():
                conn.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                conn.close()
                continue
            with self._lock:
                self._socks += [conn, upstream]
            for src, dst in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self._stop = True
        self.cut()
        self._listener.close()


def persistent_client(port: int, client_id: str | None = None) -> paho.Client:
    """An MQTT 5 client with a persistent session that reconnects by itself (broker restarts)."""
    client = paho.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id or f"t-{uuid.uuid4().hex[:10]}",
        protocol=MQTTProtocolVersion.MQTTv5,
    )
    client.reconnect_delay_set(0.1, 1.0)
    client.max_queued_messages_set(0)
    client.max_inflight_messages_set(1000)
    props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
    props.SessionExpiryInterval = 3600
    connected = threading.Event()
    client.on_connect = lambda *_a: connected.set()
    client.connect("127.0.0.1", port, clean_start=False, properties=props)
    client.loop_start()
    if not connected.wait(10):
        raise RuntimeError(f"client could not connect to 127.0.0.1:{port}")
    return client


class Results:
    """Everything the agent publishes for one site, by kind; intent results indexed by id."""

    def __init__(self, port: int, site: str) -> None:
        self.site = site
        self.intents: dict[str, list[dict[str, Any]]] = {}
        self.dlq: list[dict[str, Any]] = []
        self.status: list[bytes] = []
        self.other: list[tuple[str, bytes]] = []
        self._cond = threading.Condition()
        self.client = persistent_client(port)
        subscribed = threading.Event()
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *_a: subscribed.set()
        self.client.subscribe(f"edge/{site}/#", qos=1)
        if not subscribed.wait(10):
            raise RuntimeError("no SUBACK")

    def _on_message(self, _c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        suffix = msg.topic.removeprefix(f"edge/{self.site}/")
        with self._cond:
            if suffix == "intent":
                body = json.loads(msg.payload)
                self.intents.setdefault(str(body["id"]), []).append(body)
            elif suffix == "dlq":
                self.dlq.append(json.loads(msg.payload))
            elif suffix == "status":
                self.status.append(bytes(msg.payload))
            else:
                self.other.append((msg.topic, bytes(msg.payload)))
            self._cond.notify_all()

    def wait(self, predicate: Callable[[Results], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.5))
            return True

    def missing(self, ids: list[str]) -> list[str]:
        with self._cond:
            return [i for i in ids if i not in self.intents]

    def online(self) -> bool:
        return self.status[-1:] == [b"online"]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def agent_config(site: str, port: int, state_dir: Path, **sections: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "site_id": site,
        "mqtt": {"host": "127.0.0.1", "port": port, "reconnect_min_s": 0.1, "reconnect_max_s": 0.5},
        "pipeline": {"stats_interval_s": 0},
        "reliability": {"state_dir": str(state_dir)},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key].update(value)
        else:
            config[key] = value
    return config


def start_agent(config: dict[str, Any], workdir: Path, started: list[AgentProcess]) -> AgentProcess:
    agent = AgentProcess(config, workdir, engine="real").start()
    started.append(agent)
    return agent


def publish_all(
    client: paho.Client,
    topic: str,
    bodies: list[bytes],
    rate: float,
    on_index: Callable[[int], None] | None = None,
) -> None:
    """Publish at ``rate`` per second (QoS 1); paho keeps what it cannot send yet and resends it."""
    period = 1.0 / rate
    start = time.monotonic()
    for i, body in enumerate(bodies):
        if on_index is not None:
            on_index(i)
        client.publish(topic, body, qos=1)
        delay = start + (i + 1) * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def wait_until(predicate: Callable[[], bool], timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def stop_process(agent: AgentProcess) -> None:
    assert agent.proc is not None
    os.kill(agent.proc.pid, signal.SIGSTOP)


def resume_process(agent: AgentProcess) -> None:
    assert agent.proc is not None
    os.kill(agent.proc.pid, signal.SIGCONT)


def port_open(port: int) -> bool:
    return wait_port(port, 0.2)
