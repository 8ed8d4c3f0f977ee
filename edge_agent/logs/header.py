"""Generic recognition of log-line headers (timestamps, hosts, pids, levels, threads, loggers).

No format is configured: a header is the run of leading fields that look like header fields
(dates and times of many shapes, numbers, ids with digits, separators, bracket groups, host
names, level words), optionally closed by a level and then a logger/tag (``name[pid]:``,
``a.b.C:``, ``[thread]``, ``program -``). What follows is the message. The split is a pure
function of the line, so the same header shape always yields the same message start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice

__all__ = ["LETTER_LEVELS", "LEVEL_WORDS", "HeaderSplit", "pri_level", "split_header"]

# level words (case-insensitive) -> our severity names
LEVEL_WORDS: dict[str, str] = {
    "trace": "debug",
    "debug": "debug",
    "dbg": "debug",
    "verbose": "debug",
    "fine": "debug",
    "finer": "debug",
    "finest": "debug",
    "info": "info",
    "information": "info",
    "informational": "info",
    "notice": "notice",
    "warn": "warning",
    "warning": "warning",
    "err": "error",
    "error": "error",
    "severe": "error",
    "crit": "critical",
    "critical": "critical",
    "fatal": "critical",
    "alert": "critical",
    "emerg": "critical",
    "emergency": "critical",
    "panic": "critical",
    "failure": "error",
    # short forms (NATS, Go and Rust loggers), MySQL/MariaDB's "[Note]"
    "trc": "debug",
    "dbug": "debug",
    "inf": "info",
    "note": "notice",
    "wrn": "warning",
    "eror": "error",
    "erro": "error",
    "ftl": "critical",
}
# PostgreSQL's levels besides the common words: upper case with a colon only ("LOG:  ...")
_PG_LEVELS: dict[str, str] = {"LOG:": "info", "DETAIL:": "info", "HINT:": "info", "STATEMENT:": "info"}
# redis' role-and-level markers after its timestamp: "*" notice, "#" warning ("-" and "." are
# verbose/debug but read like separators, so they stay unread)
_MARKERS: dict[str, str] = {"*": "notice", "#": "warning"}
_KERNEL_PRI = re.compile(r"^<([0-7])>")
# syslog priorities 0-7 (emerg, alert, crit, err, warning, notice, info, debug) -> our severities
_PRI_LEVELS = ("critical", "critical", "critical", "error", "warning", "notice", "info", "debug")
_LOGCAT = re.compile(r"^([VDIWEF])/[\w.$-]")
# single letters (Android/glog style) are levels only inside a header with numbers before them
LETTER_LEVELS: dict[str, str] = {
    "V": "debug",
    "D": "debug",
    "I": "info",
    "N": "notice",
    "W": "warning",
    "E": "error",
    "F": "critical",
    "A": "critical",
    "C": "critical",
}

_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_DAYS = "mon|tue|wed|thu|fri|sat|sun"
_DATEISH = re.compile(
    r"^(?:"
    r"\d{1,4}[-/.]\d{1,2}(?:[-/.]\d{1,4})?(?:[-_T ]?\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:[.,:]\d+)?)?"  # dates
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:[.,:]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"  # times
    r"|\d{8}(?:[-T_]\d{1,2}:\d{1,2}:\d{1,2}(?:[.,:]\d+)?)?"  # compact dates
    r"|\d{4}-\d{2}-\d{2}T\S+"  # ISO 8601
    r"|1\d{9}(?:\.\d+)?"  # epoch seconds (2001..2286)
    rf"|(?:{_MONTHS})[a-z]*|(?:{_DAYS})[a-z]*"  # names
    r")[,:]?$",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"^(?:-+|\||:|,|;|>+|=+|\*+|#+|\.)$")
# logger / tag: name[pid]: name(sub)[pid]: a.b.C: path/prog[pid]:
_TAG = re.compile(r"^[\w.$@/()<>~+#-]{1,120}(?:\[[^\]\s]{0,40}\])?:$")
_TAG_NOCOLON = re.compile(r"^[\w.$@/()~+#-]{1,120}\[[^\]\s]{0,40}\]$")
_DOTTED = re.compile(r"^[A-Za-z_][\w$-]*(?:\.[A-Za-z_$][\w$-]*){1,}$")
_HOSTISH = re.compile(r"^[\w.-]*\d[\w.:@/-]*$|^[\w-]+(?:\.[\w-]+)+$")
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]{1,11}$")
_DIGIT = re.compile(r"\d")
_MAX_HEADER_TOKENS = 14
_MAX_HEADER_CHARS = 1000
# a bracket group (one nesting level, up to 200 characters) with an optional ":"/"," stuck to it,
# a pipe, or a run of other non-blank characters
_TOKEN = re.compile(
    r"\[(?:[^\[\]]|\[[^\[\]]*\]){0,200}\][:,]?"
    r"|\((?:[^()]|\([^()]*\)){0,200}\)[:,]?"
    r"|<[^<>]{0,200}>[:,]?"
    r"|\{[^{}]{0,200}\}[:,]?"
    r"|\|"
    r"|[^\s|]+"
)


def pri_level(pri: int) -> str:
    """Our severity of a syslog priority or PRI value (its low three bits)."""
    return _PRI_LEVELS[pri % 8]


@dataclass(frozen=True, slots=True)
class HeaderSplit:
    """Where the message starts in the line, and what the header said."""

    message_start: int
    level: str | None
    tag: str | None
    has_time: bool


def _tokens(line: str, limit: int) -> list[re.Match[str]]:
    """The first ``limit`` header tokens: whitespace-separated, bracket groups kept whole,
    ``a|b|c`` pipe fields split."""
    return list(islice(_TOKEN.finditer(line, 0, min(len(line), _MAX_HEADER_CHARS)), limit))


def _level_of(tok: str, allow_letter: bool) -> str | None:
    if tok in _PG_LEVELS:
        return _PG_LEVELS[tok]
    word = tok.strip("[]<>():,")
    sev = LEVEL_WORDS.get(word.lower())
    if sev is not None and (word.isupper() or word.islower() or word.istitle()):
        return sev
    if allow_letter and len(word) == 1 and tok in (word, word + ":", word + "/"):
        return LETTER_LEVELS.get(word)
    return None


def _marked_level(tok: str) -> bool:
    """A level word opening a line counts when it is marked as one (``ERROR``, ``[warn]``,
    ``info:``), not when it is the first word of a sentence (``Failure to open ...``)."""
    return tok.isupper() or tok[0] in "[<(" or tok.endswith(":")


_MONOTONIC = re.compile(r"^\[\s*\d+\.\d+\][:,]?$")  # dmesg's "[    1.234567]"


def _is_time(tok: str) -> bool:
    if tok[0] == "[" and _MONOTONIC.match(tok):
        return True
    t = tok.strip("[]()<>,")
    if _DATEISH.match(t):
        return True
    return " " in t and any(_DATEISH.match(part) for part in t.split())


def _headerish(tok: str, is_time: bool | None = None) -> bool:
    """A field that can stand in a header before the level/tag (``is_time``: already known)."""
    if tok[0] in "[(<{" or _SEPARATOR.match(tok) or (_is_time(tok) if is_time is None else is_time):
        return True
    bare = tok.rstrip(",:")
    if _DIGIT.search(bare) is not None or _HOSTISH.match(bare):
        return True
    return bool(_UPPER.match(bare))


def split_header(line: str) -> HeaderSplit:
    """Find where the message of ``line`` starts (0 when no header is recognized)."""
    pri = _KERNEL_PRI.match(line) if line[:1] == "<" else None
    if pri is not None:  # the kernel's "<3>" priority prefix
        rest = split_header(line[pri.end() :])
        level = rest.level or pri_level(int(pri.group(1)))
        return HeaderSplit(pri.end() + rest.message_start, level, rest.tag, rest.has_time)
    logcat = _LOGCAT.match(line) if line[1:2] == "/" else None
    if logcat is not None and (colon := line.find(": ")) > 0:  # "I/ActivityManager( 123): ..."
        return HeaderSplit(colon + 2, LETTER_LEVELS[logcat.group(1)], line[2:colon], False)
    split = _split(line)
    if split.message_start >= len(line.rstrip()):  # all of it read like a header
        # "time|tag|pid|message": the message is the last pipe field; else the whole line
        return HeaderSplit(line.rfind("|") + 1, split.level, split.tag, split.has_time)
    return split


def _split(line: str) -> HeaderSplit:
    toks = _tokens(line, _MAX_HEADER_TOKENS)
    texts = [m.group() for m in toks]
    if len(texts) < 2:
        return HeaderSplit(0, None, None, False)
    has_time = False
    numeric_seen = False
    level: str | None = None
    tag: str | None = None
    k = 0
    prev_time = False
    n = len(texts)
    # the kernel's uptime stamp opens a message, not a header: after it come a level, a
    # "subsystem:" tag or syslog's "host program:", never a bare field ("RDSEED32 is broken")
    kernel_stamp = _MONOTONIC.match(texts[0]) is not None
    while k < n:
        t = texts[k]
        level = _level_of(t, allow_letter=numeric_seen and k >= 2)
        if level is not None and (k or _marked_level(t)):
            k += 1
            break
        level = None
        if prev_time and t in _MARKERS:
            level = _MARKERS[t]
            k += 1
            break
        is_time = _is_time(t)
        if is_time:
            has_time = numeric_seen = True
        elif len(t) > 1 and _TAG.match(t) and (has_time or numeric_seen):
            tag = t.rstrip(":")
            k += 1
            break
        elif prev_time and k + 1 < n and _TAG.match(texts[k + 1]) and texts[k + 1][0] != "(":
            tag = texts[k + 1].rstrip(":")  # "host prog[pid]:" of syslog (a program is no "(sda1):")
            k += 2
            break
        elif kernel_stamp and k == 1:
            break
        elif _headerish(t, is_time) or (k + 1 < n and texts[k + 1] == "|" and " " not in t):
            numeric_seen = numeric_seen or _DIGIT.search(t) is not None
        else:
            break
        prev_time = is_time
        k += 1
    if level is None and tag is None and not has_time:
        return HeaderSplit(0, None, None, False)
    if tag is not None:
        if k < n:
            level = _level_of(texts[k], allow_letter=False)
            k += level is not None
    else:
        k, tag = _after_level(texts, k, level is not None)
    return HeaderSplit(_start(line, toks, k), level, tag, has_time)


def _start(line: str, toks: list[re.Match[str]], k: int) -> int:
    """Where token ``k`` starts; past the header when every token read was header."""
    if k < len(toks):
        return toks[k].start()
    return toks[-1].end() if len(toks) == _MAX_HEADER_TOKENS else len(line)


def _after_level(toks: list[str], k: int, had_level: bool) -> tuple[int, str | None]:
    """After the level (or timestamp run): bracket groups, separators, and one logger/tag."""
    tag: str | None = None
    dotted_used = False
    while k < len(toks):
        t = toks[k]
        if t[0] in "[({<" and len(toks) > k + 1:
            k += 1
            continue
        if _SEPARATOR.match(t):
            k += 1
            continue
        if tag is None and _TAG.match(t) and len(t) > 1:
            tag = t.rstrip(":")
            k += 1
            continue
        if tag is None and _TAG_NOCOLON.match(t):
            tag = t
            k += 1
            continue
        if tag is None and not dotted_used and _DOTTED.match(t) and had_level:
            dotted_used = True
            tag = t
            k += 1
            continue
        if tag is None and k + 1 < len(toks) and toks[k + 1] == "-" and not _SEPARATOR.match(t):
            tag = t  # "program - message"
            k += 2
            continue
        break
    return k, tag
