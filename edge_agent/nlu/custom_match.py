"""How close an utterance is to the examples of each custom intent, in the model's sentence
embedding space (pure numpy; the build calibrates with the same functions the agent runs).

An intent's score is the mean cosine of the utterance to that intent's ``k`` nearest examples
(fewer when the intent has fewer). With ``k`` = 2 one stray example cannot carry a match alone,
and an intent is not penalized for examples phrased unlike the utterance, as a centroid would be.
The best intent is a match when its score reaches the bundle's threshold; its confidence is a
logistic map of the score fitted when the bundle was built (``calibration.custom_intents``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["CustomCalibration", "best_intents", "intent_scores", "unit_rows"]

FloatArray = npt.NDArray[np.float32]
TOP_K = 2


@dataclass(frozen=True)
class CustomCalibration:
    """Threshold on the score and the logistic map score -> probability of being right."""

    threshold: float = 0.8
    slope: float = 20.0
    intercept: float = -15.0
    k: int = TOP_K

    @classmethod
    def from_manifest(cls, cal: dict[str, Any] | None) -> CustomCalibration:
        if not cal:
            return cls()
        return cls(
            float(cal.get("threshold", cls.threshold)),
            float(cal.get("slope", cls.slope)),
            float(cal.get("intercept", cls.intercept)),
            int(cal.get("k", cls.k)),
        )

    def confidence(self, score: npt.ArrayLike) -> FloatArray:
        z = self.slope * np.asarray(score, np.float32) + self.intercept
        out: FloatArray = (1.0 / (1.0 + np.exp(-z))).astype(np.float32)
        return out


def unit_rows(x: npt.ArrayLike) -> FloatArray:
    """Rows scaled to length 1 (a zero row stays zero)."""
    a = np.asarray(x, np.float32)
    norm = np.linalg.norm(a, axis=-1, keepdims=True)
    out: FloatArray = a / np.maximum(norm, 1e-12)
    return out


def intent_scores(
    queries: FloatArray,
    examples: FloatArray,
    example_intent: npt.NDArray[np.int64],
    n_intents: int,
    k: int = TOP_K,
) -> FloatArray:
    """(N, n_intents): mean cosine of each query to its ``k`` nearest examples of each intent
    (all of them when an intent has fewer); -1 for an intent without examples. Rows must be unit."""
    sims = queries @ examples.T  # (N, M)
    out = np.full((len(queries), n_intents), -1.0, np.float32)
    for intent in range(n_intents):
        cols = sims[:, example_intent == intent]
        if cols.shape[1] == 0:
            continue
        kk = min(k, cols.shape[1])
        top = np.partition(cols, cols.shape[1] - kk, axis=1)[:, -kk:]
        out[:, intent] = top.mean(axis=1)
    return out


def best_intents(scores: FloatArray) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """The best intent of each row and its score."""
    best = scores.argmax(axis=1)
    return best, scores[np.arange(len(scores)), best]
