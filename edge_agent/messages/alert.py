"""Output ``{prefix}/{site}/alert/{source}``: one incident (``edge_agent/logs/incidents.py``),
sent at once, with the batch of lines that opened it: the line that opened it, and ``joined``, how
many lines of that batch joined it (a dump, a stack trace, a burst of the same fault). Lines that
join it later raise no alert; the summary's anomaly item of the opening line counts them all.

Example::

    {"schema": "edge-agent/log-alert/3", "source": "gw-kernel", "at": 1764500014.2,
     "line_ts": null,
     "line": "<1>[ 5120.331201] BUG: unable to handle page fault for address: ffff8a4b00000010",
     "template_id": 12, "template": "BUG: unable to handle page fault for address: <*>",
     "severity": "critical", "category": "kernel", "score": 0.97, "suppressed": 0, "values": {},
     "joined": 11,
     "headline": "gw-kernel CRITICAL kernel: BUG: unable to handle page fault for address:
                  ffff8a4b00000010 (+11 lines)"}

``suppressed`` counts earlier lines of the same template held back by the alert cooldown;
``joined`` the lines of this incident after its opening line, in the same batch;
``values`` counts the template's IPs, users, hosts, ports, devices and units in the source's open
window, this line included (``edge_agent.logs.values``). The headline shows the message without
the line's header (its time, host and level), after the program that wrote it when the header
named one and it is not the category's name (``sshd: ...``, not ``kernel: kernel: ...``);
``line`` keeps the whole line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from edge_agent.messages.base import SourceMessage
from edge_agent.messages.text import shorten

__all__ = ["SCHEMA", "SUFFIX", "AlertMessage"]

SUFFIX = "alert"
SCHEMA = "edge-agent/log-alert/3"
MAX_LINE_CHARS = 1000
HEADLINE_LINE_CHARS = 100
HEADLINE_APP_CHARS = 40  # a longer program name is left out of the headline


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
    joined: int = 0
    # for the headline only: the line without its header, and the program the header named
    message: str = ""
    app: str | None = None

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    @property
    def headline(self) -> str:
        """``gw ERROR auth: sshd: <the message, cut between words> (8 IPs, top ...) (+3 lines)``"""
        message = self.message.strip() or self.line
        shown = (
            self.app
            and len(self.app) <= HEADLINE_APP_CHARS
            and self.app != self.category
            and not message.startswith(self.app)
        )
        app = f"{self.app}: " if shown else ""
        text = app + (shorten(message, HEADLINE_LINE_CHARS - len(app)) or self.template[:HEADLINE_LINE_CHARS])
        joined = f" (+{self.joined} line{'s' if self.joined != 1 else ''})" if self.joined else ""
        return f"{self.source} {self.severity.upper()} {self.category}: {text}{self._where()}{joined}"

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
            "joined": self.joined,
            "headline": self.headline,
        }
