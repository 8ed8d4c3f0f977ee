"""systemd ``sd_notify`` without a dependency: READY=1, WATCHDOG=1, STOPPING=1, STATUS=...

Used by the service under ``Type=notify`` with ``WatchdogSec=``. Every function is a no-op
(returns False) when ``$NOTIFY_SOCKET`` is unset, i.e. when not started by systemd.

    >>> notifier = Notifier.from_env()
    >>> notifier.ready()          # after the broker connection and the model are up
    >>> notifier.watchdog()       # from the main loop, at least every watchdog_interval() s
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping

__all__ = ["Notifier", "Watchdog", "watchdog_interval"]


def watchdog_interval(env: Mapping[str, str] | None = None) -> float | None:
    """Half of systemd's watchdog timeout in seconds (``$WATCHDOG_USEC``), or None if off.

    ``$WATCHDOG_PID``, when set, must be our pid (systemd's rule for forked helpers).
    """
    env = os.environ if env is None else env
    usec = env.get("WATCHDOG_USEC")
    if not usec:
        return None
    pid = env.get("WATCHDOG_PID")
    if pid and pid.isascii() and pid.isdigit() and int(pid) != os.getpid():
        return None
    try:
        value = int(usec)
    except ValueError:
        return None
    return value / 2_000_000 if value > 0 else None


class Notifier:
    """Sends datagrams to the ``$NOTIFY_SOCKET`` (a path, or ``@name`` in the abstract namespace)."""

    def __init__(self, address: str | None) -> None:
        self.address: str | None = None
        if address:
            self.address = "\0" + address[1:] if address.startswith("@") else address

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        env = os.environ if env is None else env
        return cls(env.get("NOTIFY_SOCKET"))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *fields: str) -> bool:
        """Send ``KEY=value`` lines; True when systemd's socket took them."""
        if self.address is None:
            return False
        message = "\n".join(fields).encode("utf-8")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            try:
                sock.connect(self.address)
                sock.sendall(message)
            except OSError:
                return False  # systemd went away (e.g. during shutdown): nothing to tell
        return True

    def ready(self, status: str | None = None) -> bool:
        return self.notify("READY=1", *((f"STATUS={status}",) if status else ()))

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={text}")


class Watchdog:
    """Pings systemd's watchdog from the main loop, at most once per ``watchdog_interval()``;
    does nothing when the unit has no ``WatchdogSec=``."""

    def __init__(self, notifier: Notifier, interval_s: float | None) -> None:
        self.notifier = notifier
        self.interval_s = interval_s
        self._last = 0.0

    @classmethod
    def from_env(cls, notifier: Notifier, env: Mapping[str, str] | None = None) -> Watchdog:
        return cls(notifier, watchdog_interval(env))

    def ping(self, now: float | None = None) -> bool:
        """``WATCHDOG=1`` when the interval has passed since the last ping; True when sent."""
        now = time.monotonic() if now is None else now
        if self.interval_s is None or now - self._last < self.interval_s:
            return False
        self._last = now
        return self.notifier.watchdog()
