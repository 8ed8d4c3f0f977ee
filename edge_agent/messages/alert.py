"""Output ``{prefix}/{site}/alert/{source}``: one critical anomalous line, sent at once.

Example::

    {"schema": "edge-agent/log-alert/2", "source": "sshd", "at": 1764500012.5,
     "line_ts": null, "line": "Failed password for root from 203.0.113.7 port 50122 ssh2",
     "template_id": 12, "template": "Failed password for <*> from <*> port <*> <*>",
     "severity": "error", "category": "auth", "score": 0.97, "suppressed": 0,
     "values": {"user": {"distinct": 1, "top": [["root", 40]]},
                "ip": {"distinct": 8, "top": [["203.0.113.7", 28], ["198.51.100.23", 6]]},
                "port": {"distinct": 40, "top": [["50122", 1]]}},
     "headline": "sshd ERROR auth: Failed password for root from 203.0.113.7 port 50122 ssh2 (8 IPs, top
                  203.0.113.7 (28))"}

``suppressed`` counts earlier lines of the same template held back by the alert cooldown;
``values`` counts the template's IPs, users, hosts, ports, devices and units in the source's open
window, this line included (``edge_agent.logs.values``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from edge_agent.messages.base import SourceMessage

__all__ = ["SCHEMA", "SUFFIX", "AlertMessage"]

SUFFIX = "alert"
SCHEMA = "edge-agent/log-alert/2"
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
    values: dict[str, Any] = field(default_factory=dict)

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    @property
    def headline(self) -> str:
        text = self.line if len(self.line) <= 100 else self.line[:99] + "…"
        return f"{self.source} {self.severity.upper()} {self.category}: {text}{self._where()}"

    def _where(self) -> str:
        """`` (8 IPs, top 203.0.113.7 (28))`` when the template came from more than one."""
        for kind, plural in (("ip", "IPs"), ("host", "hosts"), ("user", "users"), ("device", "devices")):
            item = self.values.get(kind)
            if isinstance(item, dict) and int(item.get("distinct", 0)) > 1 and item.get("top"):
                value, count = item["top"][0]
                return f" ({item['distinct']} {plural}, top {str(value)[:40]} ({count}))"
        return ""

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
            "values": self.values,
            "headline": self.headline,
        }
