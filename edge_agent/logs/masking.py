"""Masking of variable parts of a log message before template mining.

Every whitespace token that carries a digit is a parameter (numbers, ids, IPs, hex, versions,
UUIDs...), as is the value of a ``key=value`` token; ``key:123`` keeps its ``key:`` and
``LOGIN(uid=0)`` its words. Names of who carry no digit but are parameters from the first line on,
so the id published for a line is already its event's: the word after ``user`` and between
``for`` and ``from`` (``token refused for alice from``), and reverse-DNS names of three or more
parts (``org.example.sync.worker:``). Before that,
shapes that span several tokens or carry no digit are folded into one placeholder: URLs,
written-out timestamps, MACs, file paths, durations (``<5 sec``, ``20 ms``) and sizes
(``4096 bytes (4.00 KB)``). Each rule runs only when its trigger character is in the message,
which keeps the common case cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["PARAM", "mask", "tokenize"]

PARAM = "<*>"


def _has(text: str) -> Callable[[str], bool]:
    return lambda message: text in message


def _has_digit(message: str) -> bool:
    return _DIGIT.search(message) is not None


def _has_mac(message: str) -> bool:
    return message.count(":") >= 5 or message.count("-") >= 5


_DIGIT = re.compile(r"\d")
_MONTH_TS = (
    r"\b(?:(?:[MTWFS][a-z]{2}|[mtwfs][a-z]{2}),?\s+)?[JFMASOND][a-z]{2}[a-z]*"
    r"\s+\d{1,2},?\s+(?:\d{4}\s+)?\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:\s+\d{4})?\b"
)
# durations and sizes in one pass: "<5 sec", "20 ms", "4096 bytes (4.00 KB)"
_UNIT = re.compile(
    r"[<>]?\b\d+(?:\.\d+)?\s?(?:(?P<dur>ms|us|µs|ns|s|sec|secs|seconds|min|mins|minutes|h|hrs|hours)\b"
    r"|(?:[KMGT]i?B|bytes|B)(?:\s\(\d+(?:\.\d+)?\s?[KMGT]i?B\))?(?!\w))"
)
_ISO_TS = r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"


def _unit(m: re.Match[str]) -> str:
    return "<DUR>" if m.group("dur") else "<SIZE>"


# (runs when, pattern, placeholder), in order
_RULES: tuple[tuple[Callable[[str], bool], re.Pattern[str], str], ...] = (
    (_has("://"), re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+"), "<URL>"),
    (_has(":"), re.compile(_MONTH_TS), "<TS>"),
    (_has(":"), re.compile(_ISO_TS), "<TS>"),
    (_has_mac, re.compile(r"\b(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}\b"), "<MAC>"),
    (_has("/"), re.compile(r"(?<![\w/])(?:/[\w.@%+~-]+){2,}/?"), "<PATH>"),
    (_has_digit, _UNIT, "<DUR>"),  # (the replacement is chosen by _unit)
)
# token rules, applied to the whole message in this order (C speed, no per-token Python):
# the value of key=value; key:123 keeps "key:"; any other token with a digit or placeholder
_PAIR = re.compile(r"(?<!\S)([A-Za-z_][\w.-]*=)[^=\s]\S*")
_KEYED = re.compile(r"(?<!\S)([A-Za-z_][A-Za-z_.-]*[:#])(?![:=#\s])(?=\S*?(?:\d|<[A-Z]+>))\S*")
# who: the name after "user" ("login accepted for user dana", "Unknown user kiosk from") and
# between "for" and "from" ("token refused for alice from ..."); names carry no digit
_WHO = re.compile(
    r"\b(user )(?!<)[A-Za-z_][\w.@-]{0,31}(?=\s|$)"
    r"|\b(for )(?!user\b|invalid\b|<)[A-Za-z_][\w.-]{0,31}(?= from\b)"
)


# reverse-DNS / package names of three or more parts ("org.example.sync.worker:")
_DOTTED_NAME = re.compile(r"(?<!\S)[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*){2,}(?=:?(?:\s|$))")


def _who(m: re.Match[str]) -> str:
    return (m.group(1) or m.group(2)) + PARAM
# "(pid=42)", "JOB(id=7)": the number is the parameter, the words around it are not
_PAREN_PAIR = re.compile(r"(?<!\S)(\w*\(\w+=)\d+\)(?=\s|$)")
_VARIABLE = re.compile(r"(?<!\S)(?!<\*>(?:\s|$))\S*?(?:\d|<[A-Z]+>)\S*")
_KEYED_REPL = r"\1<*>"


def tokenize(message: str) -> list[str]:
    """Whitespace-separated tokens."""
    return message.split()


def mask(message: str) -> list[str]:
    """Tokens of ``message`` with variable parts replaced by placeholders."""
    for applies, pattern, repl in _RULES:
        if applies(message):
            message = pattern.sub(_unit if pattern is _UNIT else repl, message)
    if "=" in message:
        message = _PAREN_PAIR.sub(r"\1<*>)", message)
        message = _PAIR.sub(_KEYED_REPL, message)
    message = _KEYED.sub(_KEYED_REPL, message)
    if "." in message:
        message = _DOTTED_NAME.sub(PARAM, message)
    if "user " in message or "for " in message:
        message = _WHO.sub(_who, message)
    return _VARIABLE.sub(PARAM, message).split()
