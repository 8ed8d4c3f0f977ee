"""Who and where in a log message: IP addresses, users, hosts, ports, network and storage devices,
systemd units. Summaries count them per template so a headline can say "from 8 hosts; top
173.234.31.186 (285)".

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
_VALUES = re.compile(
    r"(?<![\w.:])(?P<ip>(?:\d{1,3}\.){3}\d{1,3}|(?:[0-9a-fA-F]{1,4}:){2,7}[0-9a-fA-F]{1,4})(?![\w.:])"
    r"|\b(?:user|username|login)[=:]?\s?['\"]?(?P<user>(?!from\b|by\b|for\b|unknown\b)[A-Za-z_][\w.@-]{0,31})"
    r"|\bfor (?P<user2>(?!user\b|invalid\b)[A-Za-z_][\w.-]{0,31}) from\b"
    r"|\b(?:r?host|hostname)[=:]\s?(?P<host>[A-Za-z0-9][\w.-]{0,63})"
    r"|\bport[=: ](?P<port>\d{1,5})\b"
    r"|\b(?P<device>(?:eth|wlan|wlp\d+s|enp\d+s|en|wl|sd[a-z]|mmcblk|nvme\d+n|ttyUSB|ttyACM|ttyS|ttyAMA|can|br|usb)"
    r"\d+(?:p\d+)?)\b"
    r"|\b(?P<unit>[\w@.-]+\.(?:service|socket|timer|mount|target|path|slice|scope))\b"
)
_IP = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$")
_TRIGGERS = re.compile(r"\d|user|login|\bfor\b|host|\.(?:service|socket|timer|mount|target|path|slice|scope)")


def extract(message: str) -> list[tuple[str, str]]:
    """(kind, value) pairs of ``message``, in order."""
    if _TRIGGERS.search(message) is None:
        return []
    out = []
    for m in _VALUES.finditer(message):
        kind = m.lastgroup
        if kind is None:
            continue
        value = m.group(kind)
        if kind == "user2":
            kind = "user"
        elif kind == "host" and _IP.match(value):
            kind = "ip"
        out.append((kind, value))
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
