"""A tiny template language for generating tagged sentences.

Syntax (whitespace separates words)::

    (a|b c|)      choose one alternative (an empty alternative is allowed)
    [x y]         optional, kept with probability 0.5
    {kind}        a placeholder filled by the caller with tagged pieces
    <rule>        a shared rule from RULES

Expansion yields ``Piece``s ``(text, slot-or-None)``; the caller joins them into a sentence and
derives character spans. Parsed templates are cached, so expansion is cheap.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["RULES", "Fill", "Piece", "expand", "join_pieces", "placeholders"]

Piece = tuple[str, "str | None"]


@dataclass
class Fill:
    """What a placeholder expands to: tagged pieces and the normalized slots they imply."""

    pieces: list[Piece]
    slots: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class _Word:
    text: str


@dataclass(frozen=True)
class _Slot:
    kind: str


@dataclass(frozen=True)
class _Rule:
    name: str


@dataclass(frozen=True)
class _Alt:
    options: tuple[tuple[object, ...], ...]


@dataclass(frozen=True)
class _Opt:
    body: tuple[object, ...]


_NO_SPACE_BEFORE = (",", ".", "?", "!", "'s", ":", ";", "%")

RULES: dict[str, str] = {
    "pls": "(please|could you|can you|would you|will you|can you please|could you please|"
    "i want you to|i'd like you to|go ahead and|kindly|hey|ok|okay|i need you to|would you mind|"
    "let's|quickly|just|yo|alright|um|uh|hey there|could you maybe|can you maybe|maybe you could|"
    "um could you|uh can you|so|do me a favor and|if you could|you wanna|i wanna|)",
    "pls_end": "(please|thanks|thank you|now|right now|for me|asap|if you can|will you|real quick|"
    "when you get a chance|pronto|)",
    "the": "(the|the|my|our|)",
    "here": "(in here|here|in this room|in this space|where i am|around me|in the room)",
    "all": "(all|all the|all of the|every|each|)",
    "everywhere": "(everywhere|in the whole house|in the entire house|throughout the house|"
    "all over the house|in every room|around the house|in the entire home|in the whole home|across the home|"
    "all over)",
    "what_is": "(what is|what's|whats|tell me|tell me what|what)",
}


class TemplateError(ValueError):
    pass


_PLACEHOLDER = re.compile(r"(\{[a-z0-9_]+\}|<[a-z_]+>)")


def _split_word(word: str) -> list[str]:
    """ "{animal}s" -> ["{animal}", "##s"]; "{n}," -> ["{n}", ","]. "##" glues to the previous piece."""
    parts = [p for p in _PLACEHOLDER.split(word) if p]
    out: list[str] = []
    for i, part in enumerate(parts):
        if i > 0 and not _PLACEHOLDER.fullmatch(part) and not part.startswith(_NO_SPACE_BEFORE):
            part = "##" + part
        out.append(part)
    return out


def _tokenize(template: str) -> list[str]:
    out: list[str] = []
    buf = ""
    for ch in template + " ":
        if ch in "()[]|" or ch.isspace():
            if buf:
                out.extend(_split_word(buf))
            buf = ""
            if not ch.isspace():
                out.append(ch)
        else:
            buf += ch
    return out


def _parse_seq(tokens: list[str], i: int, stop: str) -> tuple[tuple[object, ...], int]:
    seq: list[object] = []
    while i < len(tokens):
        tok = tokens[i]
        if tok in stop:
            return tuple(seq), i
        if tok == "(":
            options: list[tuple[object, ...]] = []
            i += 1
            while True:
                body, i = _parse_seq(tokens, i, "|)")
                options.append(body)
                if i >= len(tokens):
                    raise TemplateError("unclosed (")
                if tokens[i] == ")":
                    break
                i += 1
            seq.append(_Alt(tuple(options)))
        elif tok == "[":  # [a|b] = optional choice
            choices: list[tuple[object, ...]] = []
            i += 1
            while True:
                body, i = _parse_seq(tokens, i, "|]")
                choices.append(body)
                if i >= len(tokens):
                    raise TemplateError("unclosed [")
                if tokens[i] == "]":
                    break
                i += 1
            seq.append(_Opt(choices[0] if len(choices) == 1 else (_Alt(tuple(choices)),)))
        elif tok.startswith("{") and tok.endswith("}"):
            seq.append(_Slot(tok[1:-1]))
        elif tok.startswith("<") and tok.endswith(">") and tok[1:-1] in RULES:
            seq.append(_Rule(tok[1:-1]))
        else:
            seq.append(_Word(tok))
        i += 1
    return tuple(seq), i


@lru_cache(maxsize=8192)
def _parse(template: str) -> tuple[object, ...]:
    seq, i = _parse_seq(_tokenize(template), 0, "")
    if i != len(_tokenize(template)):
        raise TemplateError(f"unbalanced template: {template!r}")
    return seq


def placeholders(template: str) -> set[str]:
    found: set[str] = set()

    def walk(seq: tuple[object, ...]) -> None:
        for node in seq:
            if isinstance(node, _Slot):
                found.add(node.kind)
            elif isinstance(node, _Alt):
                for opt in node.options:
                    walk(opt)
            elif isinstance(node, _Opt):
                walk(node.body)

    walk(_parse(template))
    return found


def expand(
    template: str,
    rng: random.Random,
    fill: Callable[[str], Fill] | Mapping[str, Fill],
    used: dict[str, object],
) -> list[Piece]:
    """Expand ``template``; slots of every emitted placeholder are merged into ``used``."""
    out: list[Piece] = []
    getter = fill.__getitem__ if isinstance(fill, Mapping) else fill
    _expand_seq(_parse(template), rng, getter, used, out)
    return out


def _expand_seq(
    seq: tuple[object, ...],
    rng: random.Random,
    fill: Callable[[str], Fill],
    used: dict[str, object],
    out: list[Piece],
) -> None:
    for node in seq:
        if isinstance(node, _Word):
            out.append((node.text, None))
        elif isinstance(node, _Slot):
            f = fill(node.kind)
            out.extend(f.pieces)
            used.update(f.slots)
        elif isinstance(node, _Rule):
            _expand_seq(_parse(RULES[node.name]), rng, fill, used, out)
        elif isinstance(node, _Alt):
            _expand_seq(node.options[rng.randrange(len(node.options))], rng, fill, used, out)
        elif isinstance(node, _Opt) and rng.random() < 0.5:
            _expand_seq(node.body, rng, fill, used, out)


def join_pieces(pieces: list[Piece]) -> tuple[str, list[tuple[int, int, str]]]:
    """Join pieces with single spaces; return text and merged (start, end, slot) spans."""
    text = ""
    spans: list[tuple[int, int, str]] = []
    for piece, slot in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if piece.startswith("##"):
            piece = piece[2:]
        elif text and not piece.startswith(_NO_SPACE_BEFORE):
            text += " "
        start = len(text)
        text += piece
        if slot is None:
            continue
        spans.append((start, len(text), slot))
    return text, spans
