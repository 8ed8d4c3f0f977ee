"""Speech-recognizer style noise over tagged pieces (spans stay aligned: noise edits pieces).

Lower-casing, dropped punctuation and apostrophes, dropped articles, stutters, hesitations
("uh", "um") between words, homophones and small typos in untagged words, the way voice
satellites and sloppy typing deliver text.
"""

from __future__ import annotations

import random

from firmware_tools.data.intent_grammar import Piece

__all__ = ["add_noise"]

_FUZZY_SLOTS = {"name", "area", "floor", "list_name"}  # resolved fuzzily, so typos there are fair
_PUNCT = {",", ".", "?", "!", ":", ";"}
_DROPPABLE = {"the", "a", "an", "my", "to", "of", "please", "is", "are", "in", "on"}
_HOMOPHONES: dict[str, tuple[str, ...]] = {
    "lights": ("lites", "light's", "likes"),
    "light": ("lite", "like"),
    "two": ("to", "too"),
    "four": ("for",),
    "to": ("two", "too"),
    "for": ("four",),
    "right": ("write",),
    "off": ("of",),
    "eight": ("ate",),
    "weather": ("whether",),
    "hour": ("our",),
    "minutes": ("minute's", "mins"),
    "minute": ("min",),
    "seconds": ("secs",),
    "timer": ("time or",),
    "fan": ("van",),
    "blinds": ("blind's",),
    "there": ("their",),
    "know": ("no",),
    "through": ("thru",),
    "please": ("pls", "plz"),
    "you": ("u",),
    "tv": ("t.v.", "telly"),
    "volume": ("vol",),
    "temperature": ("temp",),
    "what's": ("whats", "what is"),
    "it's": ("its",),
    "okay": ("ok",),
    "set": ("sat",),
    "mute": ("mutes",),
    "pause": ("paws",),
    "dim": ("dimm",),
}


_HESITATIONS = ("uh", "um", "er", "uhm")


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 5 or not word.isalpha():
        return word
    i = rng.randrange(1, len(word) - 1)
    op = rng.random()
    if op < 0.4:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op < 0.7:
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]


def add_noise(pieces: list[Piece], rng: random.Random, lowercase: bool) -> list[Piece]:
    level = rng.random()  # most sentences clean-ish, some very noisy
    strength = 0.0 if level < 0.45 else (0.5 if level < 0.85 else 1.0)
    drop_punct = lowercase or rng.random() < 0.4
    out: list[Piece] = []
    for text, slot in pieces:
        if lowercase:
            text = text.lower()
        if slot is None and strength and rng.random() < 0.012 * strength:  # a hesitation between words
            out.append((rng.choice(_HESITATIONS), None))
        if slot is None:
            if text in _PUNCT and drop_punct:
                continue
            low = text.lower()
            if strength and low in _DROPPABLE and rng.random() < 0.12 * strength:
                continue
            if strength and low in _HOMOPHONES and rng.random() < 0.08 * strength:
                text = rng.choice(_HOMOPHONES[low])
            elif strength and rng.random() < 0.03 * strength:
                text = _typo(text, rng)
            if drop_punct and "'" in text and rng.random() < 0.3:
                text = text.replace("'", "")
            if strength and rng.random() < 0.015 * strength:
                out.append((text, None))
        elif slot in _FUZZY_SLOTS and strength and rng.random() < 0.04 * strength:
            words = text.split(" ")
            j = rng.randrange(len(words))
            alt = _HOMOPHONES.get(words[j].lower())
            words[j] = rng.choice(alt) if alt else _typo(words[j], rng)
            text = " ".join(words)
        if text.strip():
            out.append((text, slot))
    if out and not drop_punct and out[-1][0] not in _PUNCT and rng.random() < 0.25:
        out.append((rng.choice((".", "!")) if rng.random() < 0.3 else ".", None))
    return out
