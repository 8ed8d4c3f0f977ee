"""The media rules: search-and-play queries and media words beside the query."""

from __future__ import annotations

import re

from edge_agent.nlu.home import Home
from edge_agent.nlu.slots.collector import SlotCollector
from edge_agent.nlu.slots.spans import home_mentions
from edge_agent.nlu.slots.words import MEDIA_BY_WORD, WORD, lookup_word, mentions_here, word_key
from edge_agent.records.intent import SlotValue, Span

_MEDIA_AFTER = re.compile(r"\s+(\w+)")


def media_word_starts(text: str, start: int, end: int) -> bool:
    """The mention begins a media class phrase ("tv" of "tv show")."""
    nxt = _MEDIA_AFTER.match(text, end)
    return nxt is not None and f"{text[start:end]} {nxt[1]}".lower() in MEDIA_BY_WORD


_PLAY_LEAD = re.compile(
    r"^\W*(?:(?:hey|ok|okay|please|can you|could you|would you|i want to|i'd like to|let's)\s+)*"
    r"(?:play|put on|listen to|watch|stream|start playing|queue up|throw on|hear)\s+(?:me\s+|some\s+)?",
    re.IGNORECASE,
)
_PLACE_TAIL = re.compile(r"\s+(?:on|in|at|through|via)\s+(?:the\s+|my\s+|our\s+)?", re.IGNORECASE)
_QUERY_STOP = frozenset(
    (
        "play", "playing", "on", "the", "a", "an", "some", "me", "to", "listen", "watch", "hear", "put",
        "stream", "up", "queue", "throw", "find", "for", "search", "look", "start", "want", "like", "please",
        "can", "you", "could", "i", "i'd", "let's", "and", "it", "of",
    )
)  # fmt: skip


def fill_media_query(out: SlotCollector, text: str, home: Home | None) -> None:
    """What to play, when the tagger missed it or cut it short: the words after the play verb up to
    the player or room ("play the Velvet Harbor album on the den speaker"), less a media class word
    at either end."""
    slot = out.slots.get("search_query")
    if slot is not None and word_key(str(slot.value)) in _QUERY_STOP | {""}:
        del out.slots["search_query"]  # "the": a piece of the verb phrase, not a title
        slot = None
    if slot is not None:
        _placeholder_source(out, text, slot)
        _grow_query_to_lead(out, text, out.slots["search_query"])
        _title_article(out, text, out.slots["search_query"])
        slot = out.slots["search_query"]
        _grow_query_left(out, text, slot)
        _split_media_word(out, text)
        _media_word_beside(out, text)
        return
    lead = _PLAY_LEAD.match(text)
    if lead is None:
        return
    start = lead.end()
    stop = len(text.rstrip(" ?.!,"))
    mentions = {m[0] for m in home_mentions(text, home)} if home is not None else set()
    for tail in _PLACE_TAIL.finditer(text, start):
        if tail.end() in mentions or mentions_here(text[tail.start() :]):
            stop = tail.start()
            break
    words = _without_courtesy(text[start:stop].split())
    media: tuple[str, str] | None = None
    if words and words[0].lower() == "the" and len(words) > 2 and lookup_word(MEDIA_BY_WORD, words[1]):
        words = words[1:]
    for pick in (2, 1):
        if len(words) > pick and " ".join(words[:pick]).lower() in MEDIA_BY_WORD:
            media, words = (
                (MEDIA_BY_WORD[" ".join(words[:pick]).lower()], " ".join(words[:pick])),
                words[pick:],
            )
            break
        if len(words) > pick and " ".join(words[-pick:]).lower() in MEDIA_BY_WORD:
            media, words = (
                (MEDIA_BY_WORD[" ".join(words[-pick:]).lower()], " ".join(words[-pick:])),
                words[:-pick],
            )
            if words and words[0].lower() == "the":
                words = words[1:]
            break
    query = " ".join(words).strip(" ?.!,")
    if word_key(query) in _QUERY_STOP | {""}:
        return  # "watch a movie": what is left is an article, no title
    q_start = text.find(query, start)
    q_end = q_start + len(query)
    for name in ("area", "floor", "name", "domain", "device_class", "media_class"):
        value = out.slots.get(name)
        if value is not None and value.start >= 0 and value.start < q_end and q_start < value.end:
            del out.slots[name]
    if home is not None and not {"area", "floor"} & set(out.slots):
        for m_start, m_end, kind, value_ in home_mentions(text, home):
            if kind != "name" and m_start >= q_end:  # the room after the title
                out.put(kind, value_, Span(m_start, m_end, kind, 0.5), text[m_start:m_end])
                break
    span = Span(q_start, q_end, "search_query", 0.5)
    out.put("search_query", query, span, query)
    if media is not None and "media_class" not in out.slots:
        m_start = text.lower().find(media[1].lower(), start)
        out.put("media_class", media[0], Span(m_start, m_start + len(media[1]), "media_class", 0.5), media[1])


