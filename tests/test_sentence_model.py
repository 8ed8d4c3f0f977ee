"""The pieces behind custom intents and speaker-style data: restyled utterances keep their labels
and spans, the build's calibration of custom intents, and the SGD mapping."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from edge_agent.nlu.custom.match import CustomSettings
from firmware_tools.data.intents import IntentExample, generate
from firmware_tools.data.sgd import SgdRow, load_sgd, mapped_sgd, refers_back, sgd_texts
from firmware_tools.model import transfer
from firmware_tools.model.custom_calib import Episode, calibrate_custom
from firmware_tools.model.transfer import restyle


def test_restyled_utterances_keep_labels_and_span_text() -> None:
    examples = list(generate(5, 300))
    out = restyle(examples, 400, seed=1)
    assert len(out) > 250  # a copy the edit left unchanged is not kept
    by_source = {}
    for ex in examples:
        by_source.setdefault(ex.intent, set()).add(tuple(sorted(ex.slots)))
    for new in out:
        for start, end, _ in new.spans:
            assert 0 <= start < end <= len(new.text)
        assert new.intent in by_source  # labels copied from a source example, never invented
    # the text of every span survives the edit (same multiset of span strings as some source)
    sources = {tuple(sorted(ex.text[s:e] for s, e, _ in ex.spans)) for ex in examples}
    assert all(tuple(sorted(n.text[s:e] for s, e, _ in n.spans)) in sources for n in out)


def test_restyle_adds_speaker_habits_and_drops_punctuation() -> None:
    ex = IntentExample("Turn on the kitchen light, please.", "HassTurnOn", [(12, 25, "name")], {})
    out = restyle([ex] * 200, 200, seed=2)
    texts = [o.text for o in out]
    assert any(t.startswith(("alexa", "hey ", "ok ", "computer", "jarvis")) for t in texts)
    assert any("you to turn on" in t.lower() for t in texts)  # a first-person wish around the command
    assert any("," not in t and "." not in t for t in texts)
    assert all(o.text[o.spans[0][0] : o.spans[0][1]] == "kitchen light" for o in out)
    assert all(o.intent == "HassTurnOn" for o in out)


def test_preambles_come_only_when_their_share_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = IntentExample("Turn on the kitchen light, please.", "HassTurnOn", [(12, 25, "name")], {})
    openers = tuple(p.strip(". ") for p in transfer._PREAMBLES)

    def with_preamble(texts: list[str]) -> list[str]:
        return [t for t in texts if any(o in t.lower() for o in openers) and "turn on" in t.lower()]

    assert transfer.PREAMBLE_SHARE == 0.0  # build 25's recipe: no preambles (docs/model.md, build 29)
    monkeypatch.setattr(transfer, "PREAMBLE_SHARE", 0.15)
    out = restyle([ex] * 200, 200, seed=2)
    assert with_preamble([o.text for o in out])  # a sentence before the request, the request whole after it
    assert all(o.text[o.spans[0][0] : o.spans[0][1]] == "kitchen light" for o in out)
    monkeypatch.setattr(transfer, "PREAMBLE_SHARE", 0.0)
    assert not with_preamble([o.text for o in restyle([ex] * 200, 200, seed=2)])


def test_custom_calibration_rejects_the_untaught_share_asked_for() -> None:
    rng = np.random.default_rng(0)
    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    centres = unit(rng.normal(size=(4, 16)))

    def noisy(i: int, n: int, spread: float) -> list[np.ndarray]:
        return list(unit(centres[i] + spread * rng.normal(size=(n, 16))))

    vectors: dict[str, np.ndarray] = {}

    def put(vs: list[np.ndarray], tag: str) -> list[str]:
        names = [f"{tag}{len(vectors) + j}" for j in range(len(vs))]
        vectors.update(zip(names, vs, strict=True))
        return names

    examples = put(noisy(0, 10, 0.3), "a") + put(noisy(1, 10, 0.3), "b")
    queries = put(noisy(0, 50, 0.3), "qa") + put(noisy(1, 50, 0.3), "qb") + put(noisy(2, 100, 0.6), "u")
    ep = Episode(examples, [0] * 10 + [1] * 10, queries, [0] * 50 + [1] * 50 + [-1] * 100, 2)
    cal, m = calibrate_custom(lambda texts: np.stack([vectors[t] for t in texts]), [ep], 0.9)
    assert m["custom_uncovered_rejected"] >= 0.9 - 0.011
    assert m["custom_recognized"] > 0.8  # taught intents sit far closer than the untaught one
    settings = CustomSettings.from_calibration({"custom_intents": cal})
    assert settings.threshold == cal["threshold"] and settings.top_k == cal["top_k"]
    assert settings.confidence(cal["threshold"] - 0.3) < settings.confidence(0.99)  # rises with the score


def test_sgd_rows_map_onto_our_intents(tmp_path: Path) -> None:
    rows = [
        ("what's the weather in Paris tomorrow", "Weather_1", "GetWeather"),
        ("play some jazz in the kitchen", "Music_3", "PlayMedia"),
        ("find me songs by Adele", "Music_1", "LookupSong"),
        ("wake me at 7", "Alarm_1", "AddAlarm"),
        ("book a table for two", "Restaurants_1", "ReserveRestaurant"),
        ("i want to watch a movie", "Movies_3", "FindMovies"),
        ("find films showing near me", "Movies_1", "FindMovies"),
    ]
    (tmp_path / "sgd").mkdir()
    lines = [json.dumps({"text": t, "service": s, "intent": i, "spans": []}) for t, s, i in rows]
    (tmp_path / "sgd" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = {e.text: e.intent for e in load_sgd(tmp_path, "test")}
    assert got == {
        "what's the weather in Paris tomorrow": "HassGetWeather",
        "play some jazz in the kitchen": "HassMediaSearchAndPlay",
        "book a table for two": None,
        "find films showing near me": None,  # a cinema's listings; a film finder's search is not scored
    }
    assert len(sgd_texts(tmp_path, "test")) == 7 and sgd_texts(tmp_path, "train") == []


@pytest.mark.parametrize(
    ("text", "spans", "back"),
    [
        ("what's the weather in Paris tomorrow", 2, False),
        ("i'd like to listen to some music", 0, False),
        ("play Hello by Adele on the kitchen speaker", 2, False),
        ("yes, please play it on the tv", 0, True),  # what to play was named earlier
        ("okay, i want to listen to that song", 0, True),
        ("the 4th of march in Denver", 2, True),  # an answer to the agent's question
        ("yes that works", 0, True),
        ("yes, play that song, Hello by Adele", 2, False),  # the row names it itself
    ],
)
def test_sgd_rows_that_lean_on_an_earlier_turn(text: str, spans: int, back: bool) -> None:
    assert refers_back(SgdRow(text, "Music_3", "PlayMedia", spans)) is back


def test_sgd_rows_keep_their_span_count(tmp_path: Path) -> None:
    (tmp_path / "sgd").mkdir()
    span = {"slot": "city", "start": 21, "end": 26, "value": "Paris"}
    lines = [
        json.dumps({"text": "what's the weather in Paris", "service": "Weather_1", "intent": "GetWeather",
                    "spans": [span]}),
        json.dumps({"text": "play it", "service": "Music_3", "intent": "PlayMedia"}),
    ]
    (tmp_path / "sgd" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [row for row, _ in mapped_sgd(tmp_path, "test")]
    assert [r.spans for r in rows] == [1, 0]
    assert [r.values for r in rows] == [(("city", "Paris"),), ()]
    assert [refers_back(r) for r in rows] == [False, True]


def test_episodes_leave_out_untaught_intents_of_a_taught_service() -> None:
    from firmware_tools.model.custom_calib import episodes_from_groups

    groups = {name: [f"{name} {i}" for i in range(20)] for name in ("Book", "Find", "Pay", "Ride")}
    families = {"Book": {"Restaurants"}, "Find": {"Restaurants"}, "Pay": {"Banks"}, "Ride": {"Rides"}}
    for ep in episodes_from_groups(groups, seed=1, n_taught=1, families=families):
        taught = ep.examples[0].split()[0]
        untaught = {q.split()[0] for q, k in zip(ep.queries, ep.query_intent, strict=True) if k < 0}
        sibling = {"Book": "Find", "Find": "Book"}.get(taught)
        assert sibling not in untaught and untaught  # a sibling asks about the taught service
        assert untaught == {"Book", "Find", "Pay", "Ride"} - {taught} - {sibling}
    plain = episodes_from_groups(groups, seed=1, n_taught=1)  # without families: every other intent
    assert all(len({q.split()[0] for q in ep.queries}) == 4 for ep in plain)


def test_the_balanced_choice_weighs_both_goals() -> None:
    from firmware_tools.model.custom_calib import GOAL_RECOGNIZED, GOAL_REJECTED

    rng = np.random.default_rng(3)

    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    centres = unit(rng.normal(size=(3, 16)))
    vectors: dict[str, np.ndarray] = {}

    def put(i: int, n: int, spread: float, tag: str) -> list[str]:
        names = [f"{tag}{len(vectors) + j}" for j in range(n)]
        vectors.update(zip(names, unit(centres[i] + spread * rng.normal(size=(n, 16))), strict=True))
        return names

    # untaught requests overlap the taught ones: no threshold meets both goals at once
    examples = put(0, 10, 0.5, "a") + put(1, 10, 0.5, "b")
    queries = put(0, 100, 0.8, "qa") + put(1, 100, 0.8, "qb") + put(2, 200, 0.9, "u")
    ep = Episode(examples, [0] * 10 + [1] * 10, queries, [0] * 100 + [1] * 100 + [-1] * 200, 2)

    def embed(texts: list[str]) -> np.ndarray:
        return np.stack([vectors[t] for t in texts])

    def goal(m: dict[str, float]) -> float:
        return min(m["custom_recognized"] / GOAL_RECOGNIZED, m["custom_uncovered_rejected"] / GOAL_REJECTED)

    _, balanced = calibrate_custom(embed, [ep])
    for target in (0.6, 0.93, 0.99):
        _, fixed = calibrate_custom(embed, [ep], target)
        assert goal(balanced) >= goal(fixed) - 1e-9
    recognized = balanced["custom_recognized"] / GOAL_RECOGNIZED
    assert abs(recognized - balanced["custom_uncovered_rejected"] / GOAL_REJECTED) < 0.1
