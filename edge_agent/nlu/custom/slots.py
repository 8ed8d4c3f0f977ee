"""Slots of a recognized custom intent, read from the utterance (pure).

- a ``values`` list: the first of its values whose words the utterance says (longest first,
  whole words, any case); the slot gets the value's ``out`` (the words said when it has none);
- a ``wildcard``: the utterance is aligned word by word to the intent's example sentence that
  it shares the most words with (all aligned slots come from that one example); the words
  between the literal words that surround the wildcard in the template are its value ("wake me
  up at {time}" and "get me up at six thirty": "me up at" anchors it, ``time`` is "six
  thirty"). A wildcard needs an anchor on at least one side, and two references side by side
  with no literal words between them are left empty;
- a ``range``: the number in the aligned words (digits or words), else the first number written
  in digits, kept when it lies in the range (times the list's ``multiplier``);
- the home's ``{name}``, ``{area}``, ``{floor}``: the aligned words resolved against the home
  (else any run of words that names an entity, area or floor exactly), the raw words without one;
- the data block's fixed ``slots:`` and, with ``requires_context: {area: {slot: true}}``, the
  satellite's area when none was said.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from edge_agent.nlu.custom.sentences import CustomSentences, Example, SlotList
from edge_agent.nlu.home import Home
from edge_agent.nlu.normalize import parse_number
from edge_agent.records.intent import SlotValue

__all__ = ["align", "custom_slots"]

_WORD = re.compile(r"[\w'’]+")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_MAX_NGRAM = 6


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    end: int


def _words(text: str) -> list[_Word]:
    return [_Word(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text)]


@dataclass(frozen=True)
class Alignment:
    """Where an example's list references fall in the utterance: slot -> (start, end) characters,
    and how much of the example's literal words the utterance shares (``ratio``, 0..1)."""

    spans: dict[str, tuple[int, int]]
    ratio: float


