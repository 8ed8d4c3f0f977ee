"""Span repair before slots are built: snapping tagged spans to whole words, joining and
extending cut-short spans, and aligning spans with the home's entity, area and floor names."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from edge_agent.nlu import normalize as nz
from edge_agent.nlu.home import Home
from edge_agent.nlu.slots.words import (
    BINARY_CLASSES,
    BINARY_OFF,
    COVER_BY_WORD,
    DOMAIN_BY_WORD,
    MEDIA_BY_WORD,
    STATE_FILLER,
    STATE_PHRASES,
    WORD,
    device_class_for,
    lookup_word,
    word_key,
)
from edge_agent.records.intent import Span


def group_spans(text: str, spans: Sequence[Span]) -> dict[str, list[tuple[Span, str]]]:
    groups: dict[str, list[tuple[Span, str]]] = {}
    for span in sorted(spans, key=lambda s: s.start):
        start, end = max(0, span.start), min(len(text), span.end)
        raw = text[start:end].strip()
        if raw:
            groups.setdefault(span.slot, []).append((span, raw))
    return groups


_JOINERS = re.compile(r"^[\s,]*(?:and|plus)?[\s,]*$", re.IGNORECASE)


def timer_spans(text: str, intent: str, spans: list[Span], home: Home | None) -> list[Span]:
    """Timer intents fix the role of a duration: a new timer only has a length ("duration"); cancel,
    pause, resume and status only identify one ("start_duration"); add/remove have both (the first
    one spoken without "timer" after it is the amount). A timer "name" that is a room is its area."""
    out: list[Span] = []
    for sp in spans:
        slot = sp.slot
        if slot in ("duration", "start_duration"):
            if intent == "HassStartTimer":
                slot = "duration"
            elif intent not in ("HassIncreaseTimer", "HassDecreaseTimer"):
                slot = "start_duration"
        elif slot == "timer_name" and home is not None:
            raw = text[max(0, sp.start) : sp.end]
            if home.resolve_area(raw, fuzzy=False) is not None:
                slot = "area"
        out.append(Span(sp.start, sp.end, slot, sp.confidence))
    durations = [i for i, sp in enumerate(out) if sp.slot == "duration"]
    if intent in ("HassIncreaseTimer", "HassDecreaseTimer") and len(durations) > 1:
        for i in durations:  # "add 10 minutes to the 2 hour timer": the one naming the timer
            sp = out[i]
            if text[sp.end :].lstrip().lower().startswith("timer") or re.search(
                r"timer (?:for|of)\s*$", text[: sp.start], re.IGNORECASE
            ):
                out[i] = Span(sp.start, sp.end, "start_duration", sp.confidence)
                break
    if intent in ("HassIncreaseTimer", "HassDecreaseTimer") and not any(sp.slot == "duration" for sp in out):
        for i, sp in enumerate(out):
            if sp.slot == "start_duration" and not text[sp.end :].lstrip().lower().startswith("timer"):
                out[i] = Span(sp.start, sp.end, "duration", sp.confidence)
                break
    return out


def merge_pieces(text: str, items: list[tuple[Span, str]]) -> tuple[Span, str]:
    """Pieces of one slot read together: the text between them when only "and"/commas separate them."""
    first, last = items[0][0], items[-1][0]
    conf = min(s.confidence for s, _ in items)
    gaps = [text[a[0].end : b[0].start] for a, b in itertools.pairwise(items)]
    if all(_JOINERS.match(gap) for gap in gaps):
        return Span(first.start, last.end, first.slot, conf), text[first.start : last.end].strip()
    return Span(first.start, last.end, first.slot, conf), " ".join(raw for _, raw in items)


def _adjacent(text: str, left: Span, right: Span) -> bool:
    return left.end <= right.start and not text[left.end : right.start].strip()


PLACE_SLOTS = ("name", "area", "floor")


def _known(home: Home, slot: str, raw: str) -> bool:
    if slot == "name":
        return home.resolve_entity(raw, fuzzy=False) is not None
    if slot == "area":
        return home.resolve_area(raw, fuzzy=False) is not None
    return home.resolve_floor(raw, fuzzy=False) is not None


def _merge_and_extend(text: str, spans: list[Span], home: Home) -> list[Span]:
    """Name/area/floor spans split by the tagger ("living" + "room") are joined when adjacent, and a
    span that matches nothing grows by one untagged word on either side when that makes a match."""
    merged: list[Span] = []
    for sp in spans:
        last = merged[-1] if merged else None
        joined = _joined_kind(text, last, sp, home) if last is not None else None
        if last is not None and joined is not None:
            merged[-1] = Span(last.start, sp.end, joined, min(last.confidence, sp.confidence))
        else:
            merged.append(sp)
    tagged = [(sp.start, sp.end) for sp in merged]
    out: list[Span] = []
    for sp in merged:
        raw = text[sp.start : sp.end]
        if sp.slot in PLACE_SLOTS and not _known(home, sp.slot, raw):
            for start, end in _neighbour_words(text, sp):
                if any(a < end and start < b for a, b in tagged if (a, b) != (sp.start, sp.end)):
                    continue
                if _known(home, sp.slot, text[start:end]):
                    sp = Span(start, end, sp.slot, sp.confidence)
                    break
        out.append(sp)
    return out


def _joined_kind(text: str, left: Span, right: Span, home: Home) -> str | None:
    """Two adjacent place/name spans that belong together: same kind, or together a known place."""
    if left.slot not in PLACE_SLOTS or right.slot not in PLACE_SLOTS or not _adjacent(text, left, right):
        return None
    if left.slot == right.slot:
        return left.slot
    raw = text[left.start : right.end]
    for slot in ("area", "floor", "name"):
        if _known(home, slot, raw):
            return slot
    return None


def _neighbour_words(text: str, sp: Span) -> list[tuple[int, int]]:
    after = WORD.match(text, sp.end + 1) if text[sp.end : sp.end + 1] == " " else None
    before = [m for m in WORD.finditer(text, 0, max(0, sp.start - 1)) if m.end() == sp.start - 1]
    out = []
    if after is not None:
        out.append((sp.start, after.end()))
    if before:
        out.append((before[-1].start(), sp.end))
    return out


def repair_names(text: str, intent: str, spans: list[Span], home: Home) -> list[Span]:
    """Fix name boundaries with the home: "desk" + "lamp" -> the entity "Desk Lamp",
    "porch" + "sconce" -> "Porch sconce", and a tagged area that is really an entity."""
    spans = _merge_and_extend(text, sorted(spans, key=lambda sp: sp.start), home)
    i = 0
    while i < len(spans):
        span = spans[i]
        raw = text[span.start : span.end]
        if (
            span.slot == "name"
            and home.resolve_entity(raw) is None
            and home.resolve_area(raw, fuzzy=False) is not None
        ):
            spans[i] = span = Span(span.start, span.end, "area", span.confidence)  # "pantry" is a room here
        if span.slot == "name" and home.resolve_entity(raw, fuzzy=False) is None:
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            prev = spans[i - 1] if i > 0 else None
            if (
                nxt is not None
                and nxt.slot in ("domain", "device_class")
                and _adjacent(text, span, nxt)
                and home.resolve_entity(text[span.start : nxt.end], fuzzy=False) is not None
            ):
                spans[i] = Span(span.start, nxt.end, "name", min(span.confidence, nxt.confidence))
                del spans[i + 1]
                continue
            if (
                prev is not None
                and prev.slot in ("area", "floor")
                and _adjacent(text, prev, span)
                and home.resolve_entity(text[prev.start : span.end], fuzzy=False) is not None
            ):
                spans[i - 1] = Span(prev.start, span.end, "name", min(span.confidence, prev.confidence))
                del spans[i]
                continue
        if span.slot in ("area", "floor"):
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            if (
                nxt is not None
                and nxt.slot in ("domain", "device_class")
                and _adjacent(text, span, nxt)
                and home.resolve_entity(text[span.start : nxt.end], fuzzy=False) is not None
            ):
                spans[i] = Span(span.start, nxt.end, "name", min(span.confidence, nxt.confidence))
                del spans[i + 1]  # "the study lamp" is the entity Study Lamp, not a room + lights
                continue
            if (
                home.resolve_area(raw, fuzzy=False) is None
                and home.resolve_floor(raw, fuzzy=False) is None
                and home.resolve_entity(raw, fuzzy=False) is not None
            ):
                spans[i] = Span(span.start, span.end, "name", span.confidence)
        if span.slot in ("domain", "device_class") and not any(sp.slot == "name" for sp in spans):
            named = home.resolve_entity(raw, fuzzy=False, plural=False)
            if named is not None and (
                intent == "HassGetState" or named.domain not in ("sensor", "binary_sensor")
            ):
                spans[i] = Span(
                    span.start, span.end, "name", span.confidence
                )  # an entity called "Radio" or "Heater"
        if span.slot == "name" and home.resolve_entity(raw, fuzzy=False, plural=False) is None:
            # also "nursery blinds" that only matched the entity "Nursery Blind" through the
            # plural: a room and a kind of device (HA reads it as a group), not that one entity
            split = _split_area_word(text, span, home)
            if split:
                spans[i : i + 1] = split
        i += 1
    return spans


def _split_area_word(text: str, span: Span, home: Home) -> list[Span]:
    """ "hallway lights" tagged as one name, with no such entity -> area "hallway" + domain "lights"."""
    raw = text[span.start : span.end]
    for cut in [m.start() for m in re.finditer(r" ", raw)]:
        head, tail = raw[:cut], raw[cut + 1 :]
        kind = (
            "area"
            if home.resolve_area(head, fuzzy=False)
            else "floor"
            if home.resolve_floor(head, fuzzy=False)
            else None
        )
        if kind is None:
            continue
        word = (
            "domain"
            if lookup_word(DOMAIN_BY_WORD, tail)
            else "device_class"
            if lookup_word(COVER_BY_WORD, tail)
            else None
        )
        if word is not None and word_key(tail) in DOMAIN_BY_WORD | COVER_BY_WORD:
            return [
                Span(span.start, span.start + cut, kind, span.confidence),
                Span(span.start + cut + 1, span.end, word, span.confidence),
            ]
    return []


def _in_word(text: str, i: int) -> bool:
    """text[i] is part of a word: a letter or digit, or a hyphen or dot between two of them
    ("E-type", "A.j", "21.5")."""
    if text[i].isalnum():
        return True
    return text[i] in "-." and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


_INITIALS = re.compile(r"(?<![\w.])(?:[A-Za-z]\.)+[A-Za-z]$")


_JOINABLE = frozenset(
    (
        "list_name", "item", "search_query", "message", "conversation_command", "timer_name", "state",
        "brightness", "position", "percentage", "volume_level", "temperature", "color", "media_class",
    )
)  # fmt: skip


# slots whose value is free text (a title, a place, a thing to buy, a name): what edge words
# ``trim_span_edges`` may drop
_FREE_TEXT = frozenset(("search_query", "name", "item", "area", "floor", "timer_name"))
# words that join a value to the rest of the sentence and never end a name, title or place in
# a request ("... in Springfield and nearby", "play Anna Berg from the nineties", "anything Joe did");
# not "to" and "for", which a speech recognizer writes for "two" and "four" ("spotlight to")
_NEVER_LAST = frozenset(
    (
        "and", "or", "but", "nor", "from", "by", "with", "of", "the", "a", "an", "near", "did",
    )
)  # fmt: skip
# words that introduce a value and are not part of it ("the song called ...", "a list named ...")
_NEVER_FIRST = frozenset(("called", "named", "titled", "entitled"))
_WORD_SPAN = re.compile(r"\S+")


# prepositions that lead to a place or a player: at a value's end they are the next slot's
_LEADS_TO_PLACE = frozenset(("in", "on", "at", "into", "onto", "through", "via"))
_ARTICLES = re.compile(r"\s*(?:(?:the|my|our|your|a)\s+)?", re.IGNORECASE)


def _place_follows(text: str, end: int, spans: Sequence[Span]) -> bool:
    """A place or name span starts right after ``end`` (an article between allowed)."""
    start = _ARTICLES.match(text, end)
    at = start.end() if start else end
    return any(sp.slot in PLACE_SLOTS and sp.start == at for sp in spans)


def _edge_word(text: str, bounds: tuple[int, int]) -> str:
    return text[bounds[0] : bounds[1]].lower().strip(".,;:!?\"'")


def trim_span_edges(text: str, spans: Sequence[Span]) -> list[Span]:
    """A free-text span does not begin with a word that introduces its value ("called", "named")
    nor end with one that joins it to the rest of the sentence ("and", "from", "did") or with a
    preposition that leads to the place or player tagged right after it ("Lady Bird in" + "the
    living room"): those words are dropped from its edges, never its last word."""
    out: list[Span] = []
    for sp in spans:
        if sp.slot not in _FREE_TEXT:
            out.append(sp)
            continue
        found = _WORD_SPAN.finditer(text, sp.start, sp.end)
        words = [(m.start(), m.end()) for m in found]
        while len(words) > 1 and _edge_word(text, words[0]) in _NEVER_FIRST:
            words.pop(0)
        while len(words) > 1 and (
            _edge_word(text, words[-1]) in _NEVER_LAST
            or (_edge_word(text, words[-1]) in _LEADS_TO_PLACE and _place_follows(text, words[-1][1], spans))
        ):
            words.pop()
        if not words:
            out.append(sp)
            continue
        out.append(Span(words[0][0], words[-1][1], sp.slot, sp.confidence))
    return out


# capitalized words that still end a run of a name: days, months, times, "I", the small words
# that lead to a time or a place ("in", "on", "at", "this", "next"); a capitalized joining word
# ("Ready To Die") belongs to a title unless the run ends on it
_NOT_A_NAME = frozenset(
    (
        "i", "in", "on", "at", "this", "next", "please", "now", "today", "tonight", "tomorrow",
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
        "january", "february", "march", "april", "may", "june", "july", "august", "september",
        "october", "november", "december", "am", "pm",
    )
)  # fmt: skip
_MAX_GROWTH = 3


def _title_case(text: str) -> bool:
    """Most words capitalized: capitals then say nothing about where a name ends."""
    words = WORD.findall(text)
    return len(words) > 2 and sum(w[:1].isupper() for w in words) >= 0.8 * len(words)


def grow_names_right(text: str, intent: str, spans: Sequence[Span]) -> list[Span]:
    """A title or a place cut short ("North" of "North Korea", "Ready" of "Ready To Die") takes the
    capitalized untagged words right after it, up to three, that are not days, times or "in"/"on"
    and do not end on a joining word (the mirror of the media query's growth to the left): a
    query, and the place of a weather request. Nothing grows in a sentence whose words are
    mostly capitalized."""
    growable = {"search_query"} | ({"name"} if intent == "HassGetWeather" else set())
    if not any(sp.slot in growable for sp in spans) or _title_case(text):
        return list(spans)
    out: list[Span] = []
    for sp in spans:
        if sp.slot not in growable:
            out.append(sp)
            continue
        others = [(o.start, o.end) for o in spans if o is not sp]
        grown: list[tuple[int, int]] = []
        last = sp.end
        for n, m in enumerate(WORD.finditer(text, sp.end)):
            word = m.group(0).rstrip(".")
            if (
                n >= _MAX_GROWTH
                or text[last : m.start()].strip()
                or not word[:1].isupper()
                or word.lower() in _NOT_A_NAME
                or (sp.slot == "search_query" and word.lower() in MEDIA_BY_WORD)
                or any(a < m.end() and m.start() < b for a, b in others)
            ):
                break
            last = m.start() + len(word)
            grown.append((m.start(), last))
        while grown and _edge_word(text, grown[-1]) in _NEVER_LAST:
            grown.pop()
        out.append(Span(sp.start, grown[-1][1], sp.slot, sp.confidence) if grown else sp)
    return out


# words that may end the words a naming word introduced without being part of them ("... called
# Hello on the", "... named Hello please"): a joining word, a preposition before a place, a courtesy
_TITLE_TAIL = _NEVER_LAST | frozenset(("to", "for", "on", "in", "at", "please", "now", "thanks"))
_CLAUSE_END = re.compile(r"[,;!?]|\.(?:\s|$)")


def _preceded_by_naming_word(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    if len(before) == len(text[:start]) and start > 0:
        return False  # no space between: the span starts inside a word
    last = WORD.search(before, max(0, before.rfind(" ") + 1))
    return last is not None and last.group(0).lower() in _NEVER_FIRST


def run_titles_on(text: str, spans: Sequence[Span], home: Home | None) -> list[Span]:
    """The title a naming word introduces ("the song called dancing on the ceiling") runs on to the
    end of its clause: a media query right after "called", "named", "titled" or "entitled" takes
    the words after it up to a comma or a sentence's end, or up to another slot's span, less
    joining words, prepositions and courtesies at its end. A place or name span inside that
    stretch that the home does not know belongs to the title; without a home every other span
    ends it. Only titles: a timer's or a list's name is followed by the rest of the request
    ("the timer called toast up by five minutes")."""
    spans = list(spans)
    grown: dict[int, Span] = {}
    absorbed: set[int] = set()
    for i, sp in enumerate(spans):
        if i in absorbed or sp.slot != "search_query" or not _preceded_by_naming_word(text, sp.start):
            continue
        clause = _CLAUSE_END.search(text, sp.end)
        end = clause.start() if clause else len(text)
        inside: list[int] = []
        for j, other in sorted(enumerate(spans), key=lambda t: t[1].start):
            if j == i or other.end <= sp.end or other.start >= end:
                continue
            unknown = (
                home is not None
                and other.slot in PLACE_SLOTS
                and not _known(home, other.slot, text[other.start : other.end])
            )
            if other.slot != sp.slot and not unknown:
                end = max(sp.end, other.start)
                break
            inside.append(j)
        words = [(m.start(), m.end()) for m in WORD.finditer(text, sp.end, end)]
        while words and _edge_word(text, words[-1]) in _TITLE_TAIL:
            words.pop()
        if words:
            absorbed.update(j for j in inside if spans[j].end <= words[-1][1])
            grown[i] = Span(sp.start, words[-1][1], sp.slot, sp.confidence)
    return [grown.get(i, sp) for i, sp in enumerate(spans) if i not in absorbed]


# nouns that stand for a place and name it after "of" ("the state of Wisconsin")
_PLACE_NOUNS = frozenset(
    ("state", "city", "town", "country", "province", "county", "region", "island", "village")
)
_OF = re.compile(r"\s+of\s+(?:the\s+)?", re.IGNORECASE)


def place_after_noun(text: str, intent: str, spans: Sequence[Span]) -> list[Span]:
    """The place of a weather request tagged on the noun before its name ("state" of "the state of
    Wisconsin") moves to the word after "of"; a span already there keeps it and the noun's goes."""
    if intent != "HassGetWeather":
        return list(spans)
    out: list[Span] = []
    for sp in spans:
        of = _OF.match(text, sp.end)
        if sp.slot != "name" or word_key(text[sp.start : sp.end]) not in _PLACE_NOUNS or of is None:
            out.append(sp)
            continue
        if any(o.slot == "name" and o.start == of.end() for o in spans):
            continue
        nxt = WORD.match(text, of.end())
        if nxt is None:
            out.append(sp)
            continue
        out.append(Span(of.end(), of.end() + len(nxt.group(0).rstrip(".")), sp.slot, sp.confidence))
    return out


def snap_to_words(text: str, spans: Sequence[Span]) -> list[Span]:
    """Spans cut inside a word by sub-word tagging ("televi", "occup" + "an") grow to whole words,
    a hyphen or dot between letters counting as inside ("E" + "type" of "E-type"); pieces that
    then overlap are merged (same slot) or the one that covered more text wins."""
    grown: list[tuple[Span, int]] = []
    for sp in sorted(spans, key=lambda s: (s.start, s.end)):
        start, end = max(0, sp.start), min(len(text), sp.end)
        if end <= start:
            grown.append((sp, 0))
            continue
        while start > 0 and _in_word(text, start - 1) and _in_word(text, start):
            start -= 1
        while end < len(text) and _in_word(text, end) and _in_word(text, end - 1):
            end += 1
        if end < len(text) and text[end] == "." and _INITIALS.search(text, 0, end):
            end += 1  # "A.j." keeps the dot that ends its initials
        grown.append((Span(start, end, sp.slot, sp.confidence), min(len(text), sp.end) - max(0, sp.start)))
    out: list[tuple[Span, int]] = []
    for sp, covered in grown:
        if (
            out
            and covered
            and out[-1][1]
            and sp.slot == out[-1][0].slot
            and sp.slot in _JOINABLE
            and sp.start >= out[-1][0].end
            and not text[out[-1][0].end : sp.start].strip()
            and (sp.slot != "state" or word_key(text[out[-1][0].start : sp.end]) in STATE_PHRASES)
        ) or (
            out
            and sp.slot == out[-1][0].slot
            and sp.slot in ("domain", "device_class")
            and sp.start >= out[-1][0].end
            and not text[out[-1][0].end : sp.start].strip()
            and not _understood(text[out[-1][0].start : out[-1][0].end], sp.slot, None)
        ):
            prev, prev_cov = out[-1]  # "hardware" + "store": one value tagged word by word
            out[-1] = (
                Span(prev.start, sp.end, sp.slot, min(prev.confidence, sp.confidence)),
                prev_cov + covered,
            )
            continue
        if out and covered and out[-1][1] and sp.start < out[-1][0].end:
            prev, prev_cov = out[-1]
            if prev.slot == sp.slot:
                joined = Span(prev.start, max(prev.end, sp.end), sp.slot, min(prev.confidence, sp.confidence))
                out[-1] = (joined, prev_cov + covered)
            elif covered > prev_cov:
                out[-1] = (sp, covered)
            continue
        out.append((sp, covered))
    return [sp for sp, _ in out]


_MentionCache = dict[int, tuple[Home, "re.Pattern[str] | None", dict[str, tuple[str, str]]]]
_MENTIONS: _MentionCache = {}


def _mention_index(home: Home) -> tuple[re.Pattern[str] | None, dict[str, tuple[str, str]]]:
    """One regex over every spoken entity name, area and floor of the home (longest first)."""
    cached = _MENTIONS.get(id(home))
    if cached is not None and cached[0] is home:
        return cached[1], cached[2]
    table: dict[str, tuple[str, str]] = {}
    for kind, values in (
        ("floor", home.floors),
        ("area", home.areas),
        ("name", [n for e in home.entities for n in e.spoken_names()]),
    ):
        for value in values:
            key = re.sub(r"\s+", " ", value.lower()).strip()
            if len(key) >= 2:
                table[key] = (kind, value)  # an entity called like its room wins: it is more specific
    pattern = None
    if table:
        alts = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
        pattern = re.compile(rf"(?<![a-z0-9])(?:{alts})(?![a-z0-9])")
    if len(_MENTIONS) > 32:
        _MENTIONS.clear()
    _MENTIONS[id(home)] = (home, pattern, table)
    return pattern, table


_Mention = tuple[int, int, str, str]
_LAST_MENTIONS: dict[int, tuple[Home, str, tuple[_Mention, ...]]] = {}


def home_mentions(text: str, home: Home) -> list[_Mention]:
    """Word-bounded mentions of the home's names, areas and floors: (start, end, kind, value).
    Slot building asks two or three times per utterance; the last text's answer is kept."""
    last = _LAST_MENTIONS.get(id(home))
    if last is not None and last[0] is home and last[1] == text:
        return list(last[2])
    pattern, table = _mention_index(home)
    out: list[_Mention] = []
    lowered = text.lower()
    if pattern is not None and len(lowered) == len(text):
        for m in pattern.finditer(lowered):
            kind, value = table[m.group(0)]
            out.append((m.start(), m.end(), kind, value))
    if len(_LAST_MENTIONS) > 32:
        _LAST_MENTIONS.clear()
    _LAST_MENTIONS[id(home)] = (home, text, tuple(out))
    return out


def _understood(text: str, slot: str, home: Home | None) -> bool:
    """Whether a span's words already mean something for its slot."""
    key = word_key(text)
    if slot == "state":
        key = STATE_FILLER.sub("", key) or key
        return (
            key in STATE_PHRASES
            or key in BINARY_OFF
            or any(key in c[1] + c[2] for c in BINARY_CLASSES.values())
        )
    if slot == "domain":
        return lookup_word(DOMAIN_BY_WORD, text) is not None or device_class_for(text, "", False) is not None
    if slot == "device_class":
        return device_class_for(text, "HassGetState", False) is not None
    if slot == "media_class":
        return lookup_word(MEDIA_BY_WORD, text) is not None
    if slot == "list_name":
        spoken = re.sub(r"\s+list$", "", text.strip(" ?.!,"), flags=re.IGNORECASE)
        return home is None or home.resolve_list(spoken, fuzzy=False) is not None
    parse = nz.VALUE_PARSERS.get(slot)
    return parse is None or parse(text) is not None


def grow_spans(text: str, spans: list[Span], home: Home | None) -> list[Span]:
    """A state, kind, value or list-name span the tagger cut short ("at" of "at home", "single" of
    "every single light", "the" of "the lowest", "farmers" of "farmers market") takes up to two following
    untagged words when that makes it mean something; a value that is really a color becomes one."""
    out = sorted(spans, key=lambda sp: sp.start)
    for i, sp in enumerate(out):
        if sp.slot not in ("state", "domain", "device_class", "list_name", "media_class", *nz.VALUE_PARSERS):
            continue
        raw = text[max(0, sp.start) : sp.end]
        if not raw.strip() or _understood(raw, sp.slot, home):
            continue
        if sp.slot in nz.VALUE_PARSERS and sp.slot != "color" and nz.parse_color(raw) is not None:
            out[i] = Span(sp.start, sp.end, "color", sp.confidence)  # "make the loft green"
            continue
        limit = out[i + 1].start if i + 1 < len(out) else len(text)
        end = sp.end
        for _ in range(2):
            word = WORD.match(text, end + 1) if text[end : end + 1] == " " else None
            if word is None or word.end() > limit:
                break
            end = word.end()
            if _understood(text[sp.start : end], sp.slot, home):
                out[i] = Span(sp.start, end, sp.slot, sp.confidence)
                break
    return out
