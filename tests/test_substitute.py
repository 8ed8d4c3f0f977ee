"""Texts with words swapped for the pretrained encoder's neighbours (``transfer.substitute``,
``lexicon.word_neighbours``) and how the cross-source folds treat them (``cross_source``). The
encoder itself is not loaded here: its vectors are stood in for by small hand-made ones."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from firmware_tools.data.intents import IntentExample
from firmware_tools.model import cross_source as cs
from firmware_tools.model.lexicon import encoder_words, word_neighbours
from firmware_tools.model.transfer import substitutable_words, substitute


def _unit(rows: list[list[float]]) -> np.ndarray:
    v = np.array(rows, np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_neighbours_are_the_nearest_other_words_not_forms_of_the_same_one() -> None:
    words = ["movie", "movies", "film", "cinema", "kettle", "turn", "flip"]
    vectors = _unit(
        [[1, 0, 0], [1, 0.05, 0], [1, 0.2, 0], [1, 0.6, 0], [0, 0, 1], [0, 1, 0.1], [0, 1, 0.3]]
    )
    near = word_neighbours(words, vectors, {"movie", "turn", "kettle", "absent"}, k=2, min_cos=0.8)
    # "movies" is nearest but the same word; "kettle" has no neighbour close enough
    assert near == {"movie": ["film", "cinema"], "turn": ["flip"]}
    assert word_neighbours(words, vectors, {"movie"}, k=1, min_cos=0.8) == {"movie": ["film"]}


def test_the_encoders_words_are_whole_ascii_words() -> None:
    vocab = {"[CLS]": 0, "##ing": 1, "movie": 2, "a": 3, "caf\u00e9": 4, "b2b": 5, "film": 6}
    tokenizer_json = json.dumps({"model": {"vocab": vocab}})
    assert encoder_words(tokenizer_json) == ["film", "movie"]


def test_substitution_swaps_words_outside_slot_spans_only() -> None:
    text = "Play the movie Alien in the Living Room"
    spans = ((15, 20, "search_query"), (28, 39, "area"))
    ex = IntentExample(text, "HassMediaSearchAndPlay", list(spans), {}, origin="snips")
    assert substitutable_words([ex]) == {"play", "the", "movie"}
    near = {"play": ["start"], "movie": ["film"], "alien": ["foreign"], "living": ["lounge"]}
    out = substitute([ex], 50, seed=3, neighbours=near)
    assert out and all(i == 0 for i, _ in out)
    for _, new in out:
        assert new != text and new.endswith(" Alien in the Living Room")
        assert new.split()[0] in {"Play", "Start"}  # the case of a first letter is kept
    assert {new for _, new in out} <= {
        "Start the movie Alien in the Living Room",
        "Play the film Alien in the Living Room",
        "Start the film Alien in the Living Room",
    }
    assert substitute([ex], 50, seed=3, neighbours=near) == out  # seeded
    # a row with nothing to swap gives nothing
    assert substitute([IntentExample("ok", None, [], {})], 5, seed=1, neighbours=near) == []


@dataclass
class _Sentence:
    """The fields of ``train.SentenceTargets`` (TensorFlow stays out of this process)."""

    rows: np.ndarray
    extra_ids: np.ndarray
    extra: np.ndarray
    extra_intent: np.ndarray | None = None
    extra_intent_rows: np.ndarray | None = None
    extra_origin: np.ndarray | None = None


def test_a_fold_leaves_out_the_substituted_copies_of_its_source() -> None:
    origin = np.array(["sgd", "sgd", "clinc", "snips", "gen"], object)
    sent = _Sentence(
        rows=np.arange(8.0)[:, None],
        extra_ids=np.arange(5)[:, None],
        extra=np.arange(5.0)[:, None],
        extra_intent=np.ones((5, 3), np.float32),
        extra_intent_rows=np.array([False, False, True, True, True]),
        extra_origin=origin,
    )
    keep = np.array([True, False, True, True, True, True, False, True])
    fold = cs._fold_sentence(sent, "clinc", keep)
    np.testing.assert_array_equal(fold.rows[:, 0], np.flatnonzero(keep))
    np.testing.assert_array_equal(fold.extra_ids[:, 0], [0, 1, 3, 4])
    assert list(fold.extra_origin) == ["sgd", "sgd", "snips", "gen"]
    assert list(fold.extra_intent_rows) == [False, False, True, True]
    # SGD's texts train the sentence only here, so the students' key marks substitution alone
    assert not cs._extra_kd(fold) and cs._substituted(fold)
    without_sgd = cs._fold_sentence(sent, "sgd", np.ones(8, bool))
    assert list(without_sgd.extra_origin) == ["clinc", "snips", "gen"]
    # SGD's texts with the intent head (--distil-extra) and no substitution: the old key
    plain = _Sentence(sent.rows, sent.extra_ids[:2], sent.extra[:2], np.ones((2, 3), np.float32))
    assert cs._extra_kd(plain) and not cs._substituted(plain)
    assert not cs._extra_kd(cs._fold_sentence(plain, "sgd", np.ones(8, bool)))
