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

from edge_agent.nlu.custom.lexical import Lexical
from edge_agent.nlu.custom.match import example_layout, fit_logistic, intent_cohesion, intent_scores

__all__ = [
    "Episode",
    "calibrate_bundle",
    "calibrate_custom",
    "episodes_from_examples",
    "recalibrate_bundle",
    "sgd_episodes",
]

N_EXAMPLES = 10
N_TAUGHT = 12
N_EPISODES = 6
# the balanced choice (``target_rejection`` None) weighs recognized and left-alone shares against
# these goals (the custom-intents issue's targets): min(recognized / 0.85, left alone / 0.92)
GOAL_RECOGNIZED = 0.85
GOAL_REJECTED = 0.92
TOP_K = (1, 2, 3)
COHESION_WEIGHTS = (0.0, 0.25, 0.5, 0.75)
LEXICAL_WEIGHTS = (0.0, 0.25, 0.5, 0.75)


@dataclass
class Episode:
    examples: list[str]
    example_intent: list[int]
    queries: list[str]
    query_intent: list[int]  # -1: an intent nobody taught
    n_intents: int


def episodes_from_groups(
    groups: dict[str, list[str]],
    seed: int,
    n_taught: int = N_TAUGHT,
    families: dict[str, set[str]] | None = None,
) -> list[Episode]:
    """Episodes over ``groups`` (intent -> its sentences): ``n_taught`` intents taught with
    ``N_EXAMPLES`` sentences each, every other sentence a query. ``families`` (intent -> the
    services it belongs to): an untaught intent of a taught intent's service is left out of the
    episode; its sentences ask about what the user taught ("find a restaurant" beside a taught
    "book a table"), neither a request of that intent nor one that no intent covers."""
    rng = random.Random(seed)
    names = sorted(g for g, rows in groups.items() if len(rows) > N_EXAMPLES + 5)
    n_taught = min(n_taught, max(1, len(names) - 1))
    out = []
    for _ in range(N_EPISODES):
        taught = rng.sample(names, n_taught)
        near = set().union(*((families or {}).get(t, set()) for t in taught))
        ep = Episode([], [], [], [], n_taught)
        for name in names:
            rows = list(groups[name])
            rng.shuffle(rows)
            if name not in taught and (families or {}).get(name, set()) & near:
                continue
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
    the built-in intents), one group per SGD intent name across services; the untaught queries
    are those of services none of whose intents is taught."""
    from firmware_tools.data.sgd import mapped_sgd

    groups: dict[str, list[str]] = defaultdict(list)
    families: dict[str, set[str]] = defaultdict(set)
    for row, ex in mapped_sgd(data_dir, "dev"):
        if ex.intent is None:
            groups[row.intent].append(row.text)
            families[row.intent].add(row.family)
    return episodes_from_groups(groups, seed, families=families)


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
    """One episode embedded: examples ordered by intent, the similarities of the queries to them
    and among them (the embedding's cosines, and the word-piece overlap when it is known), the
    queries' gold intents."""

    vectors: np.ndarray
    starts: np.ndarray
    queries: np.ndarray  # (queries, examples): embedding cosines
    examples: np.ndarray  # (examples, examples): embedding cosines
    gold: np.ndarray
    lexical_queries: np.ndarray | None = None
    lexical_examples: np.ndarray | None = None

    def mixed(self, lexical: float) -> tuple[np.ndarray, np.ndarray]:
        """(queries x examples, examples x examples) as ``CustomIndex.similarities`` mixes them."""
        if lexical <= 0 or self.lexical_queries is None or self.lexical_examples is None:
            return self.queries, self.examples
        w = np.float32(lexical)
        queries = (1 - w) * self.queries + w * self.lexical_queries
        return queries, (1 - w) * self.examples + w * self.lexical_examples


Pieces = Callable[[list[str]], tuple[list[np.ndarray], np.ndarray]]


def _embed_episode(embed: Callable[[list[str]], np.ndarray], ep: Episode, pieces: Pieces | None) -> _Scored:
    order = np.argsort(np.asarray(ep.example_intent), kind="stable")
    labels = np.asarray(ep.example_intent)[order]
    examples = [ep.examples[i] for i in order]
    vectors = embed(examples)
    starts = np.searchsorted(labels, np.arange(ep.n_intents)).astype(np.intp)
    queries = embed(ep.queries) @ vectors.T
    sc = _Scored(vectors, starts, queries, vectors @ vectors.T, np.asarray(ep.query_intent))
    if pieces is not None:
        example_ids, weights = pieces(examples)
        lexical = Lexical(weights, example_ids)
        sc.lexical_examples = np.stack([lexical.similarities(i) for i in example_ids])
        sc.lexical_queries = np.stack([lexical.similarities(i) for i in pieces(ep.queries)[0]])
    return sc


def _cohesion(sc: _Scored, top_k: int, lexical: float) -> np.ndarray:
    """Each taught intent's cohesion (each example its own template here)."""
    _, among = sc.mixed(lexical)
    return intent_cohesion(
        sc.vectors, sc.starts, np.arange(len(sc.vectors)), top_k, lambda a, b: among[a:b, a:b].copy()
    )


def _adjusted(
    sc: _Scored, top_k: int, weight: float, ref: float, lexical: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(best intent, its score less the intent's cohesion offset) of every query, as the agent
    scores them (``edge_agent.nlu.custom.match``)."""
    layout = example_layout(sc.starts, len(sc.vectors))
    sims, _ = sc.mixed(lexical)
    scores = intent_scores(sims.astype(np.float32), layout, top_k)
    cohesion = _cohesion(sc, top_k, lexical)
    scores = scores - np.where(np.isnan(cohesion), 0.0, weight * (cohesion - ref))[None, :]
    best = scores.argmax(axis=1)
    return best, scores[np.arange(len(best)), best]


def _cohesion_ref(scored: Sequence[_Scored], top_k: int, lexical: float = 0.0) -> float:
    flat = np.concatenate([_cohesion(s, top_k, lexical) for s in scored])
    return float(np.nanmean(flat)) if np.isfinite(flat).any() else 0.0


def calibrate_custom(
    embed: Callable[[list[str]], np.ndarray],
    episodes: Sequence[Episode],
    target_rejection: float | None = None,
    pieces: Pieces | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """(``calibration.custom_intents`` for the manifest, metrics). Over every ``top_k``,
    cohesion weight and (with ``pieces``: texts -> their token ids and the piece weights) weight
    of the word-piece overlap tried, the one that does best, and its threshold and confidence
    map. Best: with ``target_rejection``, the most taught sentences recognized while that share
    of the untaught ones is left alone; without (the build's choice), the threshold and settings
    that make ``min(recognized / GOAL_RECOGNIZED, left alone / GOAL_REJECTED)`` largest."""
    scored = [_embed_episode(embed, ep, pieces) for ep in episodes]
    best: tuple[float, dict[str, float], dict[str, float]] | None = None
    for lexical in LEXICAL_WEIGHTS if pieces is not None else (0.0,):
        for top_k in TOP_K:
            ref = _cohesion_ref(scored, top_k, lexical)
            for weight in COHESION_WEIGHTS:
                cal, m = _fit(scored, top_k, weight, ref, target_rejection, lexical)
                goal = m["custom_recognized"] if target_rejection is not None else _goal(m)
                if best is None or goal > best[0] + 1e-9:
                    best = (goal, cal, m)
    assert best is not None
    return best[1], best[2]


def _goal(m: dict[str, float]) -> float:
    return min(m["custom_recognized"] / GOAL_RECOGNIZED, m["custom_uncovered_rejected"] / GOAL_REJECTED)


def _fit(
    scored: Sequence[_Scored],
    top_k: int,
    weight: float,
    ref: float,
    target: float | None,
    lexical: float = 0.0,
) -> tuple[dict[str, float], dict[str, float]]:
    picks = [_adjusted(s, top_k, weight, ref, lexical) for s in scored]
    score = np.concatenate([p[1] for p in picks])
    gold = np.concatenate([s.gold for s in scored])
    ok = np.concatenate([p[0] for p in picks]) == gold
    taught = gold >= 0
    ok &= taught
    if target is not None:
        threshold = _threshold(score[~taught], target)
    else:
        threshold = _balanced_threshold(score, ok, taught)
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
        "lexical_weight": lexical,
    }
    return cal, metrics


def _balanced_threshold(score: np.ndarray, ok: np.ndarray, taught: np.ndarray) -> float:
    """The threshold (among the untaught scores' quantiles 0.5-0.995) that makes
    ``min(recognized / GOAL_RECOGNIZED, left alone / GOAL_REJECTED)`` largest."""
    untaught = score[~taught]
    if len(untaught) == 0 or not taught.any():
        return 0.5
    best, chosen = -1.0, 0.5
    for t in np.quantile(untaught, np.arange(0.5, 0.9951, 0.005)):
        recognized = float((ok & (score >= t))[taught].mean())
        alone = float((untaught < t).mean())
        goal = min(recognized / GOAL_RECOGNIZED, alone / GOAL_REJECTED)
        if goal > best + 1e-9:
            best, chosen = goal, float(t)
    return chosen


def _threshold(untaught: np.ndarray, target: float) -> float:
    """The lowest score that leaves ``target`` of the untaught queries unmatched."""
    if len(untaught) == 0:
        return 0.5
    return float(np.quantile(untaught, target))


def calibrate_bundle(
    root: Path, episodes: Sequence[Episode], variant: str = "default"
) -> tuple[dict[str, float], dict[str, float]]:
    """``calibrate_custom`` for one variant of the bundle at ``root``, through the int8 runtime
    (its sentence embedding and its tokenizer's word pieces)."""
    from edge_agent.nlu.custom import text_pieces
    from edge_agent.runtime.bundle import load_bundle
    from edge_agent.runtime.model import Model

    model = Model(load_bundle(root), threads=2, variant=variant, tasks=("intents",))

    def embed(texts: list[str]) -> np.ndarray:
        ids = np.stack([model.tokenizer.encode(t).ids for t in texts]).astype(np.int32)
        emb = model.run_intent_outputs(ids).embedding
        assert emb is not None, "the bundle's intent graph writes no sentence embedding"
        return emb

    try:
        return calibrate_custom(embed, episodes, pieces=lambda texts: text_pieces(model, texts))
    finally:
        model.close()


def recalibrate_bundle(root: Path, data_dir: Path, seed: int | None = None) -> dict[str, Any]:
    """Choose ``calibration.custom_intents`` of an existing bundle again, as ``build-model`` does
    (SGD development episodes of ``data_dir``; ``seed`` default: the bundle's build seed), for
    the default variant and every variant that has one; rewrites the manifest in place (atomic)
    and returns it. Raises ``ValueError`` without SGD's development split."""
    from edge_agent.runtime.bundle import load_bundle
    from firmware_tools.staging import rewrite_manifest

    if not (data_dir / "sgd" / "dev.jsonl").is_file():
        dev = data_dir / "sgd" / "dev.jsonl"
        raise ValueError(f"{dev} not found: the episodes come from SGD's development split")
    manifest = load_bundle(root).manifest
    if seed is None:
        seed = int(manifest.get("build", {}).get("seed", 7))
    episodes = sgd_episodes(data_dir, seed)
    cal, metrics = calibrate_bundle(root, episodes)
    manifest.setdefault("calibration", {})["custom_intents"] = cal
    manifest.setdefault("metrics", {}).setdefault("student_int8", {}).update(metrics)
    for name, entry in manifest.get("variants", {}).items():
        if "custom_intents" in entry.get("calibration", {}):
            entry["calibration"]["custom_intents"], m = calibrate_bundle(root, episodes, name)
            entry.setdefault("metrics", {}).setdefault("student_int8", {}).update(m)
    rewrite_manifest(root, manifest)
    return manifest
