"""The build's second teacher for intents: a linear head on frozen all-mpnet-base-v2 embeddings
(firmware_tools/model/mpnet.py, linear.py) whose probabilities are mixed into the fine-tuned
teacher's (build.mix_intent_logits)."""

from __future__ import annotations

import numpy as np
import pytest
from childcheck import run_check_script

from firmware_tools.model.build import mix_intent_logits
from firmware_tools.model.linear import fit_softmax, softmax_logits


def _probs(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return np.asarray(e / e.sum(axis=-1, keepdims=True))


def test_mixing_averages_the_two_teachers_probabilities() -> None:
    rng = np.random.default_rng(1)
    teacher = rng.normal(size=(5, 4)).astype(np.float32)
    second = rng.normal(size=(3, 4)).astype(np.float32)  # rows 3 and 4 (log lines) have none
    for weight in (0.0, 0.3, 1.0):
        mixed = teacher.copy()
        mix_intent_logits(mixed, second, weight)
        want = (1 - weight) * _probs(teacher[:3]) + weight * _probs(second)
        np.testing.assert_allclose(_probs(mixed[:3]), want, atol=1e-5)
        np.testing.assert_array_equal(mixed[3:], teacher[3:])
    with pytest.raises(ValueError, match="mpnet_weight"):
        mix_intent_logits(teacher.copy(), second, 1.5)


def test_the_linear_head_learns_separable_classes() -> None:
    rng = np.random.default_rng(2)
    centres = np.eye(3, 8, dtype=np.float32)
    y = rng.integers(0, 3, 300)
    x = centres[y] + rng.normal(0, 0.2, (300, 8)).astype(np.float32)
    w = fit_softmax(x, y, 3)
    assert w.shape == (9, 3)
    assert float(np.mean(softmax_logits(w, x).argmax(1) == y)) > 0.97
    y_new = rng.integers(0, 3, 100)
    x_new = centres[y_new] + rng.normal(0, 0.2, (100, 8)).astype(np.float32)
    assert float(np.mean(softmax_logits(w, x_new).argmax(1) == y_new)) > 0.95


@pytest.mark.slow
def test_the_mpnet_forward_masks_padding_and_reads_its_shape() -> None:
    run_check_script("mpnet_checks.py", "mpnet checks passed")
