"""The out-of-scope decision chosen on left-out sources: the bar, the temperature, and that the
build's metrics and the agent's recognizer apply the same rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from firmware_tools.model.cross_source import OOS, FoldResult, choose_calibration, decide, fold_metrics
from firmware_tools.model.metrics import accept

DEFAULT_BUNDLE = Path(__file__).resolve().parents[1] / "edge_agent" / "models" / "default"


def _probs(*rows: tuple[float, ...]) -> np.ndarray:
    out = np.zeros((len(rows), OOS + 1), np.float32)
    for i, row in enumerate(rows):
        out[i, : len(row) - 1] = row[:-1]
        out[i, OOS] = row[-1]
    return out


def test_a_weak_out_of_scope_answer_gives_way_to_the_best_intent() -> None:
    probs = _probs((0.3, 0.1, 0.6), (0.05, 0.05, 0.9), (0.7, 0.2, 0.1))
    pred, conf = decide(probs, oos_bar=0.8)
    assert pred.tolist() == [0, OOS, 0]
    assert conf.tolist() == pytest.approx([0.3, 0.9, 0.7])
    assert decide(probs, 0.0)[0].tolist() == [OOS, OOS, 0]  # the plain argmax
    assert accept(probs, None, 0.8).tolist() == pred.tolist()  # the build's metrics: same rule


def test_the_bar_stops_where_out_of_scope_rejection_would_fall_below_the_target() -> None:
    rng = np.random.default_rng(1)
    n = 400
    gold = np.where(np.arange(n) < 200, 0, OOS)
    p_oos = np.where(gold == OOS, rng.uniform(0.55, 1.0, n), rng.uniform(0.0, 0.7, n))
    probs = np.zeros((n, OOS + 1))
    probs[:, OOS] = p_oos
    probs[:, 0] = 1 - p_oos
    logits = np.log(probs + 1e-9).astype(np.float32)
    res = FoldResult("x", probs.astype(np.float32), logits, gold)
    t, bar = choose_calibration([res], min_oos_rejection=0.9)
    m = fold_metrics(res, t, bar)
    assert m["oos_rejection"] >= 0.9
    tighter = fold_metrics(res, t, round(bar + 0.02, 2))
    assert tighter["oos_rejection"] < 0.9 or bar >= 0.98  # one step further would break the target
    assert m["false_rejection"] <= fold_metrics(res, t, 0.0)["false_rejection"]


def test_the_bar_holds_every_sources_rejection_not_their_mean() -> None:
    # the same strong source twice (rejects all of its out-of-scope rows until a bar of about 0.6)
    # and a weak one (94% at the argmax): their mean is over 95%, but no bar may rise
    def fold(source: str, p_oos_of_oos: np.ndarray) -> FoldResult:
        gold = np.array([0] * 50 + [OOS] * len(p_oos_of_oos))
        p_oos = np.concatenate([np.full(50, 0.1), p_oos_of_oos])
        probs = np.zeros((len(gold), OOS + 1))
        probs[:, OOS], probs[:, 0] = p_oos, 1 - p_oos
        return FoldResult(source, probs.astype(np.float32), np.log(probs + 1e-9).astype(np.float32), gold)

    strong = fold("strong", np.full(100, 0.6))
    weak = fold("weak", np.concatenate([np.full(94, 0.9), np.full(6, 0.2)]))
    assert choose_calibration([strong])[1] > 0.3  # alone, the strong source lets the bar rise
    chosen = choose_calibration([strong, strong, weak])
    assert chosen[1] == 0.0
    assert fold_metrics(weak, *chosen)["oos_rejection"] == pytest.approx(0.94)


def test_recognizer_applies_the_manifests_bar() -> None:
    from edge_agent.nlu.recognizer import IntentRecognizer
    from edge_agent.runtime.bundle import load_bundle
    from edge_agent.runtime.model import Model

    model = Model(load_bundle(DEFAULT_BUNDLE), tasks=("intents",))
    text = "who wrote the declaration of independence"
    plain = IntentRecognizer(model, calibration={"temperature": 1.0})
    assert plain.recognize([text])[0].intent is None
    # a bar above any probability: out of scope never wins, the best in-scope intent answers
    never = IntentRecognizer(model, calibration={"temperature": 1.0, "oos_bar": 1.01})
    got = never.recognize([text])[0]
    assert got.intent is not None and got.confidence < 0.5
    model.close()


def _calibrated_fold(source: str, n: int, sharpness: float, seed: int) -> FoldResult:
    """A fold whose logits give each answer's chance of being right at temperature ``sharpness``
    (about: two live classes): 1 is calibrated as it is, above 1 overconfident."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, n)
    p_right = rng.uniform(0.4, 0.95, n)
    right = rng.uniform(size=n) < p_right
    answer = np.where(right, gold, (gold + 1) % 3)
    logits = np.full((n, OOS + 1), -8.0, np.float32)
    top = np.log(p_right / (1 - p_right)) * sharpness  # the answer's log-odds against one rival
    logits[np.arange(n), answer] = top
    logits[np.arange(n), (answer + 2) % 3] = 0.0
    return FoldResult(source, np.zeros_like(logits), logits, gold)


def test_the_worst_source_rule_helps_the_source_the_pooled_fit_leaves_off() -> None:
    from firmware_tools.model.cross_source import choose_temperature

    big = _calibrated_fold("big", 4000, 1.0, 1)  # the pool's NLL follows it: about 1
    small = _calibrated_fold("small", 400, 3.0, 2)  # overconfident: wants about 3
    folds = [big, small]
    t_nll, t_worst = choose_temperature(folds, "nll"), choose_temperature(folds, "worst_ece")
    worst = {t: max(fold_metrics(r, t)["ece"] for r in folds) for t in (t_nll, t_worst)}
    assert t_nll < t_worst
    assert worst[t_worst] < worst[t_nll] - 0.02
    assert choose_calibration(folds)[0] == t_worst  # the build's rule
    assert choose_calibration(folds, rule="nll")[0] == t_nll
    assert choose_calibration(folds, rule="worst_ece")[0] == t_worst
    with pytest.raises(ValueError, match="temperature rule"):
        choose_temperature(folds, "median")


def test_each_sources_left_out_calibration_never_reads_that_source() -> None:
    from firmware_tools.model.cross_source import left_out_calibration

    folds = [_calibrated_fold(s, 600, k, i) for i, (s, k) in enumerate((("a", 1.0), ("b", 2.0), ("c", 3.0)))]
    got = left_out_calibration(folds)
    assert got["a"] == choose_calibration(folds[1:])
    assert got["c"] == choose_calibration(folds[:2])
    changed = [folds[0], folds[1], _calibrated_fold("c", 600, 0.5, 9)]
    again = left_out_calibration(changed)
    assert again["c"] == got["c"]  # c's own logits never enter its choice
    assert again["a"] != got["a"]  # but they enter the others'
    assert left_out_calibration(folds[:1]) == {}
