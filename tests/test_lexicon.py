"""The students' token embedding started from the pretrained encoder (firmware_tools/model/
lexicon.py): the table's arithmetic here, the real encoder in a child process
(tests/lexicon_checks.py) so that TensorFlow stays out of this one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from childcheck import run_check_script

from edge_agent.runtime.tokenizer import Tokenizer
from firmware_tools.model.lexicon import initial_table, piece_texts

TOKENIZER = Path(__file__).resolve().parents[1] / "edge_agent/models/default/tokenizer.model"


def test_piece_texts_are_the_words_without_marks_and_symbols_have_none() -> None:
    tok = Tokenizer(TOKENIZER, 32)
    texts = piece_texts(tok)
    sp = tok.processor
    assert len(texts) == sp.GetPieceSize()
    assert texts[sp.PieceToId("<*>")] == "" and texts[sp.unk_id()] == ""
    light = sp.PieceToId("\u2581light")
    assert light != sp.unk_id() and texts[light] == "light"
    assert sum(map(bool, texts)) > 0.9 * len(texts)


def test_the_table_keeps_the_vectors_geometry_and_the_random_spread() -> None:
    rng = np.random.default_rng(2)
    # vectors that vary along two directions only: their first two components hold everything
    basis = rng.normal(size=(2, 32))
    vectors = rng.normal(size=(200, 2)) @ basis
    vectors[:5] = 0.0  # pieces without a text
    table = rng.uniform(-0.05, 0.05, size=(200, 4)).astype(np.float32)
    out = initial_table(vectors, table)
    np.testing.assert_array_equal(out[:5], table[:5])
    rms = lambda a: float(np.sqrt(np.mean(np.square(a))))  # noqa: E731
    assert rms(out[5:]) == pytest.approx(rms(table), rel=1e-4)
    # distances between pieces are the vectors' own, scaled
    a = np.linalg.norm(vectors[5:, None] - vectors[None, 5:], axis=-1)
    b = np.linalg.norm(out[5:, None] - out[None, 5:], axis=-1)
    np.testing.assert_allclose(b / b.max(), a / a.max(), atol=1e-4)
    with pytest.raises(ValueError, match="rows"):
        initial_table(vectors[:10], table)
    with pytest.raises(ValueError, match="too few"):
        initial_table(np.zeros_like(vectors), table)


def test_a_share_of_the_width_starts_from_the_vectors_and_the_rest_stays_random() -> None:
    rng = np.random.default_rng(3)
    basis = rng.normal(size=(2, 32))
    vectors = rng.normal(size=(200, 2)) @ basis
    vectors[:5] = 0.0
    table = rng.uniform(-0.05, 0.05, size=(200, 8)).astype(np.float32)
    out = initial_table(vectors, table, width=0.25)  # 2 of 8 columns
    np.testing.assert_array_equal(out[:, 2:], table[:, 2:])
    np.testing.assert_array_equal(out[:5], table[:5])
    # the first two columns are the full-width start of a two-wide table, up to the scale
    two = initial_table(vectors, table[:, :2])[5:]
    np.testing.assert_allclose(out[5:, :2] / np.abs(out[5:, :2]).max(), two / np.abs(two).max(), atol=1e-5)
    assert not np.allclose(out[5:, :2], table[5:, :2])
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="width"):
            initial_table(vectors, table, width=bad)


@pytest.mark.slow
def test_the_encoder_places_like_pieces_together_and_a_student_starts_there() -> None:
    run_check_script("lexicon_checks.py", "2 checks passed")
