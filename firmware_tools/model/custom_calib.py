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

from edge_agent.nlu.custom.match import example_layout, fit_logistic, intent_cohesion, intent_scores

__all__ = ["Episode", "calibrate_custom", "episodes_from_examples", "sgd_episodes"]

N_EXAMPLES = 10
N_TAUGHT = 12
N_EPISODES = 6
TARGET_REJECTION = 0.93
TOP_K = (1, 2, 3)
COHESION_WEIGHTS = (0.0, 0.25, 0.5, 0.75)


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


@dataclass
class _Scored:
    """One episode embedded: examples ordered by intent, queries, their gold intents."""

    vectors: np.ndarray
    starts: np.ndarray
    queries: np.ndarray
    gold: np.ndarray


def _embed_episode(embed: Callable[[list[str]], np.ndarray], ep: Episode) -> _Scored:
    order = np.argsort(np.asarray(ep.example_intent), kind="stable")
    labels = np.asarray(ep.example_intent)[order]
    vectors = embed([ep.examples[i] for i in order])
    starts = np.searchsorted(labels, np.arange(ep.n_intents)).astype(np.intp)
    return _Scored(vectors, starts, embed(ep.queries), np.asarray(ep.query_intent))


def _adjusted(sc: _Scored, top_k: int, weight: float, ref: float) -> tuple[np.ndarray, np.ndarray]:
    """(best intent, its score less the intent's cohesion offset) of every query, as the agent
    scores them (``edge_agent.nlu.custom.match``; each example its own template here)."""
    layout = example_layout(sc.starts, len(sc.vectors))
    scores = intent_scores(sc.queries @ sc.vectors.T, layout, top_k)
    cohesion = intent_cohesion(sc.vectors, sc.starts, np.arange(len(sc.vectors)), top_k)
    scores = scores - np.where(np.isnan(cohesion), 0.0, weight * (cohesion - ref))[None, :]
    best = scores.argmax(axis=1)
    return best, scores[np.arange(len(best)), best]


def _cohesion_ref(scored: Sequence[_Scored], top_k: int) -> float:
    values = [intent_cohesion(s.vectors, s.starts, np.arange(len(s.vectors)), top_k) for s in scored]
    flat = np.concatenate(values)
    return float(np.nanmean(flat)) if np.isfinite(flat).any() else 0.0


def calibrate_custom(
    embed: Callable[[list[str]], np.ndarray],
    episodes: Sequence[Episode],
    target_rejection: float = TARGET_REJECTION,
) -> tuple[dict[str, float], dict[str, float]]:
    """(``calibration.custom_intents`` for the manifest, metrics). Over every ``top_k`` and
    cohesion weight tried, the one that recognizes the most taught sentences while leaving
    ``target_rejection`` of the untaught ones alone; its threshold and confidence map."""
    scored = [_embed_episode(embed, ep) for ep in episodes]
    best: tuple[float, dict[str, float], dict[str, float]] | None = None
    for top_k in TOP_K:
        ref = _cohesion_ref(scored, top_k)
        for weight in COHESION_WEIGHTS:
            cal, m = _fit(scored, top_k, weight, ref, target_rejection)
            if best is None or m["custom_recognized"] > best[0] + 1e-9:
                best = (m["custom_recognized"], cal, m)
    assert best is not None
    return best[1], best[2]


def _fit(
    scored: Sequence[_Scored], top_k: int, weight: float, ref: float, target: float
) -> tuple[dict[str, float], dict[str, float]]:
    picks = [_adjusted(s, top_k, weight, ref) for s in scored]
    score = np.concatenate([p[1] for p in picks])
    gold = np.concatenate([s.gold for s in scored])
    ok = np.concatenate([p[0] for p in picks]) == gold
    taught = gold >= 0
    ok &= taught
    threshold = _threshold(score[~taught], target)
    accepted = score >= threshold
    slope, intercept = fit_logistic(score, ok)
    metrics = {
        "custom_recognized": float((ok & accepted)[taught].mean()) if taught.any() else 0.0,
        "custom_uncovered_rejected": float((~accepted)[~taught].mean()) if (~taught).any() else 0.0,
        "custom_threshold": float(threshold),
        "custom_queries": float(len(score)),
    }
    cal = {
        "threshold": round(threshold, 4),
        "slope": round(slope, 4),
        "intercept": round(intercept, 4),
        "top_k": top_k,
        "cohesion_weight": weight,
        "cohesion_ref": round(ref, 4),
    }
    return cal, metrics


def _threshold(untaught: np.ndarray, target: float) -> float:
    """The lowest score that leaves ``target`` of the untaught queries unmatched."""
    if len(untaught) == 0:
        return 0.5
    return float(np.quantile(untaught, target))
