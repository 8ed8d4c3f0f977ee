"""The pretrained teacher's parts: checkpoint reading, the encoder's sense, slot-tag alignment
onto the student's tokens, and the transfer set's augmentation."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
from childcheck import run_check_script, safetensors_bytes

from firmware_tools.data.intents import generate
from firmware_tools.model.align import align_slot_logits
from firmware_tools.model.dataset import SLOT_TAGS, tag_index
from firmware_tools.model.pretrained import load_checkpoint, read_safetensors
from firmware_tools.model.transfer import augment


def test_safetensors_round_trip() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([0.5, -1.0], np.float32)
    out = read_safetensors(safetensors_bytes({"a": a, "b": b}))
    assert set(out) == {"a", "b"}
    np.testing.assert_array_equal(out["a"], a)
    np.testing.assert_array_equal(out["b"], b)


def test_a_zip_without_weights_is_refused(tmp_path: Path) -> None:
    z = tmp_path / "enc.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("config.json", "{}")
        zf.writestr("tokenizer.json", "{}")
    with pytest.raises(FileNotFoundError, match=r"model\.safetensors"):
        load_checkpoint(z)


@pytest.mark.slow
def test_the_pretrained_encoder_knows_what_sentences_mean() -> None:
    """Weights mapped wrongly (a transpose, a swapped norm) give embeddings with no sense. Run in a
    child process: TensorFlow must stay out of this one (tests/distill_checks.py says why)."""
    run_check_script("teacher_checks.py", "encoder checks passed")


def _dim_kitchen() -> tuple[np.ndarray, np.ndarray]:
    """Teacher offsets and logits of "dim kitchen": pieces [CLS] dim kitchen [SEP], tagged O and
    B-area."""
    idx = tag_index()
    t_offsets = np.array([[[0, 0], [0, 3], [4, 11], [0, 0]]], np.int32)
    t_logits = np.full((1, 4, len(SLOT_TAGS)), -9.0, np.float32)
    t_logits[0, 1, idx["O"]] = 9.0
    t_logits[0, 2, idx["B-area"]] = 9.0
    return t_offsets, t_logits


def test_slot_distributions_move_onto_student_tokens() -> None:
    idx = tag_index()
    # student: "dim" "kit" "chen"
    t_offsets, t_logits = _dim_kitchen()
    out = align_slot_logits(t_logits, t_offsets, [[(0, 3), (4, 7), (7, 11)]], 5)
    best = out[0].argmax(-1)
    assert [SLOT_TAGS[i] for i in best] == ["O", "B-area", "I-area", "O", "O"]
    probs = np.exp(out[0])
    assert probs[2, idx["B-area"]] < 1e-3  # the B mass of the piece's second token moved to I


def test_bare_word_boundary_pieces_take_o_and_the_word_keeps_its_b() -> None:
    # the student splits the space off as a bare "▁" piece (no characters, which the tokenizer
    # reports as (4, 4)); its gold tag is O, so the teacher's must be too
    t_offsets, t_logits = _dim_kitchen()
    out = align_slot_logits(t_logits, t_offsets, [[(0, 3), (4, 4), (4, 11)]], 4)
    assert [SLOT_TAGS[i] for i in out[0].argmax(-1)] == ["O", "O", "B-area", "O"]


def test_augmented_utterances_keep_their_spans() -> None:
    examples = [e for e in generate(5, 400) if e.spans][:80]
    edited = 0
    for i, ex in enumerate(examples):
        want = sorted((ex.text[s:e], slot) for s, e, slot in ex.spans)
        for new in augment([ex], 3, seed=i):
            assert new.text != ex.text and new.intent == ex.intent
            assert sorted((new.text[s:e], slot) for s, e, slot in new.spans) == want
            edited += 1
    assert edited > 120  # most draws change something
