"""The build's second teacher for intents: a linear head on frozen all-mpnet-base-v2 embeddings
(firmware_tools/model/mpnet.py, linear.py) whose probabilities are mixed into the fine-tuned
teacher's (build.mix_intent_logits)."""

from __future__ import annotations

import numpy as np
import pytest
from childcheck import run_check_script

from firmware_tools.model.build import SecondTeacher, mix_intent_logits
from firmware_tools.model.dataset import INTENT_LABELS
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


def test_the_head_fitted_on_the_labelled_rows_labels_other_texts() -> None:
    from types import SimpleNamespace

    rng = np.random.default_rng(3)
    centres = np.eye(3, 8, dtype=np.float32)
    y = rng.integers(0, 3, 200).astype(np.int32)
    emb = centres[y] + rng.normal(0, 0.2, (200, 8)).astype(np.float32)
    y[150:] = 2 - y[150:]  # augmented rows' labels, wrong on purpose: the head must not learn them
    data = SimpleNamespace(n_labelled=150, it_tr=SimpleNamespace(intent=y))
    second = SecondTeacher(emb, 0.5)
    # on the transfer rows' own embeddings it is the head that labels them
    np.testing.assert_allclose(second.logits_of(emb, data), second.logits(data), atol=1e-5)  # type: ignore[arg-type]
    w = fit_softmax(emb[:150], y[:150], len(INTENT_LABELS))
    y_new = rng.integers(0, 3, 50)
    new = centres[y_new] + rng.normal(0, 0.2, (50, 8)).astype(np.float32)
    got = second.logits_of(new, data)  # type: ignore[arg-type]
    np.testing.assert_allclose(got, softmax_logits(w, new), atol=1e-5)
    assert float(np.mean(got.argmax(1) == y_new)) > 0.95
    # a fold's head (rows kept) is its own
    keep = np.arange(200) % 2 == 0
    fold = second.logits_of(new, data, keep)  # type: ignore[arg-type]
    w_fold = fit_softmax(emb[:150][keep[:150]], y[:150][keep[:150]], len(INTENT_LABELS))
    np.testing.assert_allclose(fold, softmax_logits(w_fold, new), atol=1e-5)


@pytest.mark.slow
def test_the_mpnet_forward_masks_padding_and_reads_its_shape() -> None:
    run_check_script("mpnet_checks.py", "mpnet checks passed")
