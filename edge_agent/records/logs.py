"""Value types shared by the log parts and the pipeline: what comes in, what goes out.

These are the stable contract with the pipeline (``LogService.ingest``/``tick``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["LogLabel", "Outgoing", "RawLine"]


@dataclass(frozen=True, slots=True)
class RawLine:
    """One log line as received. ``ts``/``level`` come from structured inputs (JSON) when present.

    ``text`` may hold anything: it is parsed defensively (headers, syslog, garbage).
    """

    text: str
    ts: float | None = None
    level: str | None = None


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message the logs part wants published: ``topic_suffix`` is ``summary/<source>`` or
    ``alert/<source>`` (the pipeline prepends ``{prefix}/{site}/``); ``payload`` is JSON-ready."""

    topic_suffix: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LogLabel:
    """What the classifier says about one line: severity and category names from
    ``edge_agent.logs.labels``, whether it is anomalous, and the anomaly score in [0, 1]."""

    severity: str
    category: str
    anomaly: bool
    score: float
