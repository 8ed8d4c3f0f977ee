"""The word-piece overlap of custom intents (``edge_agent.nlu.custom.lexical``) and how
``CustomIndex`` mixes it with the sentence embedding."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from edge_agent.nlu.custom import CustomIndex, CustomSettings, parse_custom_sentences
from edge_agent.nlu.custom.lexical import Lexical, piece_weights
from edge_agent.runtime.bundle import default_bundle_path
from edge_agent.runtime.tokenizer import Tokenizer

WEIGHTS = np.array([0.0, 1.0, 1.0, 8.0, 8.0, 8.0], np.float32)  # ids 1, 2 common; 3-5 rare


def test_overlap_is_a_cosine_that_rare_pieces_dominate() -> None:
    lex = Lexical(WEIGHTS, [np.array([3, 1, 0, 0]), np.array([4, 1]), np.array([5, 2])])
    same = lex.similarities(np.array([1, 3, 0]))  # padding and order do not matter
    assert same[0] == pytest.approx(1.0)
    assert same[2] == pytest.approx(0.0)  # no piece in common
    rare = lex.similarities(np.array([3, 2]))[0]  # shares the rare piece with example 0
    common = lex.similarities(np.array([4, 1]))[0]  # shares only the common one
    assert rare > 0.9 > 0.1 > common > 0.0
    assert lex.similarities(np.array([0, 0])).tolist() == [0.0, 0.0, 0.0]  # nothing to match
    assert lex.block(0, 2, [np.array([3, 1]), np.array([4, 1])]) == pytest.approx(
        np.array([[1.0, common], [common, 1.0]]), abs=1e-6
    )


def test_piece_weights_of_the_shipped_tokenizer() -> None:
    tok = Tokenizer(default_bundle_path() / "tokenizer.model", 32)
    weights = piece_weights(tok.processor)
    sp = tok.processor
    assert len(weights) == tok.vocab_size and weights[0] == 0.0 and weights[sp.unk_id()] == 0.0
    assert 0 < weights[sp.PieceToId("▁the")] < weights[sp.PieceToId("▁coffee")]


YAML = """
language: en
intents:
  MakeCoffee:
    data:
      - sentences: ["brew a cup of coffee"]
  OrderTaxi:
    data:
      - sentences: ["call me a taxi"]
"""


def _index(lexical_weight: float, with_pieces: bool = True) -> CustomIndex:
    sentences = parse_custom_sentences([("test.yaml", yaml.safe_load(YAML))])
    vectors = np.eye(2, 4, dtype=np.float32)  # coffee along axis 0, taxi along axis 1
    ids = [np.array([3, 1]), np.array([4, 2])]  # coffee's rare piece 3, taxi's rare piece 4
    settings = CustomSettings(threshold=0.3, top_k=1, cohesion_weight=0.0, lexical_weight=lexical_weight)
    return CustomIndex(sentences, vectors, [], settings, (ids, WEIGHTS) if with_pieces else None)


def test_the_words_decide_when_the_meaning_is_between_two_intents() -> None:
    between = np.array([0.6, 0.8, 0, 0], np.float32)  # a little nearer to the taxi
    says_coffee = np.array([3, 2])
    index = _index(0.5)
    assert index.intents[index.best(between, says_coffee)[0]] == "MakeCoffee"
    assert index.intents[index.best(between)[0]] == "OrderTaxi"  # no ids: the embedding alone
    mixed = index.similarities(between, says_coffee)
    cosine = index.vectors @ between
    assert mixed == pytest.approx(0.5 * cosine + 0.5 * index.lexical.similarities(says_coffee))  # type: ignore[union-attr]
    for plain in (_index(0.0), _index(0.5, with_pieces=False)):
        assert plain.lexical is None
        assert plain.similarities(between, says_coffee) == pytest.approx(cosine)


def test_a_bundle_that_does_not_set_the_weight_keeps_the_embedding_alone() -> None:
    assert CustomSettings.from_calibration({"custom_intents": {"threshold": 0.5}}).lexical_weight == 0.0
    chosen = CustomSettings.from_calibration({"custom_intents": {"threshold": 0.5, "lexical_weight": 0.5}})
    assert chosen.lexical_weight == 0.5


def test_an_utterance_is_a_set_of_pieces() -> None:
    """A piece written twice counts once, as in the examples; ids outside the vocabulary are
    ignored, not an index error."""
    lex = Lexical(WEIGHTS, [np.array([3, 1]), np.array([4, 2]), np.array([1, 2])])
    once = lex.similarities(np.array([3, 1, 0]))
    assert lex.similarities(np.array([3, 3, 1, 1, 3, 0, 0])) == pytest.approx(once, abs=1e-6)
    assert lex.similarities(np.array([3, 1, 99, -1])) == pytest.approx(once, abs=1e-6)
    assert lex.similarities(np.array([5, 5])).tolist() == [0.0, 0.0, 0.0]  # a piece no example has
    # piece 2 (weight 1) beside 5 (weight 8, in no example): cosines 0, 1/65 and 1/sqrt(130)
    expected = [0.0, 1.0 / 65.0, 1.0 / np.sqrt(130.0)]
    assert lex.similarities(np.array([2, 5])) == pytest.approx(expected, abs=1e-6)
