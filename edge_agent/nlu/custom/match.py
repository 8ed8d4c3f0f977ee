"""The decision between the built-in intents, the user's custom intents and out of scope (pure).

Inputs per utterance: the built-in recognizer's decision (an intent or None, and its calibrated
confidence) and the similarity of the utterance to every example sentence of the custom intents:
the cosine of their sentence embeddings, mixed with their word-piece overlap when
``lexical_weight`` is set (``lexical.py``). An intent's score is the mean of its ``top_k`` highest
similarities (``top_k`` 1: the nearest example), less an offset for how alike its own examples
are: ``cohesion_weight * (cohesion - cohesion_ref)``, where ``cohesion`` is the same score of
each of its examples against its other examples (those of other templates), averaged
(``intent_cohesion``). An intent whose examples all say nearly the same words ("flip a coin")
needs a closer match than one whose examples are worded every which way; with frozen sentence
embeddings this moved both figures of the CLINC benchmark by several points (bench/custom_intents.py).

- the best custom intent needs ``score >= threshold``; below it the built-in decision stands;
- a built-in out-of-scope decision goes to the custom intent;
- an in-scope built-in decision is taken over only when the custom match is clearly better: its
  calibrated confidence is at least ``margin`` above the built-in one, or the utterance's
  similarity to the intent's nearest example reaches ``steal`` (the user said one of their own
  sentences, or nearly);
- a custom intent named like a built-in intent (examples given under ``HassTurnOn``) teaches
  that intent a phrasing: the decision is then that built-in intent (``kind`` "taught").

The confidence of a custom decision is ``sigmoid(slope * score + intercept)``, fitted on a
development set (``fit_logistic``) so that it reads as a probability like the built-in ones.
Defaults: ``CustomSettings()``; a bundle overrides them in ``calibration.custom_intents``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "CustomSettings",
    "Decision",
    "Layout",
    "decide",
    "example_layout",
    "fit_logistic",
    "intent_cohesion",
    "intent_scores",
]

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class CustomSettings:
    """Thresholds of the decision and the confidence map (see the module docstring).

    The defaults were chosen with frozen all-MiniLM-L6-v2 sentence embeddings standing in for the
    model's own (``bench/custom_intents.py --embedding minilm --tune``: chosen on CLINC150 val and
    out-of-scope train/val lines, reported on CLINC150 test and SGD test); a bundle with a trained
    sentence embedding ships its own in ``calibration.custom_intents``."""

    threshold: float = 0.39
    steal: float = 0.95
    margin: float = 0.2
    top_k: int = 3
    cohesion_weight: float = 0.5
    cohesion_ref: float = 0.542
    slope: float = 23.989
    intercept: float = -12.207
    # similarity = (1 - w) * embedding cosine + w * word-piece overlap (``lexical.py``); 0: the
    # embedding alone
    lexical_weight: float = 0.0

    @classmethod
    def from_calibration(cls, calibration: Mapping[str, Any] | None) -> CustomSettings:
        """The bundle's ``calibration.custom_intents`` over the defaults (``k`` is ``top_k``);
        keys it does not know and values that are not numbers are left at the defaults (a
        manifest is trusted data). A bundle that does not set ``cohesion_weight`` chose its
        threshold on plain scores: the offset is then off; one that does not set
        ``lexical_weight`` chose it on the embedding alone: the word overlap is then off."""
        raw = (calibration or {}).get("custom_intents")
        if not isinstance(raw, Mapping):
            return cls()
        values: dict[str, Any] = {"cohesion_weight": 0.0, "lexical_weight": 0.0}
        for f in fields(cls):
            value = raw.get(f.name, raw.get("k") if f.name == "top_k" else None)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                values[f.name] = max(1, int(value)) if f.name == "top_k" else float(value)
        return replace(cls(), **values)

    def confidence(self, score: float) -> float:
        z = self.slope * score + self.intercept
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


@dataclass(frozen=True)
class Decision:
    """``builtin``: the built-in decision stands (``intent`` may be None: out of scope);
    ``custom``: a custom intent; ``taught``: a built-in intent recognized through its examples."""

    kind: Literal["builtin", "custom", "taught"]
    intent: str | None
    confidence: float


@dataclass(frozen=True)
class Layout:
    """Where each intent's examples are, examples ordered by intent: intent ``i``'s start at
    ``starts[i]``; ``index`` (intents, most examples of one intent) lists them row by row, padded
    (``pad`` marks the padding); ``counts``: examples per intent (each has at least one)."""

    starts: npt.NDArray[np.intp]
    index: npt.NDArray[np.intp]
    pad: npt.NDArray[np.bool_]
    counts: npt.NDArray[np.intp]

    @property
    def fewest(self) -> int:
        return int(self.counts.min()) if len(self.counts) else 0


def example_layout(starts: npt.NDArray[np.intp], n_examples: int) -> Layout:
    """The ``Layout`` of ``n_examples`` examples ordered by intent, intent ``i``'s from ``starts[i]``."""
    starts = np.asarray(starts, dtype=np.intp)
    counts = np.append(starts[1:], n_examples) - starts
    cols = np.arange(int(counts.max()) if len(counts) else 0)
    pad = cols[None, :] >= counts[:, None]
    index = np.where(pad, 0, starts[:, None] + cols[None, :]).astype(np.intp)
    return Layout(starts, index, pad, counts.astype(np.intp))


