"""Start a private mosquitto on a free loopback port with its own config (demo, tests, bench).

Never touches a system broker: the process gets a temp directory, its own config file and a
port picked free on 127.0.0.1.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from edge_agent.errors import EdgeAgentError

__all__ = ["BrokerError", "Mosquitto", "find_mosquitto", "free_port", "wait_port"]


class BrokerError(EdgeAgentError):
    """mosquitto is missing or did not start."""


def find_mosquitto() -> str:
    for candidate in (shutil.which("mosquitto"), "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise BrokerError(
        "mosquitto is not installed: install it (Debian/Ubuntu: sudo apt-get install -y mosquitto) "
        "or run scripts/demo.sh, which does"
    )


# ports picked by free_port: below the kernel's ephemeral range, see there
_PORTS_FROM = 10000
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port() -> int:
    """A loopback TCP port free now, for a broker to listen on (maybe only later, or again after
    a restart). Picked at random below the kernel's ephemeral range: outgoing connections take
    their local ports from that range, so a port there can be taken by any client in between, or
    by a client's connection to that very port while nothing listens (TCP self-connect)."""
    try:
        low = int(_EPHEMERAL_RANGE.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    pick = random.SystemRandom()
    for _ in range(100 if low - _PORTS_FROM >= 1000 else 0):
        port = pick.randrange(_PORTS_FROM, low)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:  # no room below: any free port
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Mosquitto:
    """A mosquitto process. ``config_lines`` are appended after a loopback listener on ``port``
    (anonymous access unless the lines say otherwise). ``start``/``stop``/``kill``/``restart``."""

    def __init__(
        self,
        config_lines: Sequence[str] = ("allow_anonymous true",),
        port: int | None = None,
        workdir: Path | None = None,
        extra_ports: Sequence[int] = (),
    ) -> None:
        self.binary = find_mosquitto()
        self.port = port or free_port()
        self.extra_ports = list(extra_ports)
        self._own_dir = workdir is None
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="edge-mosquitto-"))
        self.config_path = self.workdir / "mosquitto.conf"
        self.log_path = self.workdir / "mosquitto.log"
        lines = [f"listener {self.port} 127.0.0.1", *config_lines]
        if os.geteuid() == 0:
            lines.append("user root")  # mosquitto would switch to user 'mosquitto' and lose our files
        self.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> Mosquitto:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [self.binary, "-c", str(self.config_path)], stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        for port in [self.port, *self.extra_ports]:
            if not wait_port(port, timeout):
                self.stop()
                raise BrokerError(f"mosquitto did not listen on 127.0.0.1:{port}; log:\n{self.log_tail()}")
        return self

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 5.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()
