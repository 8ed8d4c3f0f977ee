"""Custom-sentences files: Home Assistant's format read with hassil's parser, expanded into
example sentences, and every problem reported with the file, the intent and what is wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from edge_agent.nlu.custom import CustomSentencesError, load_custom_sentences, parse_custom_sentences
from edge_agent.nlu.custom.sentences import MAX_PER_TEMPLATE, sentence_files

ROOT = Path(__file__).resolve().parent.parent


def _doc(intents: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"language": "en", "intents": intents, **top}


def _texts(data: dict[str, Any], intent: str | None = None) -> list[str]:
    found = parse_custom_sentences([("f.yaml", data)])
    return [e.text for e in found.examples if intent is None or e.intent == intent]


def test_alternatives_optionals_rules_and_permutations_are_expanded() -> None:
    data = _doc(
        {
            "FeedCat": {"data": [{"sentences": ["(feed|give food to) [the] <pet>", "(a;b) now"]}]},
        },
        expansion_rules={"pet": "(cat|kitty)"},
    )
    texts = _texts(data)
    assert set(texts) >= {"feed the cat", "feed kitty", "give food to the kitty", "give food to cat"}
    assert {"a b now", "b a now"} <= set(texts)
    assert len(texts) == len(set(texts))  # no duplicates


def test_lists_values_ranges_wildcards_and_the_homes_lists() -> None:
    data = _doc(
        {
            "Paint": {"data": [{"sentences": ["paint it {color}", "speed {speed}", "level {0..10:level}"]}]},
            "Alarm": {"data": [{"sentences": ["wake me up at {time}", "lights in {area} for {name}"]}]},
        },
        lists={
            "color": {"values": ["red", {"in": "dark blue", "out": "navy"}, "(light|pale) green"]},
            "speed": {"range": {"from": 1, "to": 5}},
            "time": {"wildcard": True},
        },
    )
    found = parse_custom_sentences([("f.yaml", data)])
    paint = {e.text: e for e in found.examples if e.intent == "Paint"}
    assert {"paint it red", "paint it dark blue", "paint it light green"} <= set(paint)
    values = {p.text: p.value for e in paint.values() for p in e.pieces if p.slot == "color"}
    assert values == {"red": "red", "dark blue": "navy", "light green": "light green"}  # no out: the words
    assert "speed 1" in paint and "level 0" in paint
    alarm = [e for e in found.examples if e.intent == "Alarm"]
    assert [e.text for e in alarm] == ["wake me up at time", "lights in kitchen for lamp"]
    assert [p.slot for p in alarm[0].pieces if p.slot] == ["time"]
    assert found.lists["time"].kind == "wildcard" and found.lists["area"].kind == "home"
    assert found.lists["level:range"].kind == "range" and found.lists["level:range"].stop == 10
    assert dict(found.refs)["Paint"] == (("color", "color"), ("speed", "speed"), ("level", "level:range"))


def test_expansion_is_capped_per_template_and_deterministic() -> None:
    many = {"values": [f"thing{i}" for i in range(40)]}
    data = _doc(
        {"Big": {"data": [{"sentences": ["(a|b|c|d) (e|f|g|h) [x] {things}"]}]}}, lists={"things": many}
    )
    first, second = _texts(data), _texts(data)
    assert len(first) == MAX_PER_TEMPLATE
    assert first == second
    assert len({t.split()[0] for t in first}) > 1  # spread over the alternatives, not the first only


def test_block_slots_and_requires_context_are_kept() -> None:
    data = _doc(
        {
            "Lights": {
                "data": [
                    {
                        "sentences": ["movie time"],
                        "slots": {"scene": "movie"},
                        "requires_context": {"area": {"slot": True}},
                        "response": "ignored",
                        "metadata": {"any": "thing"},
                    }
                ]
            }
        }
    )
    (example,) = parse_custom_sentences([("f.yaml", data)]).examples
    assert example.slots == {"scene": "movie"}
    assert example.context_slots == ("area",)


def test_a_directory_of_files_shares_lists_and_names_every_file(tmp_path: Path) -> None:
    (tmp_path / "lists.yaml").write_text(
        yaml.safe_dump({"language": "en", "lists": {"food": {"values": ["pizza"]}}})
    )
    (tmp_path / "order.yaml").write_text(
        yaml.safe_dump(_doc({"OrderFood": {"data": [{"sentences": ["order (a|some) {food}"]}]}}))
    )
    (tmp_path / "notes.txt").write_text("not a sentences file")
    found = load_custom_sentences([tmp_path])
    assert [e.text for e in found.examples] == ["order a pizza", "order some pizza"]
    assert found.files == (str(tmp_path / "lists.yaml"), str(tmp_path / "order.yaml"))
    assert found.summary() == {"intents": 1, "examples": 2, "files": list(found.files)}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([1, 2], ["top level must be a mapping"]),
        ({"language": "de", "intents": {}}, ["language 'de'", "English"]),
        ({"language": "en", "intents": {}, "colour": 1}, ["unknown keys ['colour']"]),
        (_doc({"Bad/Name": {"data": [{"sentences": ["x"]}]}}), ["intent Bad/Name", "topic level"]),
        (_doc({"NoData": {"sentences": ["x"]}}), ["intent NoData", "needs 'data'"]),
        (_doc({"Empty": {"data": [{"sentences": []}]}}), ["intent Empty: data[0]", "non-empty list"]),
        (
            _doc({"Typo": {"data": [{"sentence": ["x"]}]}}),
            ["intent Typo: data[0]", "unknown keys ['sentence']"],
        ),
        (
            _doc({"Broken": {"data": [{"sentences": ["turn (on|off"]}]}}),
            ["intent Broken", "turn (on|off", "not a valid template"],
        ),
        (
            _doc({"Lists": {"data": [{"sentences": ["play {song}"]}]}}),
            ["intent Lists", "list {song} is not defined"],
        ),
        (_doc({"Rules": {"data": [{"sentences": ["play <music>"]}]}}), ["intent Rules", "<music>"]),
        (
            _doc(
                {"A": {"data": [{"sentences": ["x {l}"]}]}}, lists={"l": {"values": ["a"], "wildcard": True}}
            ),
            ["lists.l", "exactly one of"],
        ),
        (
            _doc({"A": {"data": [{"sentences": ["x {l}"]}]}}, lists={"l": {"range": {"from": 5, "to": 1}}}),
            ["lists.l", "from <= to"],
        ),
        (
            _doc({"A": {"data": [{"sentences": ["x {l}"]}]}}, lists={"l": {"range": {"to": 1}}}),
            ["lists.l", "'from'"],
        ),
        (
            _doc({"A": {"data": [{"sentences": ["x"]}]}}, expansion_rules={"r": "(a|"}),
            ["expansion_rules.r", "not a valid template"],
        ),
        ({"language": "en"}, ["no intents"]),
    ],
)
def test_errors_name_the_file_the_intent_and_the_problem(data: Any, words: list[str]) -> None:
    with pytest.raises(CustomSentencesError) as info:
        parse_custom_sentences([("mine.yaml", data)])
    message = str(info.value)
    assert message.startswith("mine.yaml")
    for word in words:
        assert word in message, message


def test_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("intents: [unclosed\n")
    with pytest.raises(CustomSentencesError, match=r"bad\.yaml: not valid YAML"):
        load_custom_sentences([bad])
    with pytest.raises(CustomSentencesError, match="no such custom-sentences file"):
        load_custom_sentences([tmp_path / "missing.yaml"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CustomSentencesError, match=r"no \*\.yaml"):
        sentence_files([empty])


def test_only_hassils_parser_is_imported_and_the_whole_package_still_loads_later() -> None:
    """The recognizer pays for hassil's template parser, not for its matcher and number words; a
    later ``import hassil`` (anyone's) still gets the complete package."""
    code = (
        "import sys, json\n"
        "from edge_agent.nlu.custom import parse_custom_sentences\n"
        "doc = {'language': 'en', 'intents': {'A': {'data': [{'sentences': ['(a|b)']}]}}}\n"
        "parse_custom_sentences([('f', doc)])\n"
        "before = sorted(m for m in sys.modules if m.split('.')[0] in ('hassil', 'unicode_rbnf'))\n"
        "import hassil\n"
        "print(json.dumps([before, hasattr(hassil, 'recognize'), 'hassil.recognize' in sys.modules]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True
    )
    before, whole, matcher = json.loads(proc.stdout)
    assert "hassil" not in before and "hassil.recognize" not in before and "unicode_rbnf" not in before
    assert "hassil.parse_expression" in before
    assert whole and matcher


def test_the_benchmark_file_loads() -> None:
    found = load_custom_sentences([ROOT / "bench" / "data" / "custom_clinc.yaml"])
    assert len(found.intents) == 20
    assert all(sum(e.intent == name for e in found.examples) >= 10 for name in found.intents)