def intent_scores(similarities: FloatArray, layout: Layout, top_k: int = 1) -> FloatArray:
    """Per intent, the mean of its ``top_k`` highest similarities (all of them when it has fewer).
    ``similarities``: (..., examples) ordered as ``layout`` says; returns (..., intents)."""
    if top_k <= 1:
        best: FloatArray = np.maximum.reduceat(similarities, layout.starts, axis=-1).astype(np.float32)
        return best
    table = similarities[..., layout.index]
    if layout.fewest < layout.index.shape[1]:
        table[..., layout.pad] = -np.inf
    table.sort(axis=-1)
    top = table[..., -top_k:]
    if layout.fewest >= top_k:
        out: FloatArray = top.sum(axis=-1) * np.float32(1.0 / top_k)
        return out
    top = np.where(np.isneginf(top), 0.0, top)  # an intent with fewer than top_k examples
    out = (top.sum(axis=-1) / np.minimum(top_k, layout.counts)).astype(np.float32)
    return out


def intent_cohesion(
    vectors: FloatArray,
    starts: npt.NDArray[np.intp],
    templates: npt.NDArray[np.intp],
    top_k: int = 1,
    similarity: Callable[[int, int], FloatArray] | None = None,
) -> FloatArray:
    """Per intent, the mean over its examples of their score against the intent's examples of
    other templates (an example's own expansions would make any intent look cohesive); NaN for an
    intent with a single template. ``vectors``: unit rows ordered by intent, intent ``i``'s
    starting at ``starts[i]``; ``similarity(a, b)``: the similarities among examples ``a:b``
    (default: the cosines of their vectors)."""
    ends = [*starts[1:].tolist(), len(vectors)]
    out = np.full(len(starts), np.nan, dtype=np.float32)
    for i, (a, b) in enumerate(zip(starts.tolist(), ends, strict=True)):
        tpl = templates[a:b]
        sims = vectors[a:b] @ vectors[a:b].T if similarity is None else similarity(a, b)
        sims[tpl[:, None] == tpl[None, :]] = -np.inf  # same template (the diagonal too)
        rows = []
        for row in sims:
            valid = row[np.isfinite(row)]
            if len(valid):
                k = min(top_k, len(valid))
                rows.append(float(np.partition(valid, len(valid) - k)[len(valid) - k :].mean()))
        if rows:
            out[i] = float(np.mean(rows))
    return out


def decide(
    builtin_intent: str | None,
    builtin_confidence: float,
    custom_intent: str | None,
    score: float,
    settings: CustomSettings,
    builtin_names: Collection[str] = (),
    nearest: float | None = None,
) -> Decision:
    """Built-in intent, custom intent or out of scope for one utterance (see the module docstring).
    ``score``: the custom intent's score (after its cohesion offset); ``nearest``: the similarity
    to its nearest example (default ``score``); ``builtin_names``: the model's intents (a custom
    intent of one of these names is taught)."""
    keep = Decision("builtin", builtin_intent, builtin_confidence)
    if custom_intent is None or score < settings.threshold:
        return keep
    if custom_intent == builtin_intent:
        return keep
    confidence = settings.confidence(score)
    if builtin_intent is not None:
        own_words = (score if nearest is None else nearest) >= settings.steal
        clearly_better = confidence >= builtin_confidence + settings.margin or own_words
        if not clearly_better:
            return keep
    return Decision("taught" if custom_intent in builtin_names else "custom", custom_intent, confidence)


def fit_logistic(
    scores: npt.ArrayLike, correct: npt.ArrayLike, steps: int = 200, l2: float = 1e-3
) -> tuple[float, float]:
    """(slope, intercept) of ``P(correct) = sigmoid(slope * score + intercept)`` by Newton's method
    on the log-likelihood (a small L2 penalty keeps a separable set finite)."""
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    design = np.stack([x, np.ones_like(x)], axis=1)
    w = np.zeros(2)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        grad = design.T @ (p - y) + l2 * w
        hess = (design * (p * (1 - p))[:, None]).T @ design + l2 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return float(w[0]), float(w[1])
