"""Who and where in a log message: IP addresses, users, hosts, ports, network and storage devices,
systemd units. Summaries count them per template so a headline can say "from 8 hosts; top
203.0.113.7 (285)".

Recognized by shape and by the word before them, never per product: an IPv4/IPv6 address; the
word after ``user``/``for ... from``; the name after ``host``/``rhost=``; the number after
``port``; ``eth0``/``wlan1``/``sda2``/``ttyUSB0``-like device names; ``name.service``-like units.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["KINDS", "ValueCounts", "extract"]

KINDS = ("ip", "user", "host", "port", "device", "unit")
_MAX_DISTINCT = 500
_IPV4 = re.compile(r"(?<![\w.:])(?:\d{1,3}\.){3}\d{1,3}(?![\w.:])")
_IPV6 = re.compile(r"(?<![\w.:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?![\w.:])")
_MAC = re.compile(r"^(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$")
_USER = re.compile(
    r"\b(?:user|username|login)[=:]?\s?['\"]?((?!from\b|by\b|for\b|unknown\b)[A-Za-z_][\w.@-]{0,31})"
    r"|\bfor ((?!user\b|invalid\b)[A-Za-z_][\w.-]{0,31}) from\b"
)
_HOST = re.compile(r"\b(?:r?host|hostname)[=:]\s?([A-Za-z0-9][\w.-]{0,63})")
_PORT = re.compile(r"\bport[=: ](\d{1,5})\b")
_DEVICE = re.compile(
    r"\b((?:eth|wlan|wlp\d+s|enp\d+s|en|wl|sd[a-z]|mmcblk|nvme\d+n|ttyUSB|ttyACM|ttyS|ttyAMA|can|br|usb)"
    r"\d+(?:p\d+)?)\b"
)
_UNIT_SUFFIXES = (".service", ".socket", ".timer", ".mount", ".target", ".path", ".slice", ".scope")
_UNIT = re.compile(r"\b([\w@.-]+\.(?:service|socket|timer|mount|target|path|slice|scope))\b")
_IP = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$")
_DIGIT = re.compile(r"\d")


def _ipv6(text: str) -> bool:
    """An IPv6 address, not a time (``13:30:32``) or a MAC: eight groups, or ``::``."""
    return ("::" in text and text != "::") or (text.count(":") == 7 and not _MAC.match(text))


def extract(message: str) -> list[tuple[str, str]]:
    """(kind, value) pairs of ``message``; each kind's pattern runs only when its trigger (a dot,
    a colon, a keyword, a digit) is in the message."""
    out: list[tuple[str, str]] = []
    digit = _DIGIT.search(message) is not None
    if digit and "." in message:
        out.extend(("ip", v) for v in _IPV4.findall(message))
    if message.count(":") >= 2:
        out.extend(("ip", v) for v in _IPV6.findall(message) if _ipv6(v))
    if "user" in message or "login" in message or " from " in message:
        out.extend(("user", a or b) for a, b in _USER.findall(message))
    if "host" in message:
        out.extend(("host", v) for v in _HOST.findall(message) if not _IP.match(v))  # IPs: counted above
    if digit and "port" in message:
        out.extend(("port", v) for v in _PORT.findall(message))
    if digit:
        out.extend(("device", v) for v in _DEVICE.findall(message))
    if any(suffix in message for suffix in _UNIT_SUFFIXES):
        out.extend(("unit", v) for v in _UNIT.findall(message))
    return out


class ValueCounts:
    """Counts of values per kind for one template in one window (at most ``_MAX_DISTINCT``
    distinct values per kind are counted; ``distinct`` then says "at least")."""

    __slots__ = ("counts", "overflow")

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}
        self.overflow: set[str] = set()

    def add(self, pairs: list[tuple[str, str]]) -> None:
        for kind, value in pairs:
            counter = self.counts.setdefault(kind, Counter())
            if value in counter or len(counter) < _MAX_DISTINCT:
                counter[value] += 1
            else:
                self.overflow.add(kind)

    def merge(self, other: ValueCounts) -> None:
        for kind, counter in other.counts.items():
            self.counts.setdefault(kind, Counter()).update(counter)
        self.overflow |= other.overflow

    def top(self, n: int = 3) -> dict[str, dict[str, object]]:
        """``{kind: {"distinct": k, "top": [[value, count], ...]}}`` in ``KINDS`` order."""
        return {
            kind: {
                "distinct": len(self.counts[kind]),
                "top": [[v, c] for v, c in self.counts[kind].most_common(n)],
            }
            for kind in KINDS
            if self.counts.get(kind)
        }
