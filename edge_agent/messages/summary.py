"""Output ``{prefix}/{site}/summary/{source}``: what one source's logs said in one window.

Example::

    {"schema": "edge-agent/log-summary/2", "source": "gw-kernel",
     "window": {"start": 1764500000.0, "end": 1764500060.0, "lines": 1520, "reason": "time"},
     "severity_counts": {"debug": 0, "info": 1490, "notice": 0, "warning": 22, "error": 7, "critical": 1},
     "top_templates": [{"template_id": 3, "template": "eth0: link <*>", "count": 600,
                        "example": "eth0: link up", "severity": "info", "category": "network"}],
     "new_templates": [{"template_id": 41, "template": "mmc0: error <*> whilst initialising SD card",
                        "count": 2, "example": "mmc0: error -110 whilst initialising SD card"}],
     "surging": [{"template_id": 7, "template": "Failed password for <*> from <*> port <*> <*>",
                  "count": 140, "rate": 2.33, "baseline": 0.1, "factor": 23.3}],
     "anomalies": [{"line": "...", "template_id": 41, "severity": "error", "category": "storage",
                    "score": 0.91}],
     "anomaly_count": 2, "truncated_lines": 0, "templates_known": 57,
     "story": {"template_id": 41, "template": "mmc0: error <*> whilst initialising SD card", "count": 2,
               "example": "mmc0: error -110 whilst initialising SD card", "severity": "error",
               "category": "storage", "values": {"device": {"distinct": 1, "top": [["mmc0", 2]]}}},
     "headline": "gw-kernel: 1520 lines, 1 critical, 7 errors; 2× mmc0: error <*> whilst initialising SD card
                  from mmc0 (2); 2 anomalies; 1 new: mmc0: error <*> whilst initialising SD card"}

Template items (top, new, story) carry ``values`` when their lines named any: per kind (``ip``,
``user``, ``host``, ``port``, ``device``, ``unit``) the number of distinct values and the top three
with their counts (``edge_agent.logs.values``).

``rate`` and ``baseline`` are lines per second; ``baseline`` is the template's moving average
(EWMA) over earlier windows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from edge_agent.messages.base import SourceMessage

__all__ = ["SCHEMA", "SUFFIX", "SummaryMessage"]

SUFFIX = "summary"
SCHEMA = "edge-agent/log-summary/2"


@dataclass(frozen=True)
class SummaryMessage(SourceMessage):
    start: float
    end: float
    lines: int
    reason: str
    severity_counts: dict[str, int]
    headline: str
    top_templates: list[dict[str, Any]] = field(default_factory=list)
    new_templates: list[dict[str, Any]] = field(default_factory=list)
    surging: list[dict[str, Any]] = field(default_factory=list)
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    anomaly_count: int = 0
    truncated_lines: int = 0
    templates_known: int = 0
    story: dict[str, Any] | None = None

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "source": self.source,
            "window": {
                "start": round(self.start, 3),
                "end": round(self.end, 3),
                "lines": self.lines,
                "reason": self.reason,
            },
            "severity_counts": dict(self.severity_counts),
            "top_templates": self.top_templates,
            "new_templates": self.new_templates,
            "surging": self.surging,
            "anomalies": self.anomalies,
            "anomaly_count": self.anomaly_count,
            "truncated_lines": self.truncated_lines,
            "templates_known": self.templates_known,
            "story": self.story,
            "headline": self.headline,
        }
