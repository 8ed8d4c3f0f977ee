"""Short text for people: headlines are cut between words, never inside a word or a quoted phrase."""

from __future__ import annotations

__all__ = ["ELLIPSIS", "shorten"]

ELLIPSIS = "…"
_QUOTES = "'\"`"


def _opens(word: str) -> str | None:
    """The quote a word opens and does not close itself (``'Readline``), or None."""
    if len(word) > 1 and word[0] in _QUOTES and not word.rstrip(".,;:!?)]").endswith(word[0]):
        return word[0]
    if word in _QUOTES:
        return word
    return None


def _closes(word: str, quote: str) -> bool:
    return word.rstrip(".,;:!?)]").endswith(quote)


def shorten(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` characters, else its longest run of whole words that
    ends outside any quoted phrase, followed by `` …``; "" when not even one word fits."""
    if len(text) <= limit:
        return text
    words = text.split(" ")
    best = ""
    kept: list[str] = []
    quote: str | None = None
    for word in words:
        kept.append(word)
        if quote is None:
            quote = _opens(word)
        elif _closes(word, quote):
            quote = None
        candidate = " ".join(kept).rstrip()
        if len(candidate) + len(ELLIPSIS) + 1 > limit:
            break
        if quote is None and candidate:
            best = candidate
    return f"{best.rstrip(',;:')} {ELLIPSIS}" if best else ""
