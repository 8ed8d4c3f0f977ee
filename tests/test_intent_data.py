"""The generated intent training data: contract, determinism, coverage, and agreement with build_slots."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path
from typing import Any

import pytest

from edge_agent.nlu.schema import INTENTS
from edge_agent.nlu.slots import build_slots
from edge_agent.records.intent import Span
from firmware_tools.data.intents import IntentExample, check_example, generate, generate_intent, sample_home


@pytest.fixture(scope="module")
def examples() -> list[IntentExample]:
    return generate(seed=11, n=6000)


def _norm(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return str(value).lower()


def test_deterministic_from_seed() -> None:
    a = [(e.text, e.intent, e.spans, e.slots) for e in generate(5, 300)]
    b = [(e.text, e.intent, e.spans, e.slots) for e in generate(5, 300)]
    c = [(e.text, e.intent, e.spans, e.slots) for e in generate(6, 300)]
    assert a == b
    assert a != c


def test_every_example_keeps_the_contract(examples: list[IntentExample]) -> None:
    for ex in examples:
        check_example(ex)
        assert ex.text == ex.text.strip() and ex.text


def test_every_intent_and_out_of_scope_share(examples: list[IntentExample]) -> None:
    counts = collections.Counter(e.intent for e in examples)
    assert set(INTENTS) <= set(counts)
    oos = counts[None] / len(examples)
    assert 0.18 < oos < 0.27


def _skeleton(ex: IntentExample) -> str:
    """The phrasing without its slot values: each span replaced by ``{slot}``, case and spacing
    folded ("turn on the {name} in the {area}")."""
    text = ex.text
    for start, end, slot in sorted(ex.spans, reverse=True):
        text = f"{text[:start]}{{{slot}}}{text[end:]}"
    return re.sub(r"\s+", " ", text.lower().strip(" ?.!,"))


def test_variety(examples: list[IntentExample]) -> None:
    """Phrasings, not slot fills: distinct texts are guaranteed by the fills, skeletons are not."""
    by_intent: dict[str | None, list[str]] = collections.defaultdict(list)
    for ex in examples:
        by_intent[ex.intent].append(_skeleton(ex))
    skeletons = [s for group in by_intent.values() for s in group]
    assert len(set(skeletons)) > 0.6 * len(skeletons)
    for intent, group in by_intent.items():
        assert len(set(group)) >= 20, f"{intent}: {len(set(group))} phrasings"
        top = collections.Counter(group).most_common(1)[0][1]
        assert top < 0.25 * len(group), f"{intent}: one phrasing is {top} of {len(group)} examples"
    texts = [e.text for e in examples]
    lowered = sum(1 for t in texts if t == t.lower())
    assert 0.3 < lowered / len(texts) < 0.95


def test_skeleton_folds_slot_values() -> None:
    a = IntentExample("Turn on the Desk Lamp", "HassTurnOn", [(12, 21, "name")], {"name": "Desk Lamp"})
    b = IntentExample("turn on the hall light", "HassTurnOn", [(12, 22, "name")], {"name": "hall light"})
    assert _skeleton(a) == _skeleton(b) == "turn on the {name}"


def test_expected_slots_match_build_slots(examples: list[IntentExample]) -> None:
    """The spans, run through the real slot builder with the example's home, give its slots."""
    total = mismatched = 0
    for ex in examples:
        if ex.intent is None:
            continue
        total += 1
        got = build_slots(
            ex.text, ex.intent, [Span(s, e, k, 1.0) for s, e, k in ex.spans], ex.home, ex.context_area
        )
        if {k: _norm(v.value) for k, v in got.items()} != {k: _norm(v) for k, v in ex.slots.items()}:
            mismatched += 1
    # a few noisy names fall outside the fuzzy threshold on purpose; nothing systematic may
    assert mismatched / total < 0.01


def test_out_of_scope_has_no_slots(examples: list[IntentExample]) -> None:
    for ex in examples:
        if ex.intent is None:
            assert ex.spans == [] and ex.slots == {}


def test_typical_slots_appear(examples: list[IntentExample]) -> None:
    by_intent: dict[str, set[str]] = collections.defaultdict(set)
    for ex in examples:
        if ex.intent:
            by_intent[ex.intent] |= set(ex.slots)
    assert {"area", "domain", "name", "floor"} <= by_intent["HassTurnOn"]
    assert {"state", "device_class", "domain"} <= by_intent["HassGetState"]
    assert {"brightness", "color"} <= by_intent["HassLightSet"]
    assert {"hours", "minutes", "seconds", "name", "conversation_command"} <= by_intent["HassStartTimer"]
    assert {"start_minutes"} <= by_intent["HassCancelTimer"] | by_intent["HassPauseTimer"]
    assert {"search_query", "media_class"} <= by_intent["HassMediaSearchAndPlay"]
    assert {"item", "name"} <= by_intent["HassListAddItem"]
    assert "brightness_step" in by_intent["EdgeLightSetRelative"]
    assert "temperature_step" in by_intent["EdgeClimateSetRelative"]


def test_generate_intent_and_homes() -> None:
    ex = generate_intent("HassStartTimer", seed=3)
    assert ex.intent == "HassStartTimer"
    assert generate_intent("__none__", seed=3).intent is None
    home = sample_home(1)
    assert home.areas and home.entities
    assert {e.domain for e in home.entities} >= {"light", "switch", "cover", "media_player"}
    assert sample_home(1).to_dict() == home.to_dict()


def test_dev_sets_name_only_known_intents() -> None:
    data = Path(__file__).resolve().parent / "data"
    for name in ("inscope_dev.jsonl", "probe_dev.jsonl", "probe2_dev.jsonl", "probe3_dev.jsonl"):
        text = (data / name).read_text(encoding="utf-8")
        records = [json.loads(line) for line in text.splitlines() if line]
        assert records, name
        unknown = {r["intent"] for r in records if r["intent"] is not None and r["intent"] not in INTENTS}
        assert not unknown, (name, unknown)


def test_titles_that_are_clauses_are_whole_spans(examples: list[IntentExample]) -> None:
    """Media titles include whole clauses ("i never knew you", "here comes the echo"), and their
    search_query span runs over the pronouns and verbs in them, not only the title-like words."""
    pronouns = {"i", "you", "we", "me", "it", "us", "they", "she", "he", "her", "him", "them"}
    clauses = 0
    for ex in examples:
        for start, end, slot in ex.spans:
            if slot != "search_query":
                continue
            words = set(ex.text[start:end].lower().split())
            if words & pronouns and len(words) >= 3:
                clauses += 1
                assert ex.text[start:end].lower() == str(ex.slots["search_query"]).lower()
    searches = sum(ex.intent == "HassMediaSearchAndPlay" for ex in examples)
    assert clauses >= 0.04 * searches
