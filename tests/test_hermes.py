"""Hermes NLU payloads, checked field by field with rhasspy-hermes' own message classes.

rhasspy-hermes is a test-only dependency installed without its old pins:
``pip install --no-deps rhasspy-hermes==0.6.2 && pip install "dataclasses-json>=0.5.7"``.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rhasspyhermes.nlu import NluError, NluIntent, NluIntentNotRecognized, NluIntentParsed
from rhasspyhermes.nlu import NluQuery as RhasspyQuery

from edge_agent.errors import PayloadError
from edge_agent.messages import hermes
from edge_agent.messages.hermes import NluQuery, error_for_payload, error_message, intent_topic, respond
from edge_agent.records.intent import IntentResult, SlotValue


def _span(text: str, raw: str) -> tuple[int, int]:
    start = text.index(raw)
    return start, start + len(raw)


def _slot(text: str, raw: str, value: object, conf: float = 0.9) -> SlotValue:
    start, end = _span(text, raw)
    return SlotValue(value=value, raw=raw, start=start, end=end, confidence=conf)


LIGHT_TEXT = "set the kitchen light to fifty percent"
LIGHT = IntentResult(
    text=LIGHT_TEXT,
    intent="HassLightSet",
    confidence=0.9731,
    slots={
        "area": _slot(LIGHT_TEXT, "kitchen", "Kitchen", 0.97),
        "domain": _slot(LIGHT_TEXT, "light", "light", 0.95),
        "brightness": _slot(LIGHT_TEXT, "fifty percent", 50, 0.91),
    },
)


def _query(**extra: object) -> NluQuery:
    body: dict[str, object] = {"input": LIGHT_TEXT, "siteId": "kitchen", "id": "q-1",
                               "sessionId": "s-9", "customData": "flow-42"}
    body.update(extra)
    return NluQuery.from_payload(orjson.dumps(body))


def test_query_parses_every_field_rhasspy_sends() -> None:
    theirs = RhasspyQuery(
        input="turn off the fan", site_id="bedroom", id="abc", intent_filter=["HassTurnOff"],
        session_id="sess", wakeword_id="porcupine", lang="en", custom_data="cd", asr_confidence=0.8,
    )
    ours = NluQuery.from_payload(theirs.payload().encode())
    assert RhasspyQuery.topic() == NluQuery.TOPIC
    assert (ours.input, ours.site_id) == ("turn off the fan", "bedroom")
    assert (ours.id, ours.session_id) == ("abc", "sess")
    assert ours.intent_filter == ("HassTurnOff",)
    assert (ours.wakeword_id, ours.lang) == ("porcupine", "en")
    assert (ours.custom_data, ours.asr_confidence) == ("cd", 0.8)


def test_query_defaults_match_hermes() -> None:
    ours = NluQuery.from_payload(RhasspyQuery(input="what time is it").payload().encode())
    assert ours.site_id == "default"
    assert ours.id is None and ours.session_id is None and ours.custom_data is None
    assert ours.intent_filter is None
    assert NluQuery.from_payload(b'{"input": "x", "intentFilter": []}').intent_filter is None


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"siteId": "a"}', "'input'"),
        (b'{"input": 5}', "'input'"),
        (b'{"input": "x", "siteId": ""}', "'siteId'"),
        (b'{"input": "x", "intentFilter": "HassTurnOn"}', "'intentFilter'"),
        (b'{"input": "x", "intentFilter": [1]}', "'intentFilter'"),
        (b'{"input": "x", "id": 7}', "'id'"),
        (b'{"input": "x", "asrConfidence": "high"}', "'asrConfidence'"),
    ],
)
def test_bad_queries_name_the_field(payload: bytes, field: str) -> None:
    with pytest.raises(PayloadError, match=field):
        NluQuery.from_payload(payload)


def test_overlong_input_is_refused() -> None:
    body = orjson.dumps({"input": "a" * (hermes.MAX_INPUT_CHARS + 1)})
    with pytest.raises(PayloadError, match="longer than"):
        NluQuery.from_payload(body)


def test_recognized_intent_parses_as_rhasspy_nlu_intent() -> None:
    query = _query()
    [msg] = respond(query, LIGHT)
    assert msg.topic == NluIntent.topic(intent_name="HassLightSet")
    assert NluIntent.is_topic(msg.topic) and NluIntent.get_intent_name(msg.topic) == "HassLightSet"
    parsed = NluIntent.from_json(msg.payload)
    assert parsed.input == LIGHT_TEXT and parsed.raw_input == LIGHT_TEXT
    assert parsed.site_id == "kitchen" and parsed.id == "q-1" and parsed.session_id == "s-9"
    assert parsed.custom_data == "flow-42"
    assert parsed.intent.intent_name == "HassLightSet"
    assert parsed.intent.confidence_score == pytest.approx(0.9731)
    assert parsed.slots is not None
    by_name = {s.slot_name: s for s in parsed.slots}
    assert set(by_name) == {"area", "domain", "brightness"}
    for name, ours in LIGHT.slots.items():
        slot = by_name[name]
        assert slot.raw_value == ours.raw
        assert slot.range is not None
        assert (slot.start, slot.end) == (ours.start, ours.end)
        assert LIGHT_TEXT[slot.start:slot.end] == slot.raw_value
        assert slot.confidence == pytest.approx(ours.confidence)
    assert by_name["brightness"].value == {"kind": "Percentage", "value": 50}
    assert by_name["brightness"].entity == "snips/percentage"
    assert by_name["area"].value == {"kind": "Custom", "value": "Kitchen"}
    assert by_name["area"].entity == "area"
    # Rhasspy's own conversion reads the values back
    assert parsed.to_rhasspy_dict()["slots"] == {"area": "Kitchen", "domain": "light", "brightness": 50}


def test_slot_kinds_numbers_durations_temperatures() -> None:
    text = "make it two degrees warmer in five minutes at 21.5 c"
    result = IntentResult(
        text=text, intent="EdgeClimateSetRelative", confidence=0.8,
        slots={
            "temperature_step": _slot(text, "two degrees warmer", 2),
            "minutes": _slot(text, "five minutes", 5),
            "temperature": _slot(text, "21.5 c", {"value": 21.5, "unit": "C"}),
            "volume_step": SlotValue(value=-10, raw="down", start=-1, end=-1, confidence=0.7),
        },
    )
    [msg] = respond(NluQuery(input=text), result)
    slots = {s.slot_name: s for s in (NluIntent.from_json(msg.payload).slots or [])}
    assert slots["temperature_step"].value == {"kind": "Number", "value": 2}
    duration = slots["minutes"].value
    assert duration["kind"] == "Duration" and duration["minutes"] == 5 and duration["hours"] == 0
    assert duration["precision"] == "Exact" and slots["minutes"].entity == "snips/duration"
    assert slots["temperature"].value == {"kind": "Temperature", "value": 21.5, "unit": "celsius"}
    # a slot filled from context has no range in the text
    assert slots["volume_step"].range is None and slots["volume_step"].value["value"] == -10


def test_intent_parsed_is_published_first_when_asked() -> None:
    msgs = respond(_query(), LIGHT, intent_parsed=True)
    assert [m.topic for m in msgs] == [NluIntentParsed.topic(), "hermes/intent/HassLightSet"]
    parsed = NluIntentParsed.from_json(msgs[0].payload)
    assert parsed.intent.intent_name == "HassLightSet" and parsed.id == "q-1" and parsed.session_id == "s-9"


@pytest.mark.parametrize(
    ("query_extra", "result", "enabled"),
    [
        ({}, IntentResult(text=LIGHT_TEXT, intent=None, confidence=0.2), None),  # out of scope
        ({"intentFilter": ["HassTurnOn", "HassTurnOff"]}, LIGHT, None),  # filtered out by the query
        ({}, LIGHT, frozenset({"HassTurnOn"})),  # disabled by runtime control
    ],
)
def test_not_recognized_echoes_ids(query_extra: dict[str, object], result: IntentResult,
                                   enabled: frozenset[str] | None) -> None:
    [msg] = respond(_query(**query_extra), result, enabled=enabled)
    assert msg.topic == NluIntentNotRecognized.topic()
    parsed = NluIntentNotRecognized.from_json(msg.payload)
    assert parsed.input == LIGHT_TEXT and parsed.site_id == "kitchen"
    assert parsed.id == "q-1" and parsed.session_id == "s-9" and parsed.custom_data == "flow-42"


def test_intent_filter_that_allows_the_intent_answers_it() -> None:
    [msg] = respond(_query(intentFilter=["HassLightSet"]), LIGHT)
    assert msg.topic == "hermes/intent/HassLightSet"


def test_error_payloads_parse_as_nlu_error() -> None:
    msg = error_message("model failed", site_id="hall", session_id="s1", context="turn on")
    parsed = NluError.from_json(msg.payload)
    assert msg.topic == NluError.topic()
    assert (parsed.error, parsed.site_id) == ("model failed", "hall")
    assert (parsed.session_id, parsed.context) == ("s1", "turn on")

    garbage = b'{"input": 3, "siteId": "porch", "sessionId": "s2"}'
    with pytest.raises(PayloadError) as info:
        NluQuery.from_payload(garbage)
    parsed = NluError.from_json(error_for_payload(str(info.value), garbage).payload)
    assert parsed.site_id == "porch" and parsed.session_id == "s2" and "'input'" in parsed.error
    assert parsed.context == garbage.decode()

    huge = error_for_payload("too big", b"\xff" * 5000)
    context = NluError.from_json(huge.payload).context
    assert context is not None and len(context) <= 513
    assert NluError.from_json(huge.payload).site_id == "default"


@pytest.mark.parametrize("name", ["", "a/b", "Hass+", "x#"])
def test_intent_names_that_are_not_a_topic_level_are_refused(name: str) -> None:
    with pytest.raises(PayloadError):
        intent_topic(name)


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(text=_text, site=_text, qid=st.none() | _text, custom=st.none() | _text, conf=st.floats(0, 1))
def test_any_query_round_trips_through_rhasspy(text: str, site: str, qid: str | None,
                                               custom: str | None, conf: float) -> None:
    query = NluQuery.from_payload(
        RhasspyQuery(input=text, site_id=site, id=qid, custom_data=custom).payload().encode()
    )
    result = IntentResult(text=text, intent="HassNevermind", confidence=conf)
    parsed = NluIntent.from_json(respond(query, result)[0].payload)
    assert (parsed.input, parsed.site_id, parsed.id, parsed.custom_data) == (text, site, qid, custom)
    assert parsed.intent.confidence_score == pytest.approx(round(conf, 4))
    assert parsed.slots == []
