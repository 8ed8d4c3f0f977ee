"""Calibration of custom intents: the threshold on the sentence-embedding score and the map from
score to confidence, chosen by simulating users who teach the agent intents of their own.

An episode draws a handful of intents the model was never trained to tell apart, gives each a
few example sentences (what a user writes into a custom-sentences file), and asks two questions
of every other sentence: is a sentence of a taught intent given that intent, and is a sentence of
an intent nobody taught left alone? The threshold is the lowest score at which, over all
episodes, at least ``target_rejection`` of the untaught sentences stay unmatched; the confidence
is a logistic fit of "the best intent is right" on the score.

With a data directory the episodes come from the Schema-Guided Dialogue development split
(crowd-written requests of banking, travel, events, restaurants...: none of them our intents,
never trained on; the intent head never saw SGD labels and its sentence embedding learnt from
SGD's training split only). Without one (the tiny build) they come from the generated held-out
split, with our own intents standing in.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edge_agent.nlu.custom_match import TOP_K, best_intents, intent_scores

__all__ = ["Episode", "calibrate_custom", "episodes_from_examples", "sgd_episodes"]

N_EXAMPLES = 10
N_TAUGHT = 12
N_EPISODES = 6
TARGET_REJECTION = 0.93


@dataclass
class Episode:
    examples: list[str]
    example_intent: list[int]
    queries: list[str]
    query_intent: list[int]  # -1: an intent nobody taught
    n_intents: int


def episodes_from_groups(groups: dict[str, list[str]], seed: int, n_taught: int = N_TAUGHT) -> list[Episode]:
    """Episodes over ``groups`` (intent -> its sentences): ``n_taught`` intents taught with
    ``N_EXAMPLES`` sentences each, every other sentence a query."""
    rng = random.Random(seed)
    names = sorted(g for g, rows in groups.items() if len(rows) > N_EXAMPLES + 5)
    n_taught = min(n_taught, max(1, len(names) - 1))
    out = []
    for _ in range(N_EPISODES):
        taught = rng.sample(names, n_taught)
        ep = Episode([], [], [], [], n_taught)
        for name in names:
            rows = list(groups[name])
            rng.shuffle(rows)
            if name in taught:
                k = taught.index(name)
                ep.examples += rows[:N_EXAMPLES]
                ep.example_intent += [k] * N_EXAMPLES
                ep.queries += rows[N_EXAMPLES:]
                ep.query_intent += [k] * (len(rows) - N_EXAMPLES)
            else:
                ep.queries += rows
                ep.query_intent += [-1] * len(rows)
        out.append(ep)
    return out


def sgd_episodes(data_dir: Path, seed: int) -> list[Episode]:
    """Episodes from SGD's development split: its intents that are not ours (out of scope for
    the built-in intents), one group per SGD intent name across services."""
    from firmware_tools.data.sgd import mapped_sgd

    groups: dict[str, list[str]] = defaultdict(list)
    for row, ex in mapped_sgd(data_dir, "dev"):
        if ex.intent is None:
            groups[row.intent].append(row.text)
    return episodes_from_groups(groups, seed)


def episodes_from_examples(examples: Sequence[Any], seed: int) -> list[Episode]:
    """Episodes from labelled examples (``.text``, ``.intent``; None counts as untaught)."""
    groups: dict[str, list[str]] = defaultdict(list)
    oos: list[str] = []
    for ex in examples:
        (groups[ex.intent] if ex.intent is not None else oos).append(ex.text)
    eps = episodes_from_groups(groups, seed, n_taught=max(2, len(groups) // 2))
    for ep in eps:
        ep.queries += oos
        ep.query_intent += [-1] * len(oos)
    return eps


def calibrate_custom(
    embed: Callable[[list[str]], np.ndarray],
    episodes: Sequence[Episode],
    target_rejection: float = TARGET_REJECTION,
) -> tuple[dict[str, float], dict[str, float]]:
    """(calibration for the manifest, metrics): threshold, logistic slope and intercept, k."""
    scores, right, taught = [], [], []
    for ep in episodes:
        ex = embed(ep.examples)
        q = embed(ep.queries)
        s = intent_scores(q, ex, np.asarray(ep.example_intent), ep.n_intents, TOP_K)
        best, top = best_intents(s)
        gold = np.asarray(ep.query_intent)
        scores.append(top)
        right.append((best == gold) & (gold >= 0))
        taught.append(gold >= 0)
    score, ok, is_taught = np.concatenate(scores), np.concatenate(right), np.concatenate(taught)
    threshold = _threshold(score[~is_taught], target_rejection)
    slope, intercept = _logistic(score, ok.astype(np.float64))
    accepted = score >= threshold
    metrics = {
        "custom_recognized": float((ok & accepted)[is_taught].mean()) if is_taught.any() else 0.0,
        "custom_uncovered_rejected": float((~accepted)[~is_taught].mean()) if (~is_taught).any() else 0.0,
        "custom_threshold": float(threshold),
        "custom_queries": float(len(score)),
    }
    cal = {
        "threshold": round(threshold, 4),
        "slope": round(slope, 4),
        "intercept": round(intercept, 4),
        "k": TOP_K,
    }
    return cal, metrics


def _threshold(untaught: np.ndarray, target: float) -> float:
    """The lowest score that leaves ``target`` of the untaught queries unmatched."""
    if len(untaught) == 0:
        return 0.5
    return float(np.quantile(untaught, target))


def _logistic(x: np.ndarray, y: np.ndarray, steps: int = 50) -> tuple[float, float]:
    """P(y | x) = sigmoid(a x + b) by Newton's method (a small ridge keeps it finite)."""
    X = np.stack([x.astype(np.float64), np.ones_like(x, np.float64)], axis=1)
    w = np.zeros(2)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        grad = X.T @ (p - y) + 1e-3 * w
        hess = (X * (p * (1 - p))[:, None]).T @ X + 1e-3 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), float(w[1])
