"""Input ``{prefix}/{site}/logs/{source}``: log lines of one source (a device, a daemon).

Payload, one of:
- a JSON object ``{"msg": "...", "ts": 1700000000.5, "level": "warning"}`` (``line`` may replace ``msg``),
  or one entry of journald's JSON export (``MESSAGE``, ``PRIORITY``, ``__REALTIME_TIMESTAMP``);
- a JSON array of such objects (or of strings);
- anything else is text: one or more lines, newline separated (``kernel: eth0 link down\\nkernel: eth0
  link up``). dmesg (``[    1.234] ...``), syslog, logfmt and newline-separated JSON (``journalctl -o
  json``) are text lines; each line is parsed on its own (``edge_agent.logs.parse``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from edge_agent.errors import PayloadError
from edge_agent.messages._json import loads_object
from edge_agent.messages.base import SourceMessage
from edge_agent.messages.topics import SiteTopics, validate_level
from edge_agent.records.logs import RawLine

__all__ = ["MAX_LINES", "SCHEMA", "SUFFIX", "LogBatch", "filter_topic", "parse_lines", "source_of"]

SUFFIX = "logs"
SCHEMA = "edge-agent/logs/1"
MAX_LINES = 10_000


def filter_topic(topics: SiteTopics) -> str:
    """The subscription filter ``{prefix}/{site}/logs/+``."""
    return f"{topics.base}/{SUFFIX}/+"


def source_of(levels: list[str]) -> str | None:
    """``["logs", "kernel"]`` -> ``"kernel"``; anything else -> None."""
    if len(levels) == 2 and levels[0] == SUFFIX:
        try:
            return validate_level(levels[1], "log source")
        except ValueError:
            return None
    return None


def parse_lines(raw: bytes) -> list[RawLine]:
    """Decode a logs payload; raises PayloadError naming what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"log payload is not UTF-8: {exc.reason} at byte {exc.start}") from None
    lines = _documented_json(raw, text) if text.lstrip()[:1] in ("{", "[") else None
    if lines is None:
        lines = [RawLine(text=line) for line in text.splitlines() if line.strip()]
    if not lines:
        raise PayloadError("log payload holds no lines")
    if len(lines) > MAX_LINES:
        raise PayloadError(f"log payload holds more than {MAX_LINES} lines")
    return lines


def _documented_json(raw: bytes, text: str) -> list[RawLine] | None:
    """The entries of a payload in one of the documented JSON shapes; None when it is not one
    (then it is text: a dmesg line starts with "[", a journald export holds one object a line)."""
    try:
        data = loads_object(raw)
    except PayloadError:
        return None
    items = data if isinstance(data, list) else [data]
    lines = [_line(item) for item in items]
    if not items or any(line is None for line in lines):
        return None
    return [line for line in lines if line is not None]


def _line(item: Any) -> RawLine | None:
    """One documented entry: a string, ``{"msg"|"line", "ts"?, "level"?}`` or a journald entry."""
    if isinstance(item, str):
        return RawLine(text=item)
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("MESSAGE"), str) and "msg" not in item and "line" not in item:
        return _journald(item)
    text = item.get("msg", item.get("line"))
    ts = item.get("ts")
    level = item.get("level")
    if (
        not isinstance(text, str)
        or (ts is not None and (isinstance(ts, bool) or not isinstance(ts, (int, float))))
        or (level is not None and not isinstance(level, str))
    ):
        return None
    return RawLine(text=text, ts=None if ts is None else float(ts), level=level)


def _journald(item: dict[str, Any]) -> RawLine:
    """An entry of ``journalctl -o json``: MESSAGE, PRIORITY ("0".."7"), __REALTIME_TIMESTAMP (µs)."""
    us = item.get("__REALTIME_TIMESTAMP")
    prio = item.get("PRIORITY")
    tag = item.get("SYSLOG_IDENTIFIER")
    text = str(item["MESSAGE"])
    return RawLine(
        text=f"{tag}: {text}" if isinstance(tag, str) and tag else text,
        ts=int(us) / 1e6 if isinstance(us, str) and us.isascii() and us.isdigit() else None,
        level=prio if isinstance(prio, str) and prio.isascii() and prio.isdigit() else None,
    )


@dataclass(frozen=True)
class LogBatch(SourceMessage):
    """The lines of one logs message and the source its topic names (``logs/<source>``).

    Example: ``LogBatch("kernel", (RawLine("eth0: link up", level="info"),))`` has the topic
    ``edge/kitchen/logs/kernel`` (``batch.topic(topics)``) and the payload
    ``[{"msg": "eth0: link up", "level": "info"}]``, which :meth:`parse` reads back."""

    lines: tuple[RawLine, ...] = ()

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    @staticmethod
    def filter_topic(topics: SiteTopics) -> str:
        return filter_topic(topics)

    def to_json(self) -> list[dict[str, Any]]:
        """The payload a client publishes: an array of entry objects (``msg``, ``ts``, ``level``)."""
        return [_entry(line) for line in self.lines]

    def to_dict(self) -> dict[str, Any]:
        """The batch as one object (for records and debugging): schema id, source and entries.
        Its payload is :meth:`to_json`, the array the schema describes."""
        return {"schema": SCHEMA, "source": self.source, "lines": self.to_json()}

    @classmethod
    def parse(cls, source: str, raw: bytes) -> LogBatch:
        """Decode a payload; raises PayloadError naming what is wrong."""
        return cls(source=source, lines=tuple(parse_lines(raw)))


def _entry(line: RawLine) -> dict[str, Any]:
    optional = {"ts": line.ts, "level": line.level}
    return {"msg": line.text, **{k: v for k, v in optional.items() if v is not None}}
