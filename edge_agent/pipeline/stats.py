"""Counters, latency percentiles and process gauges (RSS, CPU) for the stats topic."""

from __future__ import annotations

import math
import os
import resource
import threading
import time
from collections import Counter, deque

__all__ = ["LatencyWindow", "ProcessGauges", "SafeCounters", "percentiles"]


class SafeCounters:
    """A thread-safe ``Counter``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def get(self, name: str) -> int:
        with self._lock:
            return self._counts[name]

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


def percentiles(values: list[float], points: tuple[float, ...] = (50, 95, 99)) -> dict[str, float]:
    """Nearest-rank percentiles; empty input gives zeros."""
    if not values:
        return {f"p{int(p)}": 0.0 for p in points}
    ordered = sorted(values)
    out: dict[str, float] = {}
    for p in points:
        rank = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
        out[f"p{int(p)}"] = round(ordered[rank], 3)
    return out


class LatencyWindow:
    """The most recent ``size`` latencies (ms)."""

    def __init__(self, size: int = 4096) -> None:
        self._values: deque[float] = deque(maxlen=size)
        self._lock = threading.Lock()
        self.total = 0

    def add(self, ms: float) -> None:
        with self._lock:
            self._values.append(ms)
            self.total += 1

    def summary(self) -> dict[str, float]:
        with self._lock:
            values = list(self._values)
        out: dict[str, float] = {"count": float(len(values))}
        out.update(percentiles(values))
        return out


class ProcessGauges:
    """RSS from /proc and CPU percent (user+system) since the previous reading."""

    def __init__(self) -> None:
        self._last_cpu = self._cpu_s()
        self._last_wall = time.monotonic()

    @staticmethod
    def _cpu_s() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    @staticmethod
    def rss_mb() -> float:
        try:
            with open("/proc/self/statm", encoding="ascii") as fh:
                pages = int(fh.read().split()[1])
            return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
        except (OSError, ValueError, IndexError):
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def cpu_percent(self) -> float:
        cpu, wall = self._cpu_s(), time.monotonic()
        spent, elapsed = cpu - self._last_cpu, wall - self._last_wall
        self._last_cpu, self._last_wall = cpu, wall
        return 100.0 * spent / elapsed if elapsed > 0 else 0.0
