"""Parsing what devices send: RFC 5424 and RFC 3164 syslog, JSON lines, and plain text with
headers of unknown formats (see ``header.py``). Never raises on content: binary, huge or
oddly encoded lines come back as a ``ParsedLine`` with what could be read."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from edge_agent.logs.header import LETTER_LEVELS, LEVEL_WORDS, pri_level, split_header
from edge_agent.records.logs import RawLine

__all__ = [
    "DEFAULT_MAX_CHARS",
    "ParsedLine",
    "clean_text",
    "decode_line",
    "display_message",
    "infer_severity",
    "normalize_level",
    "parse_line",
]

DEFAULT_MAX_CHARS = 8192
_SYSLOG_5424 = re.compile(
    r"^<(?P<pri>\d{1,3})>1 (?P<ts>\S+) (?P<host>\S+) (?P<app>\S+) (?P<procid>\S+) (?P<msgid>\S+) "
    r"(?P<sd>-|(?:\[(?:[^\]\\]|\\.)*\])+)(?: (?P<msg>.*))?$",
    re.DOTALL,
)
_SYSLOG_3164 = re.compile(
    r"^(?:<(?P<pri>\d{1,3})>)?(?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?P<host>\S+) "
    r"(?P<app>[^\s:\[]{1,64})(?:\[(?P<pid>[^\]]{0,32})\])?: ?(?P<msg>.*)$",
    re.DOTALL,
)
# logfmt: "time=... level=warn msg=\"disk almost full\" path=/data"
_LOGFMT_LEVEL = re.compile(r"(?:^|\s)(?:level|lvl|severity|loglevel)=\"?([A-Za-z]+|[0-7])\b")
_LOGFMT_MSG = re.compile(r"(?:^|\s)(?:msg|message)=(?:\"((?:[^\"\\]|\\.)*)\"|(\S+))")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# (pattern, severity), most severe first; whole words, case-insensitive. Faults of hardware,
# the kernel, storage and links are named in their own words too (machine checks, lockups,
# parity, hangs, stalls, respawn loops), not only in "error" or "failed"; a watchdog is
# critical only when it fires ("NMI watchdog: Enabled" is boot inventory)
_SEVERITY_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p + r"(?!=)", re.IGNORECASE), s)  # "panic=1" is a setting, not a panic
    for p, s in (
        (
            r"\b(?:panic|fatal|critical|emerg\w*|segfault|oops|out of memory|oom[- ]kill\w*|corrupt\w*|"
            r"thermal shutdown|overheat\w*|machine check(?=:| exception| events?| interrupt| error)|"
            r"(?:soft|hard) lockup|uncorrectable|unrecoverable|"
            r"watchdog(?: timer)? (?:timeout|expired|reset)|system halted)\b",
            "critical",
        ),
        (
            r"\b(?:error|errors|err|fail\w*|exception|denied|refused|unable|cannot|can't|invalid|abort\w*|"
            r"crash\w*|broken|lost|unreachable|killed|no response|not responding|under-?voltage|"
            r"parity|(?:checksum|csum|crc) mismatch|hang|hung|stall(?:s|ed)?|respawning too fast|"
            r"over-?current|bad (?:superblock|sector|block|geometry)|inconsistency|link (?:is )?down)\b",
            "error",
        ),
        (
            r"\b(?:warn\w*|timeout|timed out|retry\w*|retrying|degraded|deprecated|slow|high|low battery|"
            r"disconnect\w*|dropped|unexpected|offline|resetting)\b",
            "warning",
        ),
        (r"\b(?:debug|trace)\b", "debug"),
    )
)
# a fault that was corrected (ECC, parity) is worth a warning, not an error
_CORRECTED = re.compile(r"\b(?<!un)correct(?:ed|able)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """One line, split: source timestamp (epoch seconds) and level when the line carried them,
    host and app when a header named them, the message without its header."""

    text: str
    message: str
    ts: float | None = None
    level: str | None = None
    host: str | None = None
    app: str | None = None
    truncated: bool = False
    format: str = "text"


def decode_line(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text of ``raw``; invalid bytes become U+FFFD. Returns (text, was_invalid)."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


def clean_text(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[str, bool]:
    """Cut to ``max_chars`` and replace control characters (binary junk) by spaces."""
    truncated = len(text) > max_chars
    if truncated:
        text = text[:max_chars]
    text = text.rstrip("\r\n")
    if _CONTROL.search(text):
        text = _CONTROL.sub(" ", text)
    return text, truncated


def normalize_level(level: object) -> str | None:
    """A source's level (word, letter or syslog number) as one of our severity names."""
    if isinstance(level, bool):
        return None
    if isinstance(level, int) and 0 <= level <= 7:
        return pri_level(level)
    if not isinstance(level, str) or not level.strip():
        return None
    word = level.strip().strip("[]<>:").lower()
    if word.isascii() and word.isdigit() and int(word) <= 7:
        return pri_level(int(word))
    if word in LEVEL_WORDS:
        return LEVEL_WORDS[word]
    return LETTER_LEVELS.get(word.upper()) if len(word) == 1 else None


_UPTIME = re.compile(r"^\[\s*\d+\.\d+\]\s*")  # the kernel's "[86412.118402] "


def display_message(message: str) -> str:
    """``message`` as a person reads it in a headline: without a leading kernel uptime stamp or
    a leading level token (the headline says the severity), whitespace runs collapsed. A level
    token is a level word marked as one: in brackets, before a colon, in capitals, or before a
    ``tag:`` ("[ERROR] x", "warn: x", "WARNING x", "warning z2m: x"); "Error opening x" keeps
    its first word."""
    text = " ".join(_UPTIME.sub("", message.strip()).split())
    first, _, rest = text.partition(" ")
    word = first.strip("[]<>:")
    marked = first != word or word.isupper() or rest.split(" ", 1)[0].endswith(":")
    if rest and len(word) > 1 and word.isalpha() and marked and normalize_level(word) is not None:
        text = rest
    return text


