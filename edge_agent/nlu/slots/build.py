"""``build_slots``: tagged spans -> final slots (places, things, values, names, state, context),
plus ``home_supports`` and ``refine_intent`` used by the recognizer."""

from __future__ import annotations

import re
from collections.abc import Sequence

from edge_agent.nlu import normalize as nz
from edge_agent.nlu.home import Entity, Home
from edge_agent.nlu.slots.collector import SlotCollector, slot_overlaps
from edge_agent.nlu.slots.media import fill_media_query, media_word_starts
from edge_agent.nlu.slots.spans import (
    PLACE_SLOTS,
    group_spans,
    grow_names_right,
    grow_spans,
    home_mentions,
    merge_pieces,
    place_after_noun,
    repair_names,
    run_titles_on,
    snap_to_words,
    timer_spans,
    trim_span_edges,
)
from edge_agent.nlu.slots.words import (
    AWAY_WORDS,
    BINARY_BY_WORD,
    BINARY_CLASSES,
    CONTEXT_INTENTS,
    COVER_BY_WORD,
    DOMAIN_BY_WORD,
    HOME_WORDS,
    INTENT_DOMAINS,
    MEDIA_BY_WORD,
    STATE_CLASSES,
    TIMER_INTENTS,
    class_word,
    device_class_for,
    is_global_request,
    lookup_word,
    mentions_here,
    spoken_device_words,
    state_value,
    word_key,
    word_kind,
)
from edge_agent.records.intent import SlotValue, Span


def build_slots(
    text: str,
    intent: str,
    spans: list[Span],
    home: Home | None,
    context_area: str | None,
    repair: bool = True,
) -> dict[str, SlotValue]:
    """Final slots for one recognized utterance (see module docstring).

    ``repair=False`` keeps only what a tagger cannot know: spans snapped to word boundaries,
    values normalized, names, areas and lists resolved against the home, the satellite's area.
    It skips the span repairs (re-aligning spans to home names, growing and merging them, slots
    filled from untagged words), so that the model's own slot accuracy can be measured."""
    spans = snap_to_words(text, spans)
    if not repair:
        return _normalized_only(text, intent, spans, home, context_area)
    spans = run_titles_on(text, trim_span_edges(text, spans), home)
    spans = grow_names_right(text, intent, place_after_noun(text, intent, spans))
    if home is not None:
        spans = repair_names(text, intent, list(spans), home)
    if intent in TIMER_INTENTS:
        spans = timer_spans(text, intent, list(spans), home)
    spans = grow_spans(text, spans, home)
    groups = group_spans(text, spans)
    out = SlotCollector()
    _places(out, groups, home)
    _things(out, groups, intent, home)
    _values(out, text, groups)
    _names(out, groups, intent, home, text)
    if home is not None:
        _prefer_home_entity(out, text, intent, groups, home)
    if intent in ("HassTurnOn", "HassTurnOff") and "name" not in out.slots:
        domain = out.slots.get("domain")
        if domain is not None and domain.value in ("fan", "lock") and "device_class" not in out.slots:
            out.slots["name"] = SlotValue("all", domain.raw, domain.start, domain.end, domain.confidence)
    if home is not None:
        _fill_from_home(out, text, intent, spans, home)
    _implied_light(out, text, intent)
    _untagged_on_off(out, text, intent, spans)
    if intent == "HassMediaSearchAndPlay":
        fill_media_query(out, text, home)
    _context(out, text, intent, context_area)
    return out.slots


def _normalized_only(
    text: str, intent: str, spans: list[Span], home: Home | None, context_area: str | None
) -> dict[str, SlotValue]:
    groups = group_spans(text, spans)
    out = SlotCollector()
    _places(out, groups, home)
    _things(out, groups, intent, home)
    _values(out, text, groups)
    _names(out, groups, intent, home, text)
    _context(out, text, intent, context_area)
    return out.slots


def _places(out: SlotCollector, groups: dict[str, list[tuple[Span, str]]], home: Home | None) -> None:
    for span, raw in groups.get("area", [])[:1]:
        area = home.resolve_area(raw) if home else None
        floor = home.resolve_floor(raw, fuzzy=False) if home and area is None else None
        if floor is not None:
            out.put("floor", floor, span, raw)
        else:
            out.put("area", area if area is not None else raw, span, raw)
    for span, raw in groups.get("floor", [])[:1]:
        floor = home.resolve_floor(raw) if home else None
        area = home.resolve_area(raw, fuzzy=False) if home and floor is None else None
        if area is not None:
            out.put("area", area, span, raw)
        else:
            out.put("floor", floor if floor is not None else raw, span, raw)


