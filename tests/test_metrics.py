"""The build's paired comparison of teacher and student on the same held-out examples."""

from __future__ import annotations

import numpy as np
import pytest

from firmware_tools.model.dataset import INTENT_LABELS, SLOT_TAGS
from firmware_tools.model.metrics import (
    OOS_INDEX,
    calibrate,
    class_balance,
    paired_test,
    per_example_correct,
    softmax,
)


def test_paired_test_counts_disagreements_and_gives_exact_p() -> None:
    a = np.array([True] * 10 + [False] * 2 + [True] * 5)
    b = np.array([False] * 10 + [True] * 2 + [True] * 5)
    r = paired_test(a, b)
    assert (r["a_only"], r["b_only"]) == (10, 2)
    # two-sided exact binomial: 2 * P(X <= 2 | n=12, 1/2) = 2 * 79 / 4096
    assert abs(r["p"] - round(2 * 79 / 4096, 4)) < 1e-9
    assert paired_test(b, a)["p"] == r["p"]


def test_paired_test_level_models_are_not_told_apart() -> None:
    same = np.array([True, False, True])
    assert paired_test(same, same) == {"a_only": 0, "b_only": 0, "p": 1.0}
    a, b = np.array([True, False]), np.array([False, True])
    assert paired_test(a, b)["p"] == 1.0


def _onehot(idx: list[int], n: int) -> np.ndarray:
    out = np.full((len(idx), n), -5.0)
    out[np.arange(len(idx)), idx] = 5.0
    return out


def test_per_example_correct_reads_each_head() -> None:
    b_name = next(t for t in SLOT_TAGS if t.startswith("B-"))
    b_tag = SLOT_TAGS.index(b_name)
    gold_intent = np.array([0, 1, OOS_INDEX, OOS_INDEX])
    ids = np.array([[5, 6, 0], [5, 6, 0], [5, 0, 0], [5, 0, 0]])
    gold_tags = np.zeros((4, 3), dtype=int)
    gold_tags[0, 1] = b_tag
    pred_tags = np.zeros((4, 3), dtype=int)
    pred_tags[0, 1] = b_tag
    pred_tags[1, 0] = b_tag  # a span the gold does not have
    pi = {
        "intent": _onehot([0, 2, OOS_INDEX, 3], len(INTENT_LABELS)),
        "slots": np.stack([_onehot(list(r), len(SLOT_TAGS)) for r in pred_tags]),
    }
    pl = {
        "severity": _onehot([1, 2], 5),
        "category": _onehot([0, 0], 5),
        "anomaly": np.array([[1.0], [-1.0]]),
    }
    gold_log = {"severity": np.array([1, 1]), "category": np.array([0, 3]), "anomaly": np.array([1.0, 1.0])}
    right = per_example_correct(pi, pl, gold_intent, gold_tags, ids, gold_log)
    assert right["intent_accuracy"].tolist() == [True, False, True, False]
    assert right["oos_rejection"].tolist() == [True, False]
    assert right["slot_exact"].tolist() == [True, False]
    assert right["severity_accuracy"].tolist() == [True, False]
    assert right["category_accuracy"].tolist() == [True, False]
    assert right["anomaly"].tolist() == [True, False]


def test_calibration_balances_a_mostly_out_of_scope_set() -> None:
    # one intent; 20 in-scope rows and 400 out-of-scope rows at a lower confidence (all
    # predicted as that intent): the threshold rises until the out-of-scope rows are rejected,
    # and no further (the in-scope rows stay accepted)
    n_in, n_oos = 20, 400
    logits = np.zeros((n_in + n_oos, len(INTENT_LABELS)), np.float32)
    logits[:n_in, 0] = 8.0
    logits[n_in:, 0] = 3.0
    gold = np.array([0] * n_in + [OOS_INDEX] * n_oos)
    weight = class_balance(gold)
    assert weight[:n_in].sum() == pytest.approx(weight[n_in:].sum())
    temperature, thresholds = calibrate(logits, gold)
    probs = softmax(logits, temperature)[:, 0]
    th = thresholds[INTENT_LABELS[0]]
    assert probs[n_in:].max() < th <= probs[:n_in].min()


def test_thresholds_stay_at_the_argmax_when_out_of_scope_is_already_rejected() -> None:
    logits = np.zeros((60, len(INTENT_LABELS)), np.float32)
    logits[:40, 0] = 2.0  # in scope, right but unsure
    logits[40:, OOS_INDEX] = 6.0  # out of scope, rejected by the model itself
    gold = np.array([0] * 40 + [OOS_INDEX] * 20)
    _, thresholds = calibrate(logits, gold)
    assert set(thresholds.values()) == {0.0}


def test_a_stricter_out_of_scope_target_raises_the_thresholds_further() -> None:
    # one intent: in-scope rows far above every out-of-scope row; 390 out-of-scope rows low, 10
    # spread higher: 97.5% are rejected by a threshold over the 390, 99.9% only over all 400
    n_in, n_oos = 200, 400
    logits = np.zeros((n_in + n_oos, len(INTENT_LABELS)), np.float32)
    logits[:n_in, 0] = 12.0
    logits[n_in : n_in + 390, 0] = 1.0
    logits[n_in + 390 :, 0] = np.linspace(4.0, 8.0, 10)
    gold = np.array([0] * n_in + [OOS_INDEX] * n_oos)
    name = INTENT_LABELS[0]
    _, usual = calibrate(logits, gold)
    _, strict = calibrate(logits, gold, oos_target=0.999)
    assert strict[name] > usual[name]
    assert all(strict[k] >= usual[k] for k in usual)