def align(text: str, example: Example) -> Alignment:
    """Align ``text`` to ``example`` word by word (see the module docstring)."""
    utt = _words(text)
    tokens: list[str] = []
    markers: list[tuple[int, str]] = []
    for piece in example.pieces:
        if piece.slot is None:
            tokens.extend(w.lower() for w in _WORD.findall(piece.text))
        else:
            markers.append((len(tokens), piece.slot))
            tokens.append("\x00" + piece.slot)  # never equal to a word of the utterance
    matcher = difflib.SequenceMatcher(None, tokens, [w.text for w in utt], autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    literal = len(tokens) - len(markers)
    shared = sum(b.size for b in blocks)
    spans: dict[str, tuple[int, int]] = {}
    for pos, slot in markers:
        left = [b for b in blocks if b.a + b.size <= pos]
        right = [b for b in blocks if b.a > pos]
        if not left and not right and literal:
            continue  # nothing anchors it
        gap_a = (left[-1].a + left[-1].size if left else 0, right[0].a if right else len(tokens))
        if sum(1 for p, _ in markers if gap_a[0] <= p < gap_a[1]) != 1:
            continue  # two references with no literal word between them
        lo = left[-1].b + left[-1].size if left else 0
        hi = right[0].b if right else len(utt)
        if hi > lo:
            spans[slot] = (utt[lo].start, utt[hi - 1].end)
    return Alignment(spans, shared / literal if literal else 1.0)


def custom_slots(
    text: str,
    intent: str,
    ranked: Sequence[Example],
    sentences: CustomSentences,
    home: Home | None = None,
    context_area: str | None = None,
) -> dict[str, SlotValue]:
    """The slots of ``text`` recognized as ``intent``; ``ranked``: the intent's examples, the
    nearest to the utterance first."""
    slots: dict[str, SlotValue] = {}
    if ranked:
        for name, value in ranked[0].slots.items():
            slots[str(name)] = SlotValue(value, "", -1, -1, 1.0)
    alignments = _alignments(text, ranked)
    for slot, list_name in sentences.refs.get(intent, ()):
        if slot in slots:
            continue
        slot_list = sentences.lists.get(list_name)
        if slot_list is None:
            continue
        found = _fill(text, slot, slot_list, alignments, home)
        if found is not None:
            slots[slot] = found
    if ranked and "area" in ranked[0].context_slots and "area" not in slots and context_area:
        slots["area"] = SlotValue(context_area, "", -1, -1, 1.0)
    return slots


def _alignments(text: str, ranked: Sequence[Example]) -> dict[str, tuple[tuple[int, int], float]]:
    """Slot -> (span, ratio) from the one example with list references that shares the most
    words with ``text`` (ties: the nearer example): the slots of one template, never a mix."""
    best: Alignment | None = None
    for example in ranked:
        if example.slot_names:
            found = align(text, example)
            if best is None or found.ratio > best.ratio:
                best = found
    if best is None:
        return {}
    return {slot: (span, best.ratio) for slot, span in best.spans.items()}


def _fill(
    text: str,
    slot: str,
    slot_list: SlotList,
    alignments: dict[str, tuple[tuple[int, int], float]],
    home: Home | None,
) -> SlotValue | None:
    aligned = alignments.get(slot)
    if slot_list.kind == "values":
        return _value(text, slot_list)
    if slot_list.kind == "range":
        return _number(text, slot_list, aligned)
    if slot_list.kind == "home":
        return _home(text, slot_list.name, aligned, home)
    if aligned is None:
        return None
    (start, end), ratio = aligned
    raw = text[start:end]
    return SlotValue(raw, raw, start, end, ratio)


def _value(text: str, slot_list: SlotList) -> SlotValue | None:
    spoken = sorted(((t, v.out) for v in slot_list.values for t in v.texts), key=lambda item: -len(item[0]))
    for words, out in spoken:
        found = _find_words(text, words)
        if found is not None:
            raw = text[found[0] : found[1]]
            return SlotValue(raw if out is None else out, raw, found[0], found[1], 1.0)
    return None


def _find_words(text: str, words: str) -> tuple[int, int] | None:
    parts = [re.escape(w) for w in words.split()]
    if not parts:
        return None
    m = re.search(r"(?<![\w])" + r"\s+".join(parts) + r"(?![\w])", text, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def _number(
    text: str, slot_list: SlotList, aligned: tuple[tuple[int, int], float] | None
) -> SlotValue | None:
    candidates: list[tuple[int, int, float]] = []
    if aligned is not None:
        candidates.append((*aligned[0], aligned[1]))
    candidates.extend((m.start(), m.end(), 1.0) for m in _DIGITS.finditer(text))
    for start, end, confidence in candidates:
        value = parse_number(text[start:end])
        if value is not None and slot_list.start <= value <= slot_list.stop:
            out: Any = value * slot_list.multiplier if slot_list.multiplier is not None else value
            return SlotValue(out, text[start:end], start, end, confidence)
    return None


def _home(
    text: str, name: str, aligned: tuple[tuple[int, int], float] | None, home: Home | None
) -> SlotValue | None:
    if home is not None:
        if aligned is not None:
            (start, end), ratio = aligned
            value = _resolve(home, name, text[start:end], fuzzy=True)
            if value is not None:
                return SlotValue(value, text[start:end], start, end, ratio)
        for start, end in _ngrams(_words(text)):
            value = _resolve(home, name, text[start:end], fuzzy=False)
            if value is not None:
                return SlotValue(value, text[start:end], start, end, 1.0)
    if aligned is None:
        return None
    (start, end), ratio = aligned
    raw = text[start:end]
    return SlotValue(raw, raw, start, end, ratio)


def _resolve(home: Home, name: str, words: str, fuzzy: bool) -> str | None:
    if name == "name":
        entity = home.resolve_entity(words, fuzzy=fuzzy)
        return entity.name if entity is not None else None
    if name == "area":
        return home.resolve_area(words, fuzzy=fuzzy)
    return home.resolve_floor(words, fuzzy=fuzzy)


def _ngrams(words: Sequence[_Word]) -> Iterable[tuple[int, int]]:
    """Character spans of every run of up to ``_MAX_NGRAM`` words, longest runs first."""
    for n in range(min(_MAX_NGRAM, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            yield words[i].start, words[i + n - 1].end
