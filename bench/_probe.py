"""Pieces the service benches share (e2e_latency, quota_flood): the load generator's own socket
setting, the agent's CPU time, and a probe of how late the machine's scheduler wakes a sleeper."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

# sleeps 1 ms at a time for argv[1] seconds, then prints how late it woke: p50, p99, max (ms)
_JITTER_PROBE = """
import sys, time
end = time.monotonic() + float(sys.argv[1])
late = []
while time.monotonic() < end:
    t = time.perf_counter()
    time.sleep(0.001)
    late.append((time.perf_counter() - t - 0.001) * 1000)
late.sort()
print(late[len(late) // 2], late[int(len(late) * 0.99)], late[-1])
"""


def nodelay(client: paho.Client) -> None:
    """The load generator must not add Nagle delays of its own either."""
    sock = client.socket()
    if isinstance(sock, socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (from /proc), independent of what else runs."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wakeup_jitter(seconds: float, cpu: int | None = None) -> subprocess.Popen[str]:
    """Start the sleeper (pinned to ``cpu`` where taskset exists); read it with :func:`jitter_result`."""
    command = [sys.executable, "-c", _JITTER_PROBE, str(seconds)]
    if cpu is not None and shutil.which("taskset"):
        command = ["taskset", "-c", str(cpu), *command]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def jitter_result(probe: subprocess.Popen[str], timeout: float) -> list[float]:
    """[p50, p99, max] ms late."""
    return [float(v) for v in probe.communicate(timeout=timeout)[0].split()]


def subscribed_client(
    port: int,
    client_id: str,
    on_message: Callable[[Any, Any, paho.MQTTMessage], None],
    topics: list[str],
    no_delay: bool = True,
) -> paho.Client:
    """The bench's measuring client (MQTT 5, 1000 in flight, TCP_NODELAY unless ``no_delay`` is
    False: a stock client), subscribed to ``topics`` at QoS 1 before it is returned."""
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    client.max_inflight_messages_set(1000)
    client.on_message = on_message
    subscribed = threading.Event()
    client.on_subscribe = lambda *_a: subscribed.set()
    client.connect("127.0.0.1", port)
    if no_delay:
        nodelay(client)
    client.loop_start()
    client.subscribe([(t, 1) for t in topics])
    if not subscribed.wait(10):
        raise SystemExit("bench: no SUBACK from the broker")
    return client
