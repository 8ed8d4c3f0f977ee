"""Output ``{prefix}/{site}/stats``: periodic counters and gauges of the running agent.

Example::

    {"schema": "edge-agent/stats/1", "site": "kitchen", "ts": 1764500000.0, "uptime_s": 120.5,
     "counters": {"received": 10, "intents": 9, "dlq": 1, ...},
     "queue": {"depth": 0, "capacity": 256, "backpressure_waits": 0},
     "latency_ms": {"count": 9, "p50": 1.2, "p95": 2.0, "p99": 2.4},
     "rss_mb": 48.2, "cpu_percent": 3.5, "mode": "normal",
     "sla": {"enabled": true, "temperature_c": 51.2, "thermal_limit_c": 80.0, "switches": 0,
             "tasks": {"intents": {"step": "normal", "steps": ["normal", "short_input"],
                                   "p95_ms": 2.1, "budget_ms": 250.0, "samples": 100}, ...},
             "recent": []},
     "runtime": {"active": "cpu",
                 "backends": [{"name": "edgetpu", "kind": "edgetpu", "status": "unavailable",
                               "reason": "libedgetpu.so.1 is not installed ...", "probes": 1,
                               "failures": 0, "probe_ms": 0.4},
                              {"name": "cpu", "kind": "cpu", "status": "active", ...}],
                 "switches": [{"at": 1764500000.0, "from": null, "to": "cpu", "reason": "start"}],
                 "failovers": 0, "retried_requests": 0, "served": 9, "batches": 9,
                 "batched_requests": 9, "residency": "resident", "threads": 1,
                 "cpu": {"quota_cores": 0.5, "throttled_s": 0.0, "throttle_calls": 0.0,
                         "log_paced_s": 0.0, "log_paces": 3}}}

``runtime`` is there when the agent runs its model through the runtime chain (always, for
``edge-agent run``); ``runtime.cpu`` only with ``runtime.cpu.quota`` set (null otherwise).
``mode`` is always there: ``degraded`` while any task is below the top of its SLA ladder
(docs/sla.md); ``sla`` is there when the agent runs the ladder (always, for ``edge-agent run``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from edge_agent.messages.base import Message

__all__ = ["SCHEMA", "SUFFIX", "StatsMessage"]

SUFFIX = "stats"
SCHEMA = "edge-agent/stats/1"


@dataclass(frozen=True)
class StatsMessage(Message):
    site: str
    ts: float
    uptime_s: float
    counters: dict[str, int]
    queue: dict[str, int]
    latency_ms: dict[str, float]
    rss_mb: float
    cpu_percent: float
    mode: str = "normal"
    extra: dict[str, Any] = field(default_factory=dict)

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "site": self.site,
            "ts": round(self.ts, 3),
            "uptime_s": round(self.uptime_s, 3),
            "counters": dict(self.counters),
            "queue": dict(self.queue),
            "latency_ms": dict(self.latency_ms),
            "rss_mb": round(self.rss_mb, 2),
            "cpu_percent": round(self.cpu_percent, 2),
            "mode": self.mode,
        }
        out.update(self.extra)
        return out
