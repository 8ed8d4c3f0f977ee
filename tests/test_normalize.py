"""Spoken values -> numbers, percentages, durations, colors and steps."""

from __future__ import annotations

import pytest

from edge_agent.nlu import normalize as nz


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("fifty", 50),
        ("one hundred", 100),
        ("a hundred", 100),
        ("one hundred and five", 105),
        ("twenty two", 22),
        ("twenty-two", 22),
        ("twenty two and a half", 22.5),
        ("twenty point five", 20.5),
        ("20.5", 20.5),
        ("1/2", 0.5),
        ("three quarters", 0.75),
        ("seventy", 70),
        ("zero", 0),
        ("nineteen", 19),
    ],
)
def test_parse_number(text: str, value: float) -> None:
    assert nz.parse_number(text) == value


def test_parse_number_rejects_text_with_other_words() -> None:
    assert nz.parse_number("fifty lamps") is None
    assert nz.parse_number("kitchen") is None
    assert nz.parse_number("") is None


@pytest.mark.parametrize(("text", "value"), [("for", 4), ("to", 2), ("too", 2), ("For", 4), (" too ", 2)])
def test_a_lone_number_word_homophone_is_its_digit(text: str, value: int) -> None:
    assert nz.find_number(text) == value
    assert nz.parse_temperature(text) == value  # a slot span of one word, as the model may tag it


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("set a timer for five minutes", 5),
        ("turn it to twenty two", 22),
        ("twenty for", 20),  # a homophone never extends a number
        ("for ten", 10),
        ("ten to", 10),
        ("too warm, make it nineteen", 19),
        ("set it to for", None),  # inside a phrase a homophone is never a number
        ("for the bedroom", None),
    ],
)
def test_number_word_homophones_inside_a_phrase_are_words(text: str, value: int | None) -> None:
    assert nz.find_number(text) == value


def test_parse_number_never_reads_a_homophone() -> None:
    assert nz.parse_number("for") is None
    assert nz.parse_number("to") is None
    assert nz.parse_number("twenty for") is None


def test_find_number_inside_a_sentence() -> None:
    assert nz.find_number("set it to forty five please") == 45
    assert nz.find_number("no numbers here") is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("fifty percent", 50),
        ("50%", 50),
        ("one hundred percent", 100),
        ("90", 90),
        ("150 percent", 100),
        ("half", 50),
        ("max", 100),
        ("high", 100),
        ("low", 33),
    ],
)
def test_parse_percentage(text: str, value: int) -> None:
    assert nz.parse_percentage(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("max", 100),
        ("the maximum", 100),
        ("full brightness", 100),
        ("the highest", 100),
        ("minimum", 1),
        ("lowest", 1),
        ("half", 50),
        ("twenty five percent", 25),
        ("7%", 7),
    ],
)
def test_parse_brightness(text: str, value: int) -> None:
    assert nz.parse_brightness(text) == value


def test_parse_brightness_without_a_value() -> None:
    assert nz.parse_brightness("cozy") is None


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("5 minutes", {"minutes": 5}),
        ("five minute", {"minutes": 5}),
        ("5-minute", {"minutes": 5}),
        ("1 hour and 30 seconds", {"hours": 1, "seconds": 30}),
        ("5 minute 10 second", {"minutes": 5, "seconds": 10}),
        ("1 hour 15 minute 30 second", {"hours": 1, "minutes": 15, "seconds": 30}),
        ("half an hour", {"minutes": 30}),
        ("1/2 an hour", {"minutes": 30}),
        ("half a minute", {"seconds": 30}),
        ("an hour and a half", {"hours": 1, "minutes": 30}),
        ("one and a half hours", {"hours": 1, "minutes": 30}),
        ("1 and a 1/2 hours", {"hours": 1, "minutes": 30}),
        ("5 and a half minutes", {"minutes": 5, "seconds": 30}),
        ("1.5 hours", {"hours": 1, "minutes": 30}),
        ("a quarter of an hour", {"minutes": 15}),
        ("three quarters of an hour", {"minutes": 45}),
        ("90 seconds", {"seconds": 90}),
        ("two hrs and 20 mins", {"hours": 2, "minutes": 20}),
        ("an hour", {"hours": 1}),
        ("twenty five minutes", {"minutes": 25}),
    ],
)
def test_parse_duration(text: str, parts: dict[str, int]) -> None:
    assert nz.parse_duration(text) == parts


def test_parse_duration_without_units() -> None:
    assert nz.parse_duration("pizza") is None
    assert nz.parse_duration("5") is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("22 degrees", 22),
        ("twenty two and a half degrees", 22.5),
        ("20.5°", 20.5),
        ("68 degrees fahrenheit", 68),
        ("nineteen", 19),
    ],
)
def test_parse_temperature(text: str, value: float) -> None:
    assert nz.parse_temperature(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [("red", "red"), ("the colour Blue", "blue"), ("Warm White", "warm white"), ("grey", "gray")],
)
def test_parse_color(text: str, value: str) -> None:
    assert nz.parse_color(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("up", "up"),
        ("turn down", "down"),
        ("dim", "down"),
        ("brighter", "up"),
        ("too dark", "up"),
        ("too bright", "down"),
        ("warmer", "up"),
        ("a bit cooler", "down"),
        ("i'm freezing", "up"),
        ("too hot", "down"),
        ("louder", "up"),
        ("too loud", "down"),
        ("turn it down by ten", -10),
        ("raise 20 percent", 20),
        ("lower 2 degrees", -2),
        ("turn the heat down a couple of degrees", -2),
        ("two degrees warmer", 2),
    ],
)
def test_parse_step(text: str, value: str | int) -> None:
    assert nz.parse_step(text) == value


def test_parse_step_without_direction_or_amount() -> None:
    assert nz.parse_step("the kitchen") is None


def test_halfway_and_a_couple() -> None:
    assert nz.parse_percentage("halfway") == 50
    assert nz.find_number("a couple of degrees") == 2
    assert nz.find_number("couple") == 2
