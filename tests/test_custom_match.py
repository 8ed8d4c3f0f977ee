"""The decision between built-in intents, custom intents and out of scope, on vectors made here
(pure functions and ``CustomIndex``; no model: the geometry is chosen, the outcome must follow)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from edge_agent.nlu.custom import (
    CustomIndex,
    CustomSettings,
    decide,
    example_layout,
    fit_logistic,
    intent_cohesion,
    intent_scores,
    parse_custom_sentences,
)
from edge_agent.nlu.home import Home
from edge_agent.records.intent import IntentResult, SlotValue

PLAIN = CustomSettings(
    threshold=0.6, steal=0.9, margin=0.1, top_k=1, cohesion_weight=0.0, slope=10.0, intercept=-6.0
)


def test_below_the_threshold_the_builtin_decision_stands() -> None:
    assert decide(None, 0.9, "FeedCat", 0.59, PLAIN).kind == "builtin"
    assert decide("HassTurnOn", 0.5, "FeedCat", 0.59, PLAIN) == decide("HassTurnOn", 0.5, None, 0.0, PLAIN)


def test_out_of_scope_goes_to_a_custom_intent_with_its_calibrated_confidence() -> None:
    d = decide(None, 0.95, "FeedCat", 0.7, PLAIN)
    assert (d.kind, d.intent) == ("custom", "FeedCat")
    assert d.confidence == pytest.approx(1 / (1 + math.exp(-(10 * 0.7 - 6))))


def test_a_confident_builtin_is_taken_over_only_when_the_custom_match_is_clearly_better() -> None:
    p_custom = PLAIN.confidence(0.8)  # ~0.88
    assert decide("HassTurnOn", 0.99, "MovieNight", 0.8, PLAIN).intent == "HassTurnOn"
    assert decide("HassTurnOn", p_custom - 0.05, "MovieNight", 0.8, PLAIN).intent == "HassTurnOn"  # < margin
    assert decide("HassTurnOn", p_custom - 0.15, "MovieNight", 0.8, PLAIN).intent == "MovieNight"
    # steal: their own words (the nearest example, not the score less a cohesion offset)
    assert decide("HassTurnOn", 0.99, "MovieNight", 0.9, PLAIN).intent == "MovieNight"
    assert decide("HassTurnOn", 0.99, "MovieNight", 0.8, PLAIN, nearest=0.97).intent == "MovieNight"
    assert decide("HassTurnOn", 0.99, "MovieNight", 0.8, PLAIN, nearest=0.85).intent == "HassTurnOn"


def test_examples_under_a_builtin_name_teach_that_intent() -> None:
    d = decide(None, 0.9, "HassTurnOn", 0.7, PLAIN, builtin_names={"HassTurnOn", "HassTurnOff"})
    assert (d.kind, d.intent) == ("taught", "HassTurnOn")
    same = decide("HassTurnOn", 0.4, "HassTurnOn", 0.95, PLAIN, builtin_names={"HassTurnOn"})
    assert (same.kind, same.confidence) == ("builtin", 0.4)


def test_intent_scores_nearest_and_top_k_mean() -> None:
    sims = np.array([0.2, 0.9, 0.5, 0.7, 0.6, 0.1], np.float32)
    layout = example_layout(np.array([0, 2, 5], np.intp), 6)  # 0: [0.2, 0.9], 1: [0.5, 0.7, 0.6], 2: [0.1]
    assert layout.counts.tolist() == [2, 3, 1] and layout.pad.tolist() == [[0, 0, 1], [0, 0, 0], [0, 1, 1]]
    assert intent_scores(sims, layout, 1).tolist() == pytest.approx([0.9, 0.7, 0.1])
    assert intent_scores(sims, layout, 2).tolist() == pytest.approx([0.55, 0.65, 0.1])
    assert intent_scores(sims, layout, 5).tolist() == pytest.approx([0.55, 0.6, 0.1])
    rows = np.stack([sims, sims[::-1]])  # many utterances at once: (utterances, intents)
    assert intent_scores(rows, layout, 2)[1].tolist() == pytest.approx([0.35, 0.8, 0.2])


def test_cohesion_leaves_the_examples_own_template_out() -> None:
    a, b, c = np.eye(3, dtype=np.float32)
    near_a = np.array([0.8, 0.6, 0], np.float32)
    vectors = np.stack([a, near_a, a, b, c])
    starts = np.array([0, 3], np.intp)
    # intent 0: two templates (a, near_a) and a third expansion of the first template (a again)
    templates = np.array([0, 1, 0, 2, 3], np.intp)
    cohesion = intent_cohesion(vectors, starts, templates, top_k=1)
    assert cohesion[0] == pytest.approx(0.8)  # a-a pairs of the same template do not count
    assert cohesion[1] == pytest.approx(0.0)
    single = intent_cohesion(vectors[:1], np.array([0], np.intp), np.array([0], np.intp))
    assert np.isnan(single[0])


def test_settings_from_the_bundle_calibration_over_the_defaults() -> None:
    s = CustomSettings.from_calibration(
        {"custom_intents": {"threshold": 0.7, "top_k": 2, "steal": "x", "other": 1}}
    )
    assert (s.threshold, s.top_k, s.steal) == (0.7, 2, CustomSettings().steal)
    assert s.cohesion_weight == 0.0  # the bundle chose its threshold without the offset
    built = CustomSettings.from_calibration(
        {"custom_intents": {"threshold": 0.8, "k": 2, "cohesion_weight": 0.4}}
    )
    assert (built.top_k, built.cohesion_weight) == (2, 0.4)
    assert CustomSettings.from_calibration({}) == CustomSettings()
    assert CustomSettings.from_calibration(None) == CustomSettings()


def test_fit_logistic_recovers_a_known_map() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 20000)
    y = rng.uniform(0, 1, x.size) < 1 / (1 + np.exp(-(8 * x - 4)))
    slope, intercept = fit_logistic(x, y)
    assert slope == pytest.approx(8, abs=0.5) and intercept == pytest.approx(-4, abs=0.3)


# -- CustomIndex on constructed vectors ----------------------------------------------------------
def _sentences() -> Any:
    return parse_custom_sentences(
        [
            (
                "home.yaml",
                {
                    "language": "en",
                    "intents": {
                        "SetAlarm": {
                            "data": [{"sentences": ["wake me up at {time}"], "slots": {"kind": "alarm"}}]
                        },
                        "FeedCat": {"data": [{"sentences": ["feed the cat"]}]},
                        "HassTurnOn": {"data": [{"sentences": ["light it up"]}]},
                    },
                    "lists": {"time": {"wildcard": True}},
                },
            )
        ]
    )


def _index() -> tuple[CustomIndex, dict[str, np.ndarray]]:
    sentences = _sentences()
    axes = {"SetAlarm": 0, "FeedCat": 1, "HassTurnOn": 2}
    vectors = np.stack([np.eye(4, dtype=np.float32)[axes[e.intent]] for e in sentences.examples])
    index = CustomIndex(sentences, vectors, ["HassTurnOn", "HassTurnOff", "__none__"], PLAIN)
    return index, {name: np.eye(4, dtype=np.float32)[i] for name, i in axes.items()}


def _toward(v: np.ndarray, cos: float) -> np.ndarray:
    other = np.eye(4, dtype=np.float32)[3]
    return cos * v + math.sqrt(1 - cos * cos) * other


def _builtin_slots(intent: str, conf: float) -> IntentResult:
    return IntentResult("light it up please", intent, conf, {"name": SlotValue("lamp", "lamp", 0, 4, 1.0)})


def test_index_resolves_a_custom_intent_with_its_slots() -> None:
    index, axis = _index()
    builtin = IntentResult("get me up at six thirty", None, 0.97)
    result = index.resolve(builtin.text, _toward(axis["SetAlarm"], 0.8), builtin, _builtin_slots)
    assert result.intent == "SetAlarm" and result.confidence == pytest.approx(PLAIN.confidence(0.8))
    assert result.slots["time"].value == "six thirty"
    assert result.slots["kind"].value == "alarm"
    assert index.summary()["taught"] == ["HassTurnOn"] and index.custom_names == ["SetAlarm", "FeedCat"]


def test_index_keeps_the_builtin_result_and_rejects_what_nothing_covers() -> None:
    index, axis = _index()
    builtin = IntentResult(
        "turn on the lamp", "HassTurnOn", 0.99, {"name": SlotValue("Lamp", "lamp", 12, 16, 1.0)}
    )
    assert index.resolve(builtin.text, _toward(axis["FeedCat"], 0.7), builtin, _builtin_slots) is builtin
    nothing = IntentResult("what is the meaning of life", None, 0.9)
    assert index.resolve(nothing.text, _toward(axis["FeedCat"], 0.3), nothing, _builtin_slots) is nothing
    # a confident built-in result still gives way to the user's own sentence
    said = IntentResult("feed the cat", "HassTurnOn", 0.99)
    assert index.resolve(said.text, axis["FeedCat"], said, _builtin_slots).intent == "FeedCat"
    unsure = IntentResult("feed the kitty", "HassTurnOn", 0.2)  # and an unsure one to a clear match
    assert (
        index.resolve(unsure.text, _toward(axis["FeedCat"], 0.8), unsure, _builtin_slots).intent == "FeedCat"
    )


def test_index_teaches_a_builtin_intent_through_the_builtin_slot_path() -> None:
    index, axis = _index()
    builtin = IntentResult("light it up please", None, 0.8)
    result = index.resolve(builtin.text, _toward(axis["HassTurnOn"], 0.75), builtin, _builtin_slots)
    assert result.intent == "HassTurnOn" and "name" in result.slots
    assert result.confidence == pytest.approx(PLAIN.confidence(0.75))


def test_index_resolves_home_names_and_the_satellites_area() -> None:
    sentences = parse_custom_sentences(
        [
            (
                "f.yaml",
                {
                    "language": "en",
                    "intents": {
                        "Clean": {
                            "data": [
                                {
                                    "sentences": ["give {name} a wipe"],
                                    "requires_context": {"area": {"slot": True}},
                                }
                            ]
                        }
                    },
                },
            )
        ]
    )
    index = CustomIndex(sentences, np.eye(1, 4, dtype=np.float32), [], PLAIN)
    home = Home.from_dict({"areas": ["Kitchen"], "entities": [{"name": "Counter Top", "domain": "switch"}]})
    builtin = IntentResult("please give the countertop a wipe", None, 0.9)
    result = index.resolve(
        builtin.text, np.eye(1, 4, dtype=np.float32)[0], builtin, _builtin_slots, home, "Kitchen"
    )
    assert result.intent == "Clean"
    assert result.slots["name"].value == "Counter Top" and result.slots["area"].value == "Kitchen"
