"""Output ``{prefix}/{site}/alert/{source}``: one critical anomalous line, sent at once.

Example::

    {"schema": "edge-agent/log-alert/1", "source": "gw-kernel", "at": 1764500012.5,
     "line_ts": null, "line": "Kernel panic - not syncing: Fatal exception",
     "template_id": 12, "template": "Kernel panic - not syncing: Fatal exception",
     "severity": "critical", "category": "kernel", "score": 0.97, "suppressed": 0,
     "headline": "gw-kernel CRITICAL kernel: Kernel panic - not syncing: Fatal exception"}

``suppressed`` counts earlier lines of the same template held back by the alert cooldown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from edge_agent.messages.base import SourceMessage

__all__ = ["SCHEMA", "SUFFIX", "AlertMessage"]

SUFFIX = "alert"
SCHEMA = "edge-agent/log-alert/1"
MAX_LINE_CHARS = 1000


@dataclass(frozen=True)
class AlertMessage(SourceMessage):
    at: float
    line: str
    template_id: int
    template: str
    severity: str
    category: str
    score: float
    line_ts: float | None = None
    suppressed: int = 0

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    @property
    def headline(self) -> str:
        text = self.line if len(self.line) <= 100 else self.line[:99] + "…"
        return f"{self.source} {self.severity.upper()} {self.category}: {text}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "source": self.source,
            "at": round(self.at, 3),
            "line_ts": None if self.line_ts is None else round(self.line_ts, 3),
            "line": self.line[:MAX_LINE_CHARS],
            "template_id": self.template_id,
            "template": self.template[:MAX_LINE_CHARS],
            "severity": self.severity,
            "category": self.category,
            "score": round(float(self.score), 4),
            "suppressed": self.suppressed,
            "headline": self.headline,
        }