_GENERIC_THINGS = frozenset(
    ("device", "devices", "thing", "things", "anything", "something", "stuff", "gadgets", "appliances")
)


def _things(
    out: SlotCollector, groups: dict[str, list[tuple[Span, str]]], intent: str, home: Home | None
) -> None:
    _state_words_as_class(groups)
    has_state = "state" in groups
    for span, raw in groups.get("device_class", [])[:1]:
        found = device_class_for(raw, intent, has_state)
        if found is not None:
            out.put("domain", found[0], span, raw)
            out.put("device_class", found[1], span, raw)
        else:
            out.put("device_class", word_key(raw).replace(" ", "_"), span, raw)
    for span, raw in groups.get("domain", [])[:1]:
        if word_key(raw) in _GENERIC_THINGS:
            continue  # "which devices are on?" names no kind of device
        domain = lookup_word(DOMAIN_BY_WORD, raw)
        if domain is None and "device_class" not in out.slots:
            found = device_class_for(raw, intent, has_state)
            if found is not None:  # "batteries" tagged as a domain word
                out.put("domain", found[0], span, raw)
                out.put("device_class", found[1], span, raw)
                continue
        if domain is None:
            cover = lookup_word(COVER_BY_WORD, raw)
            if cover is not None:
                out.put("domain", "cover", span, raw)
                out.put("device_class", cover, span, raw)
                continue
        out.put("domain", domain if domain is not None else word_key(raw), span, raw)


_NUMBER_TAIL = re.compile(
    r"(?:\s+(?:and\s+a\s+half|point\s+\w+|hundred|thousand|percent|per\s+cent|degrees?|%|°|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b|%|°)+",
    re.IGNORECASE,
)


def _following(text: str, items: list[tuple[Span, str]]) -> list[tuple[Span, str]]:
    """The pieces after the first that continue it with only spaces between."""
    out: list[tuple[Span, str]] = []
    last = items[0][0]
    for span, raw in items[1:]:
        if text[last.end : span.start].strip():
            break
        out.append((span, raw))
        last = span
    return out


def _grow_number(text: str, span: Span) -> tuple[Span, str]:
    """A number cut short by the tagger ("one" of "one hundred percent") takes the rest of it."""
    start, end = max(0, span.start), min(len(text), span.end)
    if nz.find_number(text[start:end]) is not None:
        tail = _NUMBER_TAIL.match(text, end)
        if tail is not None:
            end = tail.end()
    return Span(start, end, span.slot, span.confidence), text[start:end].strip()


def _values(out: SlotCollector, text: str, groups: dict[str, list[tuple[Span, str]]]) -> None:
    for slot, parse in nz.VALUE_PARSERS.items():
        for span, raw in groups.get(slot, [])[:1]:
            if slot != "color":
                span, raw = _grow_number(text, span)
            value = parse(raw)
            out.put(slot, value if value is not None else raw, span, raw)
    for slot in ("brightness_step", "temperature_step", "volume_step"):
        if slot in groups:
            span, raw = merge_pieces(text, groups[slot])
            step = nz.parse_step(raw)
            out.put(slot, step if step is not None else raw, span, raw)
    for slot, prefix in (("duration", ""), ("start_duration", "start_")):
        if slot in groups:
            span, raw = merge_pieces(text, groups[slot])
            parts = nz.parse_duration(raw)
            if parts is None:
                out.put(slot, raw, span, raw)
                continue
            for unit, amount in parts.items():
                out.put(prefix + unit, amount, span, raw)
    for slot in ("item", "search_query", "message", "conversation_command"):
        if slot in groups:  # "Star" + "light Alley": pieces of one title are read together
            span, raw = merge_pieces(text, groups[slot][:1] + _following(text, groups[slot]))
            out.put(slot, raw.strip(" ?.!,"), span, raw)
    for span, raw in groups.get("media_class", [])[:1]:
        media = lookup_word(MEDIA_BY_WORD, raw)
        out.put("media_class", media if media is not None else word_key(raw), span, raw)


