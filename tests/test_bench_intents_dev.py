"""bench/intents_dev.py's paired slot comparison: one entry per expected slot, counted as the
bench's own slot accuracy counts it."""

from __future__ import annotations

import pytest
from benchload import load_bench

bench = load_bench("intents_dev")

DEV = [
    {
        "text": "turn on the kitchen light",
        "intent": "HassTurnOn",
        "slots": {"area": "Kitchen", "domain": "light"},
    },
    {"text": "set a timer for 5 minutes", "intent": "HassStartTimer", "slots": {"minutes": 5}},
    {"text": "an intent we do not have", "intent": "SomeoneElsesIntent", "slots": {"x": "y"}},
]


def _slot(value: object) -> dict[str, object]:
    return {"value": value}


def test_slot_rights_one_entry_per_expected_slot_of_known_intents() -> None:
    out = [
        {"intent": "HassTurnOn", "slots": {"area": _slot("kitchen"), "domain": _slot("switch")}},
        {"intent": "HassStartTimer", "slots": {"minutes": _slot("5")}},
        {"intent": None, "slots": {}},
    ]
    # case-insensitive text, numbers compared as numbers, the unknown intent's slot not counted
    assert bench.slot_rights(DEV, out) == [True, False, True]


def test_slot_rights_rejected_request_gets_its_slots_wrong() -> None:
    out = [{"intent": None}, {"intent": None, "slots": None}, {"intent": None}]
    assert bench.slot_rights(DEV, out) == [False, False, False]


def test_report_paired_slots_counts_the_discordant_slots(capsys: pytest.CaptureFixture[str]) -> None:
    a = [
        {"intent": "HassTurnOn", "slots": {"area": _slot("Kitchen"), "domain": _slot("light")}},
        {"intent": "HassStartTimer", "slots": {"minutes": _slot(5)}},
        {"intent": None},
    ]
    b = [{"intent": None}, {"intent": "HassStartTimer", "slots": {"minutes": _slot(5)}}, {"intent": None}]
    bench.report_paired_slots(DEV, a, b)
    line = capsys.readouterr().out
    assert "a 3/3, b 1/3" in line
    assert "only a right 2, only b right 0" in line


def test_print_paired_splits_scope_and_counts_discordant_requests(capsys: pytest.CaptureFixture[str]) -> None:
    cli = load_bench("_cli")
    expected = ["HassTurnOn", "HassTurnOn", "HassTurnOff", None, None]
    a = [{"intent": x} for x in ("HassTurnOn", None, "HassTurnOff", None, None)]
    b = [{"intent": x} for x in (None, "HassTurnOn", None, None, "HassTurnOn")]
    cli.print_paired("set", expected, a, b)
    out = capsys.readouterr().out
    assert "set in scope: a 2/3, b 1/3; only a right 2, only b right 1, p = 1.0" in out
    assert "set out of scope: a 2/2, b 1/2; only a right 1, only b right 0, p = 1.0" in out


def test_score_says_why_each_missed_slot_was_missed(capsys: pytest.CaptureFixture[str]) -> None:
    score = bench.Score()
    expected = {"area": "Kitchen", "domain": "light"}
    score.add("a", "HassTurnOn", expected, {"intent": "HassTurnOn", "slots": {"area": _slot("kitchen")}})
    score.add("b", "HassTurnOn", expected, {"intent": None})
    score.add("c", "HassTurnOn", expected, {"intent": "HassTurnOff", "slots": {"area": _slot("Kitchen")}})
    # missed: domain with the right intent; both of the rejected request; domain of the other intent
    assert score.slot_causes == {"right intent": 1, "rejected": 2, "other intent": 1}
    score.report("t", top=0)
    out = capsys.readouterr().out
    assert "slot accuracy   33.33%  (2/6 expected slots)" in out
    missed = "slots missed    4: 2 of rejected requests, 1 of requests given another intent"
    assert missed + ", 1 with the right intent" in out
