"""The transfer set's augmented rows: utterances changed where no slot lies.

The student learns from the teacher's outputs on generated, real and augmented text. An augmented
row drops a word, swaps two neighbouring words or adds a filler ("um", "could you", "please"),
never inside a slot span, so the spans move with the text and stay valid. Its labels are the
teacher's (``build.py`` replaces the hard labels of these rows with the teacher's argmax), since
dropping "off" from "turn off the fan" changes what the utterance means.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["augment"]

_WORD = re.compile(r"\S+")
_LEADING = ("um ", "uh ", "please ", "could you ", "can you ", "hey ", "okay ", "so ", "i want you to ")
_TRAILING = (" please", " now", " thanks", " for me", " right now")


def _words(text: str, spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, bool]]:
    """(start, end, free) per whitespace word; free = outside every span."""
    out = []
    for m in _WORD.finditer(text):
        free = all(m.end() <= s or m.start() >= e for s, e, _ in spans)
        out.append((m.start(), m.end(), free))
    return out


def _rebuild(
    text: str, spans: Sequence[tuple[int, int, str]], parts: list[tuple[int, int]], prefix: str, suffix: str
) -> tuple[str, list[tuple[int, int, str]]]:
    """Join the words ``parts`` (source char ranges) with spaces; move spans along."""
    pieces, shift, pos = [prefix], {}, len(prefix)
    for i, (s, e) in enumerate(parts):
        if i:
            pieces.append(" ")
            pos += 1
        shift[s] = pos - s
        pieces.append(text[s:e])
        pos += e - s
    pieces.append(suffix)
    new_spans = []
    for s, e, slot in spans:
        starts = [ws for ws, we in parts if ws <= s < we]
        ends = [ws for ws, we in parts if ws < e <= we]
        if not starts or not ends:
            return text, list(spans)  # a span the edit would cut: leave the row as it was
        new_spans.append((s + shift[starts[0]], e + shift[ends[0]], slot))
    return "".join(pieces), new_spans


def _edit(ex: Any, rng: random.Random) -> Any:
    words = _words(ex.text, ex.spans)
    parts = [(s, e) for s, e, _ in words]
    free = [i for i, (_, _, f) in enumerate(words) if f]
    r = rng.random()
    if r < 0.35 and len(free) >= 1 and len(words) >= 3:
        del parts[rng.choice(free)]
    elif r < 0.55:
        pairs = [i for i in free if i + 1 < len(words) and words[i + 1][2]]
        if pairs:
            i = rng.choice(pairs)
            parts[i], parts[i + 1] = parts[i + 1], parts[i]
    prefix = rng.choice(_LEADING) if rng.random() < 0.4 else ""
    suffix = rng.choice(_TRAILING) if rng.random() < 0.2 else ""
    text, spans = _rebuild(ex.text, ex.spans, parts, prefix, suffix)
    return dataclasses.replace(ex, text=text, spans=spans)


def augment(examples: Sequence[Any], n: int, seed: int) -> list[Any]:
    """``n`` edited copies of randomly chosen examples (IntentExample-like dataclasses)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ex = examples[rng.randrange(len(examples))]
        new = _edit(ex, rng)
        if new.text != ex.text:
            out.append(new)
    return out
