"""Softmax regression on fixed features: the linear head that reads a frozen encoder's sentence
embeddings (the build's second teacher, ``build._mpnet_intent_logits``; ``bench/encoder_probe.py``)."""

from __future__ import annotations

import numpy as np

__all__ = ["fit_softmax", "softmax_logits"]


def _with_bias(x: np.ndarray) -> np.ndarray:
    return np.hstack([np.asarray(x, np.float32), np.ones((len(x), 1), np.float32)])


def fit_softmax(
    x: np.ndarray, y: np.ndarray, n_classes: int, l2: float = 1e-4, steps: int = 400, lr: float = 0.05
) -> np.ndarray:
    """Weights (D + 1, C) of a multinomial logistic regression, bias last, fitted by Adam on the
    full batch with an L2 penalty (features are unit-length embeddings, so one step size fits)."""
    xb = _with_bias(x)
    w = np.zeros((xb.shape[1], n_classes), np.float32)
    onehot = np.eye(n_classes, dtype=np.float32)[np.asarray(y, np.int64)]
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        z = xb @ w
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = xb.T @ (p - onehot) / len(xb) + l2 * w
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def softmax_logits(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(N, C) logits of the fitted head."""
    return np.asarray(_with_bias(x) @ w, np.float32)