def _names(
    out: SlotCollector,
    groups: dict[str, list[tuple[Span, str]]],
    intent: str,
    home: Home | None,
    text: str = "",
) -> None:
    for span, raw in groups.get("timer_name", [])[:1]:
        out.put("name", raw.strip(" ?.!,"), span, raw)
    for span, raw in groups.get("list_name", [])[:1]:
        spoken = re.sub(r"\s+list$", "", raw.strip(" ?.!,"), flags=re.IGNORECASE)
        resolved = home.resolve_list(spoken) if home else None
        out.put("name", resolved if resolved is not None else spoken, span, raw)
    for span, raw in groups.get("name", [])[:1]:
        if intent == "HassGetWeather" or intent in TIMER_INTENTS:
            out.put("name", raw.strip(" ?.!,"), span, raw)
            continue
        entity = home.resolve_entity(raw) if home else None
        allowed = INTENT_DOMAINS.get(intent)
        if entity is not None and allowed is not None and entity.domain not in allowed:
            kind = word_kind(raw, "name")
            if kind != "name":  # "lights" that only resolve to a light *sensor*: a kind of device
                _things(out, {kind: [(Span(span.start, span.end, kind, span.confidence), raw)]}, intent, home)
                continue
        if entity is None and intent == "HassGetState" and "device_class" not in out.slots:
            found = class_word(raw)
            if found is not None:  # "is the flood sensor dry" in a home with no such name: a class
                out.put("domain", found[0], span, raw)
                out.put("device_class", found[1], span, raw)
                continue
        if entity is None and word_kind(raw, "name") != "name":
            # a bare device word tagged as a name ("the living room lights"): a kind, not a name
            kind = word_kind(raw, "name")
            _things(out, {kind: [(Span(span.start, span.end, kind, span.confidence), raw)]}, intent, home)
            continue
        if entity is None:
            out.put("name", raw.strip(" ?.!,"), span, raw)
            continue
        entity = _pick_same_name(home, entity, out, groups) if home else entity
        out.put("name", entity.name, span, raw)
        out.put("domain", entity.domain, span, raw, overwrite=True)
        if entity.device_class:  # the entity's own class, not a loosely tagged word ("amount")
            out.put("device_class", entity.device_class, span, raw, overwrite=True)
    _state(out, groups, intent, text)


def _pick_same_name(
    home: Home, entity: Entity, out: SlotCollector, groups: dict[str, list[tuple[Span, str]]]
) -> Entity:
    """Several entities share a name ("Tablet" battery, "Tablet" connectivity): the spoken class or the
    state word chooses ("is the tablet online?" -> the connectivity one)."""
    same = home.entities_named(entity.name)
    if len(same) < 2:
        return entity
    dc_slot = out.slots.get("device_class")
    if dc_slot is not None:
        for cand in same:
            if cand.device_class == dc_slot.value:
                return cand
    for _, raw in groups.get("state", [])[:1]:
        key = word_key(raw)
        for cand in same:
            cls = BINARY_CLASSES.get(cand.device_class or "")
            if cand.domain == "binary_sensor" and cls is not None and key in cls[1] + cls[2]:
                if dc_slot is not None:
                    del out.slots["device_class"]
                return cand
        for cand in same:
            if STATE_CLASSES.get(key) == cand.device_class:
                if dc_slot is not None:
                    del out.slots["device_class"]
                return cand
    return entity


_PEOPLE_WORDS = re.compile(
    r"\b(who|anyone|anybody|everyone|everybody|someone|somebody|people|persons|residents|family)\b",
    re.IGNORECASE,
)


def _state(
    out: SlotCollector, groups: dict[str, list[tuple[Span, str]]], intent: str, text: str = ""
) -> None:
    domain_slot, dc_slot = out.slots.get("domain"), out.slots.get("device_class")
    domain = domain_slot.value if domain_slot is not None else None
    dc = dc_slot.value if dc_slot is not None else None
    for span, raw in groups.get("state", [])[:1]:
        key = word_key(raw)
        if key in ("locked", "unlocked", "secured") and domain == "cover" and dc == "door":
            domain, dc = "lock", None  # "is every door locked?" asks about locks
            out.put("domain", "lock", span, raw, overwrite=True)
            out.slots.pop("device_class", None)
        if (
            intent == "HassGetState"
            and "name" not in out.slots
            and domain in (None, "person")
            and dc is None
            and key in HOME_WORDS + AWAY_WORDS
            and _PEOPLE_WORDS.search(text)
        ):
            domain = "person"  # "is somebody home?", "who's in?"
            out.put("domain", "person", span, raw)
        if intent == "HassGetState" and "name" not in out.slots and domain != "person":
            implied = STATE_CLASSES.get(key)
            if (
                implied is not None
                and domain in (None, "binary_sensor")
                and not (
                    dc in BINARY_CLASSES and key in BINARY_CLASSES[str(dc)][1] + BINARY_CLASSES[str(dc)][2]
                )
            ):
                domain, dc = "binary_sensor", implied
                out.put("domain", domain, span, raw, overwrite=True)
                out.put("device_class", dc, span, raw, overwrite=True)
        out.put(
            "state",
            state_value(
                raw, domain if isinstance(domain, str) else None, dc if isinstance(dc, str) else None
            ),
            span,
            raw,
        )
    if (
        "state" not in out.slots
        and intent == "HassGetState"
        and domain == "binary_sensor"
        and dc_slot is not None
        and "name" not in out.slots
    ):
        out.put("state", "on", dc_slot_span(dc_slot), dc_slot.raw)  # "is there any smoke?"