def infer_severity(message: str) -> str:
    """Severity from the words of a message without a level (``info`` when nothing stands out)."""
    for pattern, severity in _SEVERITY_WORDS:
        if pattern.search(message):
            if severity == "error" and _CORRECTED.search(message):
                return "warning"
            return severity
    return "info"


def parse_line(line: RawLine | str, max_chars: int = DEFAULT_MAX_CHARS) -> ParsedLine:
    """Parse one received line (see module doc). ``RawLine.ts``/``level`` win over the text's."""
    raw = line if isinstance(line, RawLine) else RawLine(text=line)
    text, truncated = clean_text(raw.text, max_chars)
    parsed = _parse_text(text)
    level = normalize_level(raw.level) if raw.level is not None else None
    return ParsedLine(
        text=text,
        message=parsed.message,
        ts=raw.ts if raw.ts is not None else parsed.ts,
        level=level or parsed.level,
        host=parsed.host,
        app=parsed.app,
        truncated=truncated,
        format=parsed.format,
    )


def _parse_text(text: str) -> ParsedLine:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        js = _parse_json(stripped)
        if js is not None:
            return js
    if stripped.startswith("<"):
        m5 = _SYSLOG_5424.match(stripped)
        if m5:
            return _from_5424(stripped, m5)
    m3 = _SYSLOG_3164.match(stripped)
    if m3:
        return _from_3164(stripped, m3)
    if "level=" in stripped or "lvl=" in stripped or "severity=" in stripped:
        logfmt = _parse_logfmt(text)
        if logfmt is not None:
            return logfmt
    split = split_header(text)
    return ParsedLine(
        text=text, message=text[split.message_start :], level=split.level, app=split.tag, format="text"
    )


def _parse_logfmt(text: str) -> ParsedLine | None:
    """A logfmt line with a level key; its ``msg`` is the message when it has one."""
    level = _LOGFMT_LEVEL.search(text)
    if level is None:
        return None
    msg = _LOGFMT_MSG.search(text)
    message = text if msg is None else (msg.group(1) if msg.group(1) is not None else msg.group(2))
    return ParsedLine(text=text, message=message, level=normalize_level(level.group(1)), format="logfmt")


def _pri_severity(pri: str | None) -> str | None:
    if pri is None or int(pri) > 191:
        return None
    return pri_level(int(pri))


def _from_5424(text: str, m: re.Match[str]) -> ParsedLine:
    nil = {"-"}
    return ParsedLine(
        text=text,
        message=(m.group("msg") or "").removeprefix("\ufeff"),
        ts=_parse_ts(m.group("ts")),
        level=_pri_severity(m.group("pri")),
        host=None if m.group("host") in nil else m.group("host"),
        app=None if m.group("app") in nil else m.group("app"),
        format="rfc5424",
    )


def _from_3164(text: str, m: re.Match[str]) -> ParsedLine:
    message = m.group("msg")
    level = _pri_severity(m.group("pri"))
    if level is None:  # "app: <level> message" is common
        split = split_header(message)
        if split.level is not None and split.message_start:
            level, message = split.level, message[split.message_start :]
    return ParsedLine(
        text=text, message=message, level=level, host=m.group("host"), app=m.group("app"), format="rfc3164"
    )


# JSON keys, most usual first; the upper-case ones are journald's export (``journalctl -o json``)
_JSON_MESSAGE_KEYS = ("msg", "message", "line", "log", "text", "MESSAGE")
_JSON_LEVEL_KEYS = ("level", "lvl", "severity", "priority", "PRIORITY")
_JSON_APP_KEYS = ("app", "service", "logger", "tag", "unit", "SYSLOG_IDENTIFIER", "_SYSTEMD_UNIT", "_COMM")


def _parse_json(text: str) -> ParsedLine | None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    message = next(
        (doc[k] for k in _JSON_MESSAGE_KEYS if isinstance(doc.get(k), str)), None
    )
    if message is None:
        return None
    level = next(
        (normalize_level(doc[k]) for k in _JSON_LEVEL_KEYS if k in doc), None
    )
    app = next(
        (str(doc[k]) for k in _JSON_APP_KEYS if isinstance(doc.get(k), str)),
        None,
    )
    ts = next((_parse_ts(doc[k]) for k in ("ts", "time", "timestamp", "@timestamp") if k in doc), None)
    realtime = doc.get("__REALTIME_TIMESTAMP")  # journald: microseconds, as a string
    if ts is None and isinstance(realtime, str) and realtime.isascii() and realtime.isdigit():
        ts = int(realtime) / 1e6
    host = next((doc[k] for k in ("host", "hostname", "_HOSTNAME") if isinstance(doc.get(k), str)), None)
    return ParsedLine(
        text=text,
        message=_scrub(message),
        ts=ts,
        level=level,
        host=None if host is None else _scrub(host),
        app=None if app is None else _scrub(app),
        format="json",
    )


def _scrub(value: str) -> str:
    """A JSON string may spell lone surrogates (``"\\ud868"``), which are not text: U+FFFD."""
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


def _parse_ts(value: object) -> float | None:
    """Epoch seconds from a number (s or ms) or an ISO 8601 string; None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        v = float(value)
        return v / 1000.0 if v > 1e11 else v
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()
