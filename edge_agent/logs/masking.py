"""Masking of variable parts of a log message before template mining.

Specific shapes (IPs, MACs, UUIDs, hex, paths, URLs, durations, sizes) are replaced by
named placeholders so templates stay readable; then any token still carrying a digit is a
parameter too (ids, counters, versions), which keeps the miner's prefix tree from splitting
on them."""

from __future__ import annotations

import re

__all__ = ["PARAM", "mask", "tokenize"]

PARAM = "<*>"

_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+", "<URL>"),
        (
            r"(?i:\b(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
            r"\s+\d{1,2},?\s+(?:\d{4}\s+)?\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:\s+\d{4})?\b)",
            "<TS>",
        ),
        (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?", "<TS>"),
        (r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "<UUID>"),
        (r"\b(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}\b", "<MAC>"),
        (r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.])", "<IP>"),
        (r"\b0[xX][0-9a-fA-F]+\b", "<HEX>"),
        (r"(?<![\w/])(?:/[\w.@%+~-]+){2,}/?", "<PATH>"),
        (
            r"[<>]?\b\d+(?:\.\d+)?\s?(?:ms|us|µs|ns|s|sec|secs|seconds|min|mins|minutes|h|hrs|hours)\b",
            "<DUR>",
        ),
        (r"\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B|bytes|B)(?:\s\(\d+(?:\.\d+)?\s?[KMGT]i?B\))?(?!\w)", "<SIZE>"),
        (r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?![\w.])", "<NUM>"),
    )
)
_KEYED = re.compile(r"^([A-Za-z_][A-Za-z_.-]*[:#])(?![:=#])")
_PAIR = re.compile(r"^([A-Za-z_][\w.-]*=)[^=]")
_PLACEHOLDER = re.compile(r"<[A-Z]+>")
_SPLIT = re.compile(r"\s+")


def tokenize(message: str) -> list[str]:
    """Whitespace-separated tokens."""
    return [t for t in _SPLIT.split(message) if t]


def mask(message: str) -> list[str]:
    """Tokens of ``message`` with variable parts replaced by placeholders."""
    for pattern, repl in _RULES:
        message = pattern.sub(repl, message)
    return [_param(tok) for tok in tokenize(message)]


def _param(tok: str) -> str:
    pair = _PAIR.match(tok)
    if pair:
        return pair.group(1) + PARAM  # the value of key=value is a parameter
    variable = ("<" in tok and _PLACEHOLDER.search(tok) is not None) or any(c.isdigit() for c in tok)
    if not variable:
        return tok
    keyed = _KEYED.match(tok)
    return keyed.group(1) + PARAM if keyed else PARAM
