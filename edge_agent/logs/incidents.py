"""Incidents: an alert is one failure, not one line.

The line that reports a failure opens an incident. The lines of the same source that follow it
closely (within ``gap_s`` seconds of the incident's last line, by the lines' own timestamps, else
the time written at their start (``line_clock``), else their arrival, and within ``gap_lines`` of
the source's lines) and are anomalous themselves join it instead of alerting again: the register
or state dump and stack trace after a crash report, a burst of the same fault (a dump-shaped line
or a line of the opening template joins even when it is not anomalous itself). A joined line
whose own words name no trouble (a dump line that only states the crash's level) is context, not
an anomaly of its own. An incident closes when a line of its source arrives beyond the gap, when
``tick`` finds it quiet for ``gap_s`` or open for ``max_s`` seconds, or on flush. Its alert leaves
with the batch of lines that opened it and says how many lines of that batch joined
(``LogService.ingest``).

A request that fails because of its own input (a missing file, no permission, an invalid format,
for a user's job or a client's request) is the requesting party's problem: a ``warning``, not an
anomaly, until the same template has failed that way for ``parties`` different parties, which
points at the system (``input_fault``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Incident", "Incidents", "input_fault", "is_dump", "line_clock", "party_of"]

_MAX_PARTY_KEYS = 20_000

# what the request itself got wrong: the path it named, its rights, its format
_INPUT_CAUSE = re.compile(
    r"no such file or directory|(?:file|directory|path) (?:not found|does not exist)|not a directory"
    r"|permission denied|access denied|operation not permitted|not authori[sz]ed"
    r"|invalid (?:argument|format|input|request|parameter|syntax|value|file ?name|path|option)"
    r"|malformed|bad (?:request|format|argument|input)|unsupported (?:format|file type|media type)"
    r"|unknown (?:command|option|parameter)|(?:syntax|parse) error",
    re.IGNORECASE,
)
# a requesting party named in the line: a user's job, a client's request, a session
_PARTY = re.compile(r"\b(?:user|client|job|request|session|task|login|uid|rhost|remote|from)\b", re.I)
# the lines of a dump or stack trace: indented continuation lines, frames, register and hex dumps
_DUMP = re.compile(
    r"^(?:\s+\S|at [\w$.<>]+\(|Caused by: |\.\.\. \d+ more|Traceback |File \"|Call Trace:|Stack:|Code: "
    r"|Modules linked in:|Hardware name:|CPU: \d+ PID: |[A-Z][A-Z0-9]{1,3}: [0-9a-f]{4}|<(?:/?IRQ|/?TASK)>"
    r"|\? [\w.]+\+0x|(?:[a-z]?[0-9a-fA-F]{2,4}[:=]\s?(?:0x)?[0-9a-fA-F]{4,16}\s*){2,})"
)


def input_fault(message: str) -> bool:
    """True when ``message`` reports a request failing because of its own input (see module doc)."""
    return _INPUT_CAUSE.search(message) is not None and _PARTY.search(message) is not None


# the line's own clock, for gaps between its lines only (no year, no zone: not a timestamp):
# ISO-like "2015-10-18 18:01:47,978", "17/06/09 20:10:40", syslog "Jul  7 08:06:12" (also inside
# "[Sun Dec 04 04:47:44 2005]"), logcat "03-17 16:13:38.811", "081109 203615", dmesg "[ 5.123]",
# epoch seconds "1796190217:"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NUMBER = {m: i for i, m in enumerate(_MONTHS, 1)}
_CLOCKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(\d{2,4})[-/](\d{2})[-/](\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?"), "ymd"),
    (re.compile(r"\b([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"), "syslog"),
    (re.compile(r"^(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"), "md"),
    (re.compile(r"^(\d{2})(\d{2})(\d{2}) (\d{2})(\d{2})(\d{2})\b"), "ymd"),
    (re.compile(r"^(?:<\d>)?\[\s*(\d+\.\d+)\]"), "seconds"),
    (re.compile(r"^(1\d{9})(?:\.\d+)?\b"), "seconds"),
)
_DAY = 86400.0


def _fraction(text: str | None) -> float:
    return float(f"0.{text}") if text else 0.0


def line_clock(text: str) -> float | None:
    """Seconds by the clock written at the start of ``text`` (see ``_CLOCKS``), comparable only
    with other lines of the same source; None when the line shows none."""
    head = text[:48]
    for pattern, kind in _CLOCKS:
        m = pattern.search(head)
        if m is None:
            continue
        g = m.groups()
        if kind == "seconds":
            return float(g[0])
        if kind == "syslog":
            month = _MONTH_NUMBER.get(g[0].lower())
            if month is None:
                continue
            day, rest = (month * 31 + int(g[1])) * _DAY, g[2:]
        elif kind == "md":
            day, rest = (int(g[0]) * 31 + int(g[1])) * _DAY, g[2:]
        else:
            day = ((int(g[0]) % 100 * 12 + int(g[1])) * 31 + int(g[2])) * _DAY
            rest = g[3:]
        return (
            day
            + int(rest[0]) * 3600
            + int(rest[1]) * 60
            + int(rest[2])
            + _fraction(rest[3] if len(rest) > 3 else None)
        )
    return None


def is_dump(message: str) -> bool:
    """True for a line of a dump or stack trace (a frame, registers, hex words, indentation)."""
    return _DUMP.match(message) is not None


def party_of(values: list[tuple[str, str]], params: tuple[str, ...]) -> tuple[str, ...]:
    """Who asked: the line's users, IPs and hosts when it names any, else its parameter values."""
    named = tuple(sorted(v for kind, v in values if kind in ("user", "ip", "host")))
    return named or params