def dc_slot_span(slot: SlotValue) -> Span:
    return Span(slot.start, slot.end, "device_class", slot.confidence)


def _context(out: SlotCollector, text: str, intent: str, context_area: str | None) -> None:
    if not context_area or intent not in CONTEXT_INTENTS:
        return
    spoken = {"area", "floor", "name"} & set(out.slots)
    if spoken and not (spoken == {"name"} and out.slots["name"].value == "all" and intent != "HassGetState"):
        return  # a place or a name was spoken; "all" (the fans of the room) still needs the room
    if intent == "HassGetState":
        if not mentions_here(text):
            return
    elif is_global_request(text):
        return
    out.slots["area"] = SlotValue(context_area, "", -1, -1, 1.0)


def _fill_from_home(out: SlotCollector, text: str, intent: str, spans: Sequence[Span], home: Home) -> None:
    """Targets the tagger missed: an untagged, word-exact mention of an entity of a kind this intent
    acts on becomes the name when none was found ("next track on the soundbar"), and an untagged
    mention of an area or floor becomes the place when none was found ("start den cinema mode")."""
    domains = INTENT_DOMAINS.get(intent)
    if domains is None and intent != "HassGetState":
        return
    taken = [(sp.start, sp.end) for sp in spans if sp.slot not in PLACE_SLOTS]
    taken += [(v.start, v.end) for v in out.slots.values() if v.start >= 0]  # where place spans ended up
    for start, end, kind, value in sorted(home_mentions(text, home), key=lambda m: m[0] - m[1]):
        if any(a < end and start < b for a, b in taken):
            continue
        raw = text[start:end]
        span = Span(start, end, kind, 0.5)
        if kind == "name":
            entity = home.resolve_entity(value, fuzzy=False)
            if "name" in out.slots or domains is None or entity is None or entity.domain not in domains:
                continue
            if word_key(raw) in spoken_device_words() and domains == INTENT_DOMAINS["HassTurnOn"]:
                continue  # "turn on the light" is not the entity called "Light"
            if media_word_starts(text, start, end):
                continue  # "tv" of "tv show"
            out.put("name", entity.name, span, raw)
            out.put("domain", entity.domain, span, raw)
            if entity.device_class and "device_class" not in out.slots:
                out.put("device_class", entity.device_class, span, raw)
        elif not {"area", "floor"} & set(out.slots):
            out.put(kind, value, span, raw)
        else:
            continue
        taken.append((start, end))


_LIGHT_VERBS = re.compile(r"\b(light (?:it |them |everything )?up|illuminate)\b", re.IGNORECASE)


def _implied_light(out: SlotCollector, text: str, intent: str) -> None:
    """ "light up the porch" / "illuminate the hall": the verb names the lights."""
    if intent not in ("HassTurnOn", "HassTurnOff") or {"domain", "name"} & set(out.slots):
        return
    m = _LIGHT_VERBS.search(text)
    if m is not None:
        out.put("domain", "light", Span(m.start(), m.end(), "domain", 0.5), m.group(0))


def _state_words_as_class(groups: dict[str, list[tuple[Span, str]]]) -> None:
    """A class word tagged as the state ("is a *contact sensor* open in the loft?") is the device class."""
    if "device_class" in groups or "domain" in groups:
        return
    states = groups.get("state", [])
    for i, (span, raw) in enumerate(states):
        key = word_key(raw)
        if key in BINARY_BY_WORD and key not in STATE_CLASSES and state_value(raw, None, None) == key:
            groups["device_class"] = [(Span(span.start, span.end, "device_class", span.confidence), raw)]
            del states[i]
            if not states:
                del groups["state"]
            return


