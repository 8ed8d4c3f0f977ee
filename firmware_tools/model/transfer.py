"""The transfer set's augmented rows: utterances changed where no slot lies.

Two kinds, both never inside a slot span (the spans move with the text and stay valid):

- ``augment``: drops a word, swaps two neighbouring words or adds a filler ("um", "could you",
  "please"). Its labels are the teacher's (``build.py`` replaces the hard labels of these rows
  with the teacher's argmax), since dropping "off" from "turn off the fan" changes its meaning.
- ``substitute``: words the rows use swapped for words the pretrained encoder finds alike
  (``lexicon.word_neighbours``: "film" for "movie", "tunes" for "music", "chilly" for "cold"),
  so that the student meets words and phrasing the generator and the corpora lack. The meaning
  may change ("closed" for "open"), so only the teachers label these texts; they train the
  intent head and the sentence embedding, not the slots (``BuildPlan.n_substitute``).
- ``restyle``: the way people talk to a speaker, which keeps the meaning and so the gold labels:
  a wake word or the assistant's name in front, a sentence of greeting or circumstance before
  the request ("hi.", "i'm heading out in a bit."), politeness and hedges around a command, a
  first-person wish ("i'd like you to ..."), thanks at the end, punctuation dropped as speech
  recognizers do, a short function word lost. In-scope and out-of-scope rows are restyled alike,
  so that no style becomes a sign of either.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["augment", "restyle", "substitute"]

_WORD = re.compile(r"\S+")
_LETTERS = re.compile(r"[A-Za-z]+")
# share of a row's replaceable words that ``substitute`` replaces (at least one); TinyBERT's
# augmentation replaced 0.4 of the words of each sentence
SUBSTITUTE_SHARE = 0.3
# share of restyled rows with a sentence said before the request (``_PREAMBLES``); 0 in build 27
# (at 0 no random draw is spent on them), 0.15 again from build 28 on: build 27 without them lost
# as many of SGD's out-of-scope requests as build 26 with them, and fewer in-scope gains; build 29
# had them without Snips' wishes to watch and gained nothing, so 0 again: build 25's draws (docs/model.md)
PREAMBLE_SHARE = 0.0
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


# names people give their assistants or say before a command; a name is never a slot here
_CALLS = (
    "hey google", "ok google", "alexa", "hey alexa", "hey siri", "siri", "computer", "hey computer",
    "jarvis", "hey jarvis", "hey mycroft", "ok nabu", "hey nabu", "hey assistant", "assistant",
    "hey home", "okay house", "hey max", "hey luna", "ada", "hey ada", "friday", "hey rosie",
    "hey buddy", "hal", "hey robin", "marvin", "hey kit", "sam", "hey sam", "hey pi", "ok ok",
)
# words a command may start with; hedges and wishes go only in front of these
_COMMAND_VERBS = frozenset(
    [
        "turn", "switch", "set", "play", "start", "stop", "open", "close", "dim", "brighten", "add",
        "put", "make", "pause", "resume", "skip", "cancel", "tell", "show", "give", "lock",
        "unlock", "raise", "lower", "increase", "decrease", "mute", "unmute", "find", "read",
        "remind", "book", "order", "call", "check", "change", "shut", "put", "get", "let", "bring",
        "run", "begin", "end", "remove", "delete", "clear", "lift", "drop", "crank", "boost", "cut",
        "kill", "fire", "light", "warm", "cool", "heat", "switch",
    ]
)
_HEDGES = (
    "please ", "could you please ", "would you please ", "can you please ",
    "i was wondering if you could ", "if you don't mind ", "kindly ", "maybe ", "just ", "go ahead and ",
    "do me a favor and ", "could you ", "would you ", "can you ", "will you ",
)
_WISHES = (
    "i'd like you to ", "i want you to ", "i need you to ", "i'd love it if you could ", "i'd like to "
)
# a sentence said before the request that does not change what is asked: a greeting, a thank-you
# that closes what came before, the speaker's circumstances (build 26)
_PREAMBLES = (
    "hi. ", "hello. ", "hello there. ", "good morning. ", "good evening. ", "okay thanks. ",
    "thanks for that. ", "one more thing. ", "quick one. ", "sorry to bother you. ", "alright. ",
    "that's all for that. ", "i'm heading out in a bit. ", "it's been a long day. ",
    "we have friends coming over tonight. ", "i'm about to leave for work. ", "the kids are asleep. ",
    "i'm cooking dinner. ", "i'm planning my weekend. ", "just got home. ", "i'm in the kitchen. ",
    "i can't sleep. ", "i'm working from home today. ", "big day tomorrow. ",
)
_QUESTION_OPENERS = ("quick question ", "do you know ", "tell me ", "i wonder ", "um ", "so ")
_ENDINGS = (" please", " thanks", " thank you", " if you can", " for me", " when you get a chance", " cheers")
_FUNCTION_WORDS = frozenset({"the", "a", "an", "to", "my", "of", "is", "for"})
_PUNCT = frozenset("?!.,;:")
_QUESTION_WORDS = frozenset(
    [
        "what", "what's", "whats", "how", "when", "where", "who", "which", "is", "are", "do",
        "does", "can", "will", "did", "was", "were",
    ]
)


def _style_prefix(first: str, rng: random.Random) -> str:
    parts = []
    if rng.random() < 0.45:
        call = rng.choice(_CALLS)
        parts.append(call + (", " if rng.random() < 0.3 else " "))
    if PREAMBLE_SHARE > 0 and rng.random() < PREAMBLE_SHARE:
        parts.append(rng.choice(_PREAMBLES))
    r = rng.random()
    if first in _COMMAND_VERBS:
        if r < 0.35:
            parts.append(rng.choice(_HEDGES))
        elif r < 0.6:
            parts.append(rng.choice(_WISHES[:4]))  # "i'd like to turn" is not a command
    elif first in _QUESTION_WORDS and r < 0.25:
        parts.append(rng.choice(_QUESTION_OPENERS))
    return "".join(parts)


def _restyle_one(ex: Any, rng: random.Random) -> Any:
    words = _words(ex.text, ex.spans)
    if not words:
        return ex
    parts = [(s, e) for s, e, _ in words]
    droppable = [
        i for i, (s, e, free) in enumerate(words) if free and ex.text[s:e].lower() in _FUNCTION_WORDS
    ]
    if droppable and len(words) >= 4 and rng.random() < 0.2:
        del parts[rng.choice(droppable)]
    first = ex.text[words[0][0] : words[0][1]].lower()
    prefix = _style_prefix(first, rng)
    suffix = rng.choice(_ENDINGS) if rng.random() < 0.2 else ""
    text, spans = _rebuild(ex.text, ex.spans, parts, prefix, suffix)
    if rng.random() < 0.6:  # a speech recognizer's text: no punctuation (none sits inside a span)
        text, spans = _strip_punct(text, spans)
    return dataclasses.replace(ex, text=text, spans=spans)


def _strip_punct(text: str, spans: Sequence[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int, str]]]:
    """Punctuation outside spans removed, the spans moved with the text (a double space left
    behind is harmless: the tokenizer splits on whitespace)."""
    keep, new_pos = [], {}
    for i, ch in enumerate(text):
        new_pos[i] = len(keep)
        if ch in _PUNCT and not any(s <= i < e for s, e, _ in spans):
            continue
        keep.append(ch)
    new_pos[len(text)] = len(keep)
    return "".join(keep).strip(), [(new_pos[s], new_pos[e], slot) for s, e, slot in spans]


def restyle(examples: Sequence[Any], n: int, seed: int) -> list[Any]:
    """``n`` restyled copies of randomly chosen examples; each keeps its example's labels."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ex = examples[rng.randrange(len(examples))]
        new = _restyle_one(ex, rng)
        if new.text != ex.text and new.text.strip():
            out.append(new)
    return out


