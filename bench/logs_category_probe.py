"""How far the category labels carry without the student: a linear probe on frozen all-MiniLM-L6-v2.

Usage::

    .venv/bin/python bench/logs_category_probe.py [--data ../shared/eval/logs] [--generated 20000]

Trains a class-balanced softmax regression on the frozen encoder's mean-pooled embeddings of the
lines the category head learns from (the generated log lines of ``firmware_tools/data/logs.py``
and the loghub lines of the training systems with their per-template labels), then scores it on
the hand-labelled sample of ``bench/logs_categories.py``, at the argmax and with the service's
rule that a category under ``CATEGORY_MIN_P`` is ``other``. If the probe does no better than the
shipped student, the labels and lines it learns from are the limit, not the student's size.
Embedding 34,000 lines takes about 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from custom_intents import minilm_embedder
from logs_categories import DEFAULT_LABELS, read_labels
from logs_flags import DEFAULT_DATA

from edge_agent.logs.classifier import CATEGORY_MIN_P
from edge_agent.logs.labels import CATEGORIES
from firmware_tools.data import logs
from firmware_tools.data.loghub import load_loghub

CUT = 300  # characters of a training line embedded


def fit(x: np.ndarray, y: np.ndarray, classes: int, steps: int = 600, lr: float = 20.0) -> np.ndarray:
    """Softmax regression (weights with the bias as the last row), each class weighing the same."""
    xb = np.hstack([x, np.ones((len(x), 1), x.dtype)])
    counts = np.bincount(y, minlength=classes)
    weight = (len(y) / (classes * np.maximum(counts, 1)))[y][:, None] / len(y)
    w = np.zeros((xb.shape[1], classes))
    for _ in range(steps):
        p = softmax(xb @ w)
        p[np.arange(len(y)), y] -= 1.0
        w -= lr * (xb.T @ (p * weight) + 1e-4 * w)
    return w


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def agreement(gold: list[str], pred: list[str]) -> tuple[float, dict[str, str]]:
    per: dict[str, Counter[str]] = {}
    for g, p in zip(gold, pred, strict=True):
        per.setdefault(g, Counter())["right" if g == p else "wrong"] += 1
    total = sum(g == p for g, p in zip(gold, pred, strict=True)) / max(1, len(gold))
    return 100.0 * total, {k: f"{c['right']}/{c['right'] + c['wrong']}" for k, c in per.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="loghub 2k samples (../shared/eval/logs)")
    ap.add_argument("--generated", type=int, default=20000, help="generated lines (the build's count)")
    args = ap.parse_args()
    train = [(e.line, e.category) for e in logs.generate(0, args.generated)]
    train += [(line.line, line.category) for line in load_loghub(args.data)]
    rows = read_labels(DEFAULT_LABELS, args.data)
    embed = minilm_embedder()
    cats = list(CATEGORIES)
    w = fit(embed([t[:CUT] for t, _ in train]), np.array([cats.index(c) for _, c in train]), len(cats))
    test = embed([line for _, _, line in rows])
    p = softmax(np.hstack([test, np.ones((len(test), 1), test.dtype)]) @ w)
    gold = [c for _, c, _ in rows]
    print(f"probe trained on {len(train)} lines; scored on {len(rows)} hand-labelled lines")
    for min_p in (0.0, CATEGORY_MIN_P):
        pred = [cats[i] if p[k, i] >= min_p else "other" for k, i in enumerate(p.argmax(axis=1))]
        total, per = agreement(gold, pred)
        print(f"  below {min_p:.2f} is other: agreement {total:.1f}%  {per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
