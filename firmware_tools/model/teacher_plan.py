"""The teacher's training plan (no TensorFlow import, so build plans can name it cheaply)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TeacherPlan"]


@dataclass(frozen=True)
class TeacherPlan:
    max_len: int = 32  # word pieces, [CLS] and [SEP] included
    trainable_layers: int = 2  # the top layers fine-tuned; the ones below are frozen and cached
    epochs: int = 4
    batch: int = 64
    lr: float = 1e-4
    dropout: float = 0.1
