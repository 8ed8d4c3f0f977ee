"""bench/intents_sgd_kinds.py: SGD's place slot, the cross-source slot figure."""

from __future__ import annotations

import pytest
from benchload import load_bench

from firmware_tools.data.intents import IntentExample
from firmware_tools.data.sgd import SgdRow

bench = load_bench("intents_sgd_kinds")


def _example(text: str, intent: str | None) -> IntentExample:
    return IntentExample(text=text, intent=intent, spans=[], slots={}, spans_known=False, origin="sgd")


def test_a_weather_row_naming_one_city_is_scored_on_its_place(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        SgdRow(
            "weather in Stinson Beach today",
            "Weather_1",
            "GetWeather",
            2,
            (("city", "Stinson Beach"), ("date", "today")),
        ),
        SgdRow("rain in Paris or Rome?", "Weather_1", "GetWeather", 2, (("city", "Paris"), ("city", "Rome"))),
        SgdRow("will it rain", "Weather_1", "GetWeather", 0, ()),
        SgdRow("weather in Oslo", "Weather_1", "GetWeather", 1, (("city", "Oslo"),)),
    ]
    examples = [_example(r.text, "HassGetWeather") for r in rows]
    assert [bench.place_of(r, e) for r, e in zip(rows, examples, strict=True)] == [
        "Stinson Beach",
        None,
        None,
        "Oslo",
    ]
    # a row the mapping puts out of scope has no place to score
    assert bench.place_of(rows[0], _example(rows[0].text, None)) is None
    out = [
        {"intent": "HassGetWeather", "slots": {"name": {"value": "stinson beach!"}}},
        {"intent": "HassGetWeather", "slots": {}},
        {"intent": None},
        {"intent": None, "slots": {"name": {"value": "Oslo"}}},
    ]
    bench._print_places(rows, examples, out)
    printed = capsys.readouterr().out
    # two rows scored, both right (case and punctuation aside); one of them recognized
    assert "100.00% (2/2); of those recognized: 100.00% (1/1)" in printed


def test_a_film_row_naming_one_title_is_scored_on_its_query(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        SgdRow("play Night Harbor for me", "Media_3", "PlayMovie", 1, (("title", "Night Harbor"),)),
        SgdRow("i want to watch it now", "Media_3", "PlayMovie", 0, ()),
        SgdRow("weather in Oslo", "Weather_1", "GetWeather", 1, (("city", "Oslo"),)),
    ]
    examples = [
        _example(rows[0].text, "HassMediaSearchAndPlay"),
        _example(rows[1].text, "HassMediaSearchAndPlay"),
        _example(rows[2].text, "HassGetWeather"),
    ]
    assert [bench.title_of(r, e) for r, e in zip(rows, examples, strict=True)] == ["Night Harbor", None, None]
    out = [
        {"intent": "HassMediaSearchAndPlay", "slots": {"search_query": {"value": "night harbor"}}},
        {"intent": None},
        {"intent": "HassGetWeather", "slots": {"name": {"value": "Bergen"}}},
    ]
    bench._print_slots(rows, examples, out)
    printed = capsys.readouterr().out
    assert "place slot (weather rows naming one city): 0.00% (0/1)" in printed
    title = "title slot (film rows naming one title): 100.00% (1/1); of those recognized: 100.00% (1/1)"
    assert title in printed
