"""CPU quota: interpreter threads, core affinity, and a duty-cycle governor over process CPU time.

The governor is a token bucket in CPU-seconds: it earns ``quota`` CPU-seconds per wall second
(at most ``burst_s`` worth ahead) and is charged the process's CPU time as measured by the
kernel (all threads: interpreters, MQTT, everything). Background (batch) work calls
:meth:`CpuGovernor.throttle` before each unit of work and sleeps while the bucket is in debt,
so over any window of a few seconds the process uses at most ``quota`` cores on average, and
about that much when there is enough batch work. Interactive work never waits on the governor:
it is marked with :meth:`CpuGovernor.interactive`, batch work yields while any is in flight, and
its CPU time is charged to the bucket so batch work makes up for it afterwards.

On Linux with cgroup v2 the process's ``cpu.max`` (and its ancestors') is read; the governor
aims at the smaller of the configured quota and that limit and never writes to the cgroup, so
it does not fight the supervisor's limit.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import structlog

from edge_agent.errors import ConfigError

__all__ = [
    "CpuGovernor",
    "apply_affinity",
    "cgroup_cpu_limit",
    "effective_quota",
    "governor_from_config",
    "interpreter_threads",
]

_log = structlog.get_logger("edge_agent.runtime.quota")
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def _own_cgroup(proc_cgroup: Path) -> str | None:
    try:
        text = proc_cgroup.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("0::"):  # the cgroup v2 unified hierarchy
            return line[3:].strip() or "/"
    return None


def _read_cpu_max(path: Path) -> float | None:
    """Cores allowed by one ``cpu.max`` file (``"50000 100000"`` -> 0.5; ``"max ..."`` -> None)."""
    try:
        fields = path.read_text().split()
    except OSError:
        return None
    if len(fields) < 1 or fields[0] == "max":
        return None
    try:
        quota = int(fields[0])
        period = int(fields[1]) if len(fields) > 1 else 100_000
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def cgroup_cpu_limit(cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """The tightest cgroup v2 ``cpu.max`` over this process's cgroup and its ancestors, in cores."""
    rel = _own_cgroup(proc_cgroup)
    if rel is None:
        return None
    limits = []
    node = cgroup_root / rel.lstrip("/")
    while True:
        limit = _read_cpu_max(node / "cpu.max")
        if limit is not None:
            limits.append(limit)
        if node == cgroup_root or cgroup_root not in node.parents:
            break
        node = node.parent
    return min(limits) if limits else None


def effective_quota(configured: float | None, cgroup: float | None) -> float | None:
    """What the governor aims at: the configured quota, never above the cgroup's limit."""
    present = [q for q in (configured, cgroup) if q is not None]
    return min(present) if present else None


def interpreter_threads(requested: int, quota: float | None) -> int:
    """Interpreter threads under a quota: no more than ceil(quota) (more threads only contend)."""
    if quota is None:
        return max(1, requested)
    return max(1, min(requested, math.ceil(quota)))


def apply_affinity(cpus: Sequence[int]) -> set[int]:
    """Pin this process to ``cpus``; ConfigError if one is not available to it."""
    allowed = os.sched_getaffinity(0)
    wanted = set(cpus)
    missing = sorted(wanted - allowed)
    if missing:
        raise ConfigError(
            f"runtime.cpu.affinity: CPUs {missing} are not available to this process "
            f"(allowed: {sorted(allowed)})"
        )
    os.sched_setaffinity(0, wanted)
    return wanted


class CpuGovernor:
    """Keeps the process's average CPU use at or under ``quota`` cores (see the module docs)."""

    def __init__(
        self,
        quota: float,
        *,
        burst_s: float = 0.2,
        max_debt_s: float = 2.0,
        cpu_time: Callable[[], float] = time.process_time,
        now: Callable[[], float] = time.monotonic,
        sleep: Callable[[], None] | Callable[[float], None] = time.sleep,
    ) -> None:
        if quota <= 0:
            raise ConfigError(f"cpu quota must be > 0 cores, got {quota}")
        self.quota = quota
        self._cap = burst_s * quota
        self._floor = -max_debt_s * quota
        self._cpu_time = cpu_time
        self._now = now
        self._sleep: Any = sleep
        self._tokens = 0.0
        self._t = now()
        self._c = cpu_time()
        self._lock = threading.Lock()
        self._state = threading.Lock()
        self._interactive = 0
        self.throttled_s = 0.0
        self.throttle_calls = 0

    @contextlib.contextmanager
    def interactive(self) -> Iterator[None]:
        """Mark interactive work in flight: batch work waits until it is done."""
        with self._state:
            self._interactive += 1
        try:
            yield
        finally:
            with self._state:
                self._interactive -= 1

    def throttle(self) -> float:
        """Called by batch work before each unit: sleeps while over quota; returns seconds slept."""
        slept = 0.0
        with self._lock:
            self.throttle_calls += 1
            while True:
                tokens = self._refill()
                if self._interactive:
                    wait = 0.002
                elif tokens < -1e-9:
                    wait = min(max(-tokens / self.quota, 0.001), 0.25)
                else:
                    break
                self._sleep(wait)
                slept += wait
            self.throttled_s += slept
        return slept

    def wait_needed(self) -> float:
        """Seconds batch work should wait now (0 when within quota); never sleeps.

        For a worker that waits on its own queue, so an interactive request can wake it."""
        with self._lock:
            tokens = self._refill()
        return 0.0 if tokens >= -1e-9 else -tokens / self.quota

    def charge_wait(self, seconds: float) -> None:
        """Count ``seconds`` a caller of :meth:`wait_needed` spent waiting."""
        self.throttled_s += seconds

    def stats(self) -> dict[str, float]:
        return {
            "quota_cores": self.quota,
            "throttled_s": round(self.throttled_s, 3),
            "throttle_calls": float(self.throttle_calls),
        }

    def _refill(self) -> float:
        t, c = self._now(), self._cpu_time()
        self._tokens += (t - self._t) * self.quota - (c - self._c)
        self._tokens = max(self._floor, min(self._tokens, self._cap))
        self._t, self._c = t, c
        return self._tokens


def governor_from_config(
    quota: float | None,
    affinity: Sequence[int] | None = None,
    *,
    burst_s: float = 0.2,
    cgroup_limit: Callable[[], float | None] = cgroup_cpu_limit,
) -> CpuGovernor | None:
    """Apply affinity and build the governor for the effective quota (None: no quota at all)."""
    if affinity:
        apply_affinity(affinity)
    limit = cgroup_limit()
    target = effective_quota(quota, limit)
    if quota is not None and limit is not None and limit < quota:
        _log.info("cpu_quota_capped_by_cgroup", configured=quota, cgroup=limit)
    if quota is None:
        return None  # a cgroup limit alone is the kernel's to enforce
    assert target is not None
    return CpuGovernor(target, burst_s=burst_s)