def _prefer_home_entity(
    out: SlotCollector, text: str, intent: str, groups: dict[str, list[tuple[Span, str]]], home: Home
) -> None:
    """The tagger's name resolves to nothing (or is missing) while the text says an entity's name
    word for word ("what does the Greenhouse Thermometer say", "is the tablet battery low"): that
    entity is the name, with its own domain and class; place and state pieces inside the name are dropped."""
    domains = INTENT_DOMAINS.get(intent, () if intent != "HassGetState" else None)
    if domains == ():
        return
    name = out.slots.get("name")
    if name is not None and (name.value == "all" or home.resolve_entity(str(name.value), fuzzy=False)):
        return
    best: tuple[int, int, Entity] | None = None
    for start, end, kind, value in home_mentions(text, home):
        if kind != "name":
            continue
        entity = home.resolve_entity(value, fuzzy=False)
        if entity is None or (domains is not None and entity.domain not in domains):
            continue
        key = word_key(text[start:end])
        if (
            key in spoken_device_words()
            and " " not in key
            and any(
                slot_overlaps(out.slots[k], start, end) for k in ("domain", "device_class") if k in out.slots
            )
        ):
            continue  # "turn on the light": the word was read as a kind of device; a name of
            # several words that the home has word for word ("the Garage Door") is that entity
        if media_word_starts(text, start, end) or (
            "media_class" in out.slots and slot_overlaps(out.slots["media_class"], start, end)
        ):
            continue
        if best is None or end - start > best[1] - best[0]:
            best = (start, end, entity)
    if best is None:
        return
    start, end, entity = best
    for slot in ("area", "floor"):
        if slot in out.slots and slot_overlaps(out.slots[slot], start, end):
            del out.slots[slot]
    out.slots.pop("state", None)  # read again for this entity's domain and class
    if "state" in groups:
        groups["state"] = [
            (sp, raw) for sp, raw in groups["state"] if not (sp.start < end and start < sp.end)
        ]
    raw = text[start:end]
    span = Span(start, end, "name", name.confidence if name is not None else 0.5)
    chosen = _pick_same_name(home, entity, out, groups)
    for slot in ("name", "domain", "device_class"):
        out.slots.pop(slot, None)
    out.put("name", chosen.name, span, raw)
    out.put("domain", chosen.domain, span, raw)
    if chosen.device_class:
        out.put("device_class", chosen.device_class, span, raw)
    _state(out, groups, intent, text)


_ON_OFF = re.compile(r"(?<![a-z0-9])(on|off)(?![a-z0-9])")


def _untagged_on_off(out: SlotCollector, text: str, intent: str, spans: Sequence[Span]) -> None:
    """ "is any plug still on in the loft?": the untagged on/off of a state question."""
    if intent != "HassGetState" or "state" in out.slots:
        return
    domain = out.slots.get("domain")
    if domain is None or domain.value not in ("light", "switch", "fan", "media_player"):
        return
    taken = [(sp.start, sp.end) for sp in spans]
    for m in _ON_OFF.finditer(text.lower()):
        if not any(a < m.end() and m.start() < b for a, b in taken):
            out.put("state", m.group(1), Span(m.start(), m.end(), "state", 0.5), text[m.start() : m.end()])
            return


def home_supports(text: str, intent: str, home: Home | None) -> bool:
    """The text says, word for word, the name of one of the home's entities that ``intent`` can act
    on, and that name is not a bare device word ("the Garden Gate", "the tablet" of a home with a
    Tablet; not "a fan"). The recognizer may use this as evidence for a borderline in-scope reading."""
    if home is None:
        return False
    domains = INTENT_DOMAINS.get(intent)
    if domains is None and intent != "HassGetState":
        return False
    for start, end, kind, value in home_mentions(text, home):
        if kind != "name" or word_key(text[start:end]) in spoken_device_words():
            continue
        entity = home.resolve_entity(value, fuzzy=False)
        if entity is not None and (domains is None or entity.domain in domains):
            return True
    return False


_SIBLING_INTENTS: dict[tuple[str, str], str] = {
    ("HassLawnMowerStartMowing", "vacuum"): "HassVacuumStart",
    ("HassVacuumStart", "lawn_mower"): "HassLawnMowerStartMowing",
    ("HassLawnMowerDock", "vacuum"): "HassVacuumReturnToBase",
    ("HassVacuumReturnToBase", "lawn_mower"): "HassLawnMowerDock",
    ("HassClimateGetTemperature", "sensor"): "HassGetState",
}


def refine_intent(intent: str, slots: dict[str, SlotValue], home: Home | None) -> str:
    """The sibling intent when the resolved entity cannot do what was recognized: "start Robbie" read
    as mowing while Robbie is a vacuum -> HassVacuumStart; the temperature of a named *sensor* is a
    state question. Only entities that resolve in the home count."""
    name = slots.get("name")
    if home is None or name is None:
        return intent
    entity = home.resolve_entity(str(name.value), fuzzy=False)
    if entity is None:
        return intent
    return _SIBLING_INTENTS.get((intent, entity.domain), intent)
