"""bench/logs_category_probe.py: the probe's regression and its agreement count."""

from __future__ import annotations

import numpy as np
from benchload import load_bench

bench = load_bench("logs_category_probe")


def test_fit_separates_separable_classes_even_when_one_is_rare() -> None:
    rng = np.random.default_rng(0)
    centres = np.eye(3) * 4.0
    y = np.array([0] * 200 + [1] * 200 + [2] * 6)
    x = centres[y] + rng.normal(scale=0.5, size=(len(y), 3))
    w = bench.fit(x, y, 3)
    p = bench.softmax(np.hstack([x, np.ones((len(x), 1))]) @ w)
    assert (p.argmax(axis=1) == y).mean() > 0.97
    assert (p[y == 2].argmax(axis=1) == 2).all()  # the balanced weights keep the rare class


def test_agreement_counts_per_gold_label() -> None:
    total, per = bench.agreement(["net", "net", "auth"], ["net", "other", "auth"])
    assert round(total, 1) == 66.7
    assert per == {"net": "1/2", "auth": "1/1"}