def _set_query(out: SlotCollector, text: str, start: int, end: int, confidence: float) -> None:
    """The query becomes ``text[start:end]``, its value without edge punctuation."""
    raw = text[start:end]
    out.slots["search_query"] = SlotValue(raw.strip(" ?.!,"), raw, start, end, confidence)


# words that end a request without being what to play ("... now", "... please", "... for me")
_COURTESY = frozenset(("now", "please", "tonight", "today", "again", "thanks", "pls"))


def _without_courtesy(words: list[str]) -> list[str]:
    words = list(words)
    while len(words) > 1:
        if words[-1].lower().strip("?.!,") in _COURTESY:
            words.pop()
        elif (
            len(words) > 2 and words[-2].lower() == "for" and words[-1].lower().strip("?.!,") in ("me", "us")
        ):
            del words[-2:]
        else:
            break
    return words


# words between the play verb and a query that are not the title's
_NOT_TITLE_LEAD = frozenset(
    ("my", "our", "your", "from", "by", "something", "anything", "music", "songs", "some", "this", "that")
)


def _grow_query_to_lead(out: SlotCollector, text: str, slot: SlotValue) -> None:
    """ "play toy" + tagged "story": one or two untagged words between the play verb and the query,
    none of them a small word, a media word or a placeholder, are the title's start (the
    lower-case mirror of the capitalized growth below; "play something from X" keeps "X"). Only
    for a query in lower case: where it is capitalized, the capitals say where the title starts."""
    lead = _PLAY_LEAD.match(text)
    if slot.start < 0 or lead is None or lead.end() >= slot.start or not text[slot.start].islower():
        return  # a capitalized query says where the title starts ("good Anna Berg")
    between = text[lead.end() : slot.start].split()
    if not 1 <= len(between) <= 2 or any(
        w.lower() in _QUERY_STOP
        or w.lower() in _NOT_TITLE_LEAD
        or w.lower() in MEDIA_BY_WORD
        or not w.isalnum()
        for w in between
    ):
        return
    if any(
        v.start >= 0 and v.start < slot.start and lead.end() < v.end
        for k, v in out.slots.items()
        if k != "search_query"
    ):
        return
    _set_query(out, text, lead.end(), slot.end, slot.confidence)


_MEDIA_THE = re.compile(r"\b([\w ]+?)\s+(the\s+)$", re.IGNORECASE)


def _title_article(out: SlotCollector, text: str, slot: SlotValue) -> None:
    """ "the film the" + "green mile": an untagged "the" between a media word and the query is the
    title's own article."""
    if slot.start < 0:
        return
    m = _MEDIA_THE.search(text, max(0, slot.start - 20), slot.start)
    if m is None or m.group(1).split()[-1].lower() not in MEDIA_BY_WORD:
        return
    if str(slot.value).lower().startswith("the "):
        return
    _set_query(out, text, m.start(2), slot.end, slot.confidence)


# a query that names nothing to search for ("play something from ...")
_PLACEHOLDERS = frozenset(
    ("something", "anything", "stuff", "some stuff", "music", "some music", "songs", "some songs", "tunes")
)
_FROM_WHOM = re.compile(r"\s+(?:from|by)\s+(?:the\s+)?(?:(?:artist|band|singer|group)\s+)?", re.IGNORECASE)
# words that end the name after "from"/"by": a place or player, a clause, a courtesy
_AFTER_SOURCE = frozenset(
    (
        "on", "in", "at", "through", "via", "that", "which", "who", "please", "now", "from", "by", "and",
        "with", "genre", "music",
    )
)  # fmt: skip
_MAX_SOURCE = 4