def substitutable_words(examples: Sequence[Any]) -> set[str]:
    """The lower-case words of the examples that ``substitute`` may replace: letters only, three
    or more, outside every slot span."""
    out: set[str] = set()
    for ex in examples:
        for m in _LETTERS.finditer(ex.text):
            if len(m.group()) >= 3 and all(m.end() <= s or m.start() >= e for s, e, _ in ex.spans):
                out.add(m.group().lower())
    return out


def _substitute_one(ex: Any, neighbours: Mapping[str, Sequence[str]], rng: random.Random) -> str:
    spots = [
        m
        for m in _LETTERS.finditer(ex.text)
        if neighbours.get(m.group().lower()) and all(m.end() <= s or m.start() >= e for s, e, _ in ex.spans)
    ]
    if not spots:
        return str(ex.text)
    chosen = [m for m in spots if rng.random() < SUBSTITUTE_SHARE] or [rng.choice(spots)]
    out, pos = [], 0
    for m in chosen:
        word = rng.choice(neighbours[m.group().lower()])
        if m.group()[0].isupper():
            word = word[0].upper() + word[1:]
        out += [ex.text[pos : m.start()], word]
        pos = m.end()
    out.append(ex.text[pos:])
    return "".join(out)


def substitute(
    examples: Sequence[Any], n: int, seed: int, neighbours: Mapping[str, Sequence[str]]
) -> list[tuple[int, str]]:
    """``n`` texts (fewer where a draw changes nothing), each a randomly chosen example with some
    of its words outside slot spans replaced by one of their ``neighbours`` (lower-case word ->
    replacements): (index of the example, text)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        i = rng.randrange(len(examples))
        text = _substitute_one(examples[i], neighbours, rng)
        if text != examples[i].text:
            out.append((i, text))
    return out
