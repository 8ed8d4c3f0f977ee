"""Input ``{prefix}/{site}/logs/{source}``: log lines of one source (a device, a daemon).

Payload, one of:
- text: one or more lines, newline separated (``kernel: eth0 link down\\nkernel: eth0 link up``);
- a JSON object ``{"msg": "...", "ts": 1700000000.5, "level": "warning"}`` (``line`` may replace ``msg``);
- a JSON array of such objects (or of strings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edge_agent.errors import PayloadError
from edge_agent.messages._json import loads_object
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
    head = text.lstrip()[:1]
    if head in ("{", "["):
        lines = _from_json(loads_object(raw))
    else:
        lines = [RawLine(text=line) for line in text.splitlines() if line.strip()]
    if not lines:
        raise PayloadError("log payload holds no lines")
    if len(lines) > MAX_LINES:
        raise PayloadError(f"log payload holds more than {MAX_LINES} lines")
    return lines


def _from_json(data: Any) -> list[RawLine]:
    items = data if isinstance(data, list) else [data]
    return [_line(item, i) for i, item in enumerate(items)]


def _line(item: Any, index: int) -> RawLine:
    if isinstance(item, str):
        return RawLine(text=item)
    if not isinstance(item, dict):
        raise PayloadError(f"log entry {index} must be an object or a string")
    text = item.get("msg", item.get("line"))
    if not isinstance(text, str):
        raise PayloadError(f"log entry {index} needs a string 'msg' or 'line'")
    ts = item.get("ts")
    if ts is not None and (isinstance(ts, bool) or not isinstance(ts, (int, float))):
        raise PayloadError(f"log entry {index}: 'ts' must be a number (seconds since the epoch)")
    level = item.get("level")
    if level is not None and not isinstance(level, str):
        raise PayloadError(f"log entry {index}: 'level' must be a string")
    return RawLine(text=text, ts=None if ts is None else float(ts), level=level)


@dataclass(frozen=True)
class LogBatch:
    """The lines of one logs message and the source its topic names (``logs/<source>``)."""

    source: str
    lines: tuple[RawLine, ...]

    SUFFIX = SUFFIX
    SCHEMA = SCHEMA

    @staticmethod
    def filter_topic(topics: SiteTopics) -> str:
        return filter_topic(topics)

    @staticmethod
    def topic(topics: SiteTopics, source: str) -> str:
        return topics.topic(SUFFIX, source)

    @classmethod
    def parse(cls, source: str, raw: bytes) -> LogBatch:
        """Decode a payload; raises PayloadError naming what is wrong."""
        return cls(source=source, lines=tuple(parse_lines(raw)))