def _placeholder_source(out: SlotCollector, text: str, slot: SlotValue) -> None:
    """ "play something from Anna Berg": a query that names nothing ("something", "stuff", "some
    music") gives way to what follows its "from" or "by", up to four words that do not lead to a
    place, a player or another clause ("something sad" stays: it says what to play)."""
    if slot.start < 0 or word_key(str(slot.value)) not in _PLACEHOLDERS:
        return
    lead = _FROM_WHOM.match(text, slot.end)
    if lead is None:
        return
    words: list[re.Match[str]] = []
    last = lead.end()
    for m in WORD.finditer(text, lead.end()):
        word = m.group(0).lower().rstrip(".").split("'")[0]
        if text[last : m.start()].strip() or word in _AFTER_SOURCE or word in MEDIA_BY_WORD:
            break
        words.append(m)
        last = m.end()
        if len(words) == _MAX_SOURCE or m.group(0).endswith("."):
            break
    if not words:
        return
    start, end = words[0].start(), words[-1].start() + len(words[-1].group(0).rstrip("."))
    for name in [k for k, v in out.slots.items() if k != "search_query" and v.start >= 0]:
        if out.slots[name].start < end and start < out.slots[name].end:
            del out.slots[name]
    _set_query(out, text, start, end, slot.confidence)


# words of the request itself, which a capital does not make part of a title ("Please Play ...")
_NEVER_TITLE = frozenset(
    (
        "play", "playing", "put", "listen", "watch", "hear", "stream", "queue", "throw", "find", "search",
        "look", "start", "please", "i", "i'd", "let's", "can", "could",
    )
)  # fmt: skip


def _capital_in_title(text: str, start: int, word: str) -> bool:
    """A capitalized small word belongs to the title after it: "The" anywhere, others ("A", "Have
    You") inside the sentence, not as its first word, unless they are words of the request."""
    if word == "The":
        return True
    first = WORD.search(text)
    return first is not None and start > first.start() and word.lower() not in _NEVER_TITLE


def _grow_query_left(out: SlotCollector, text: str, slot: SlotValue) -> None:
    """ "Velvet" + tagged "Harbor": capitalized untagged words just before the query that are not the
    verb or a media class word belong to it (a title in title case), small words too ("Like A"
    of "Like A Hurricane") unless they open the sentence or are words of the request."""
    if slot.start < 0:
        return
    taken = [(v.start, v.end) for k, v in out.slots.items() if k != "search_query" and v.start >= 0]
    start = slot.start
    for m in reversed(list(WORD.finditer(text, 0, slot.start))):
        word = m.group(0)
        if (
            text[m.end() : start].strip()
            or not word[:1].isupper()  # "from", "my", "something": not the title's
            or (word.lower() in _QUERY_STOP and not _capital_in_title(text, m.start(), word))
            or word.lower() in MEDIA_BY_WORD
            or any(a < m.end() and m.start() < b for a, b in taken)
        ):
            break
        start = m.start()
    if start != slot.start:
        _set_query(out, text, start, slot.end, slot.confidence)


def _split_media_word(out: SlotCollector, text: str) -> None:
    """ "Moonfolk artist" read as one query: a media class word at its end is the media class."""
    slot = out.slots["search_query"]
    words = str(slot.value).split()
    if len(words) < 2 or slot.start < 0 or words[-1].lower() not in MEDIA_BY_WORD:
        return
    if all(w.lower() in _QUERY_STOP | {"my", "our", "your"} for w in words[:-1]):
        return  # "my playlist" is the query itself
    last = words[-1]
    if "media_class" not in out.slots:
        m_start = slot.start + slot.raw.rfind(last)
        out.put(
            "media_class",
            MEDIA_BY_WORD[last.lower()],
            Span(m_start, m_start + len(last), "media_class", 0.5),
            last,
        )
    words = words[:-1]
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    query = " ".join(words)
    q_start = text.find(query, slot.start)
    out.slots["search_query"] = SlotValue(query, query, q_start, q_start + len(query), slot.confidence)


_BEFORE_QUERY = re.compile(r"(\w+(?: \w+)?)\s+$")
_AFTER_QUERY = re.compile(r"\s+(\w+(?: \w+)?)")


def _media_word_beside(out: SlotCollector, text: str) -> None:
    """ "put on the album Velvet Harbor": an untagged media class word right before or after the query."""
    slot = out.slots["search_query"]
    if "media_class" in out.slots or slot.start < 0:
        return
    before = _BEFORE_QUERY.search(text, 0, slot.start)
    after = _AFTER_QUERY.match(text, slot.end)
    for m in (before, after):
        if m is None:
            continue
        words = m.group(1).lower().split()
        for cand in (" ".join(words), words[-1] if m is before else words[0]):
            if cand in MEDIA_BY_WORD:
                offset = m.group(1).lower().rfind(cand) if m is before else m.group(1).lower().find(cand)
                start = m.start(1) + offset
                span = Span(start, start + len(cand), "media_class", 0.5)
                out.put("media_class", MEDIA_BY_WORD[cand], span, text[start : start + len(cand)])
                return
