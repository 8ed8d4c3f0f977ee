"""Slots of a custom intent: list values where the utterance says them, wildcards by aligning the
utterance to the intent's example sentences, numbers of a range, the home's names and areas."""

from __future__ import annotations

from typing import Any

import pytest

from edge_agent.nlu.custom import CustomSentences, align, custom_slots, parse_custom_sentences
from edge_agent.nlu.home import Home

DOC: dict[str, Any] = {
    "language": "en",
    "intents": {
        "SetAlarm": {"data": [{"sentences": ["wake me up at {time}", "set an alarm for {time} [please]"]}]},
        "PlayAlbum": {"data": [{"sentences": ["play {album} by {artist}", "put on {album}{artist}"]}]},
        "Paint": {"data": [{"sentences": ["paint [the wall] {color}", "set fan speed to {speed}"]}]},
        "Clean": {"data": [{"sentences": ["vacuum (the|my) {area}", "dust {name}"]}]},
    },
    "lists": {
        "time": {"wildcard": True},
        "album": {"wildcard": True},
        "artist": {"wildcard": True},
        "color": {
            "values": [
                "red",
                {"in": "navy blue", "out": "navy"},
                {"in": "(sky|light) blue", "out": "skyblue"},
            ]
        },
        "speed": {"range": {"from": 1, "to": 5, "multiplier": 20}},
    },
}


@pytest.fixture(scope="module")
def sentences() -> CustomSentences:
    return parse_custom_sentences([("f.yaml", DOC)])


def _slots(sentences: CustomSentences, text: str, intent: str, **kw: Any) -> dict[str, Any]:
    ranked = [e for e in sentences.examples if e.intent == intent]
    found = custom_slots(text, intent, ranked, sentences, **kw)
    for slot in found.values():
        if slot.start >= 0:
            assert text[slot.start : slot.end] == slot.raw
    return {name: slot.value for name, slot in found.items()}


def test_a_wildcard_is_read_between_the_words_that_surround_it(sentences: CustomSentences) -> None:
    assert _slots(sentences, "get me up at six thirty", "SetAlarm") == {"time": "six thirty"}
    assert _slots(sentences, "could you set an alarm for 7 am please", "SetAlarm") == {"time": "7 am"}
    assert _slots(sentences, "play kind of blue by miles davis", "PlayAlbum") == {
        "album": "kind of blue",
        "artist": "miles davis",
    }


def test_an_unanchored_or_unsplittable_wildcard_stays_empty(sentences: CustomSentences) -> None:
    assert _slots(sentences, "tomorrow morning", "SetAlarm") == {}
    example = next(e for e in sentences.examples if e.text.startswith("put on"))
    assert align("put on kind of blue miles davis", example).spans == {}  # two references side by side


def test_list_values_give_their_out_value(sentences: CustomSentences) -> None:
    assert _slots(sentences, "Paint the wall NAVY BLUE", "Paint") == {"color": "navy"}
    assert _slots(sentences, "make it light blue", "Paint") == {"color": "skyblue"}
    assert _slots(sentences, "paint it reddish", "Paint") == {}  # whole words only


def test_a_range_number_in_words_or_digits_times_its_multiplier(sentences: CustomSentences) -> None:
    assert _slots(sentences, "set the fan speed to three", "Paint") == {"speed": 60}
    assert _slots(sentences, "fan speed 2", "Paint") == {"speed": 40}
    assert _slots(sentences, "set fan speed to 9", "Paint") == {}  # out of range


def test_home_lists_resolve_against_the_home(sentences: CustomSentences) -> None:
    home = Home.from_dict(
        {
            "areas": ["Living Room"],
            "entities": [{"name": "Book Shelf", "domain": "switch", "area": "Living Room"}],
        }
    )
    assert _slots(sentences, "vacuum the living room", "Clean", home=home) == {"area": "Living Room"}
    assert _slots(sentences, "dust the bookshelf", "Clean", home=home) == {"name": "Book Shelf"}
    assert _slots(sentences, "vacuum my garage", "Clean", home=home) == {"area": "garage"}  # unknown: raw
    assert _slots(sentences, "vacuum my garage", "Clean") == {"area": "garage"}  # no home: raw