@dataclass(slots=True)
class Incident:
    """One failure on one source: its opening line and how many lines joined it."""

    number: int  # per source, from 1
    source: str
    template_id: int
    last_line: int  # the source's line count at its last line
    last_time: float | None  # line timestamp or arrival of its last line; None: unknown
    opened_at: float | None  # arrival of the opening line
    last_arrival: float | None
    joined: int = 0


class Incidents:
    """Open incidents per source and the parties an input fault has come from (module doc)."""

    def __init__(self, gap_s: float, gap_lines: int, max_s: float, parties: int) -> None:
        self._gap_s = gap_s
        self._gap_lines = gap_lines
        self._max_s = max_s
        self._parties = parties
        self._open: dict[str, Incident] = {}
        self._numbers: dict[str, int] = {}
        self._seen_parties: dict[tuple[str, int], set[tuple[str, ...]]] = {}

    def open_incident(self, source: str) -> Incident | None:
        return self._open.get(source)

    def within(self, incident: Incident, line: int, when: float | None) -> bool:
        """Whether a line of the incident's source at ``line``/``when`` is close enough to join."""
        if line - incident.last_line > self._gap_lines:
            return False
        return when is None or incident.last_time is None or abs(when - incident.last_time) <= self._gap_s

    def open(
        self, source: str, template_id: int, line: int, when: float | None, arrival: float | None
    ) -> Incident:
        """A new incident of ``source`` opened by the line at ``line`` (the caller closes the
        previous one first)."""
        number = self._numbers.get(source, 0) + 1
        self._numbers[source] = number
        incident = Incident(number, source, template_id, line, when, arrival, arrival)
        self._open[source] = incident
        return incident

    @staticmethod
    def join(incident: Incident, line: int, when: float | None, arrival: float | None) -> None:
        incident.joined += 1
        incident.last_line = line
        incident.last_time = when if when is not None else incident.last_time
        incident.last_arrival = arrival if arrival is not None else incident.last_arrival

    def close(self, source: str) -> Incident | None:
        return self._open.pop(source, None)

    def due(self, now: float) -> list[Incident]:
        """Close and return the incidents quiet for ``gap_s`` or open for ``max_s`` at ``now``."""
        out = []
        for source, incident in list(self._open.items()):
            quiet = incident.last_arrival is not None and now - incident.last_arrival >= self._gap_s
            old = incident.opened_at is not None and now - incident.opened_at >= self._max_s
            if quiet or old:
                out.append(self._open.pop(source))
        return out

    def close_all(self) -> list[Incident]:
        out = list(self._open.values())
        self._open.clear()
        return out

    def many_parties(self, source: str, template_id: int, party: tuple[str, ...]) -> tuple[bool, bool]:
        """Record that ``party`` met this input fault: (whether this party is the one that made
        ``parties`` different ones, whether that many have met it)."""
        if len(self._seen_parties) >= _MAX_PARTY_KEYS:
            self._seen_parties.clear()
        seen = self._seen_parties.setdefault((source, template_id), set())
        if len(seen) >= self._parties:
            return False, True
        seen.add(party)
        return len(seen) == self._parties, len(seen) >= self._parties
