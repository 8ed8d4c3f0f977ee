"""A small stand-in recognizer for judging the *training data* before the real model exists.

Word-hash embeddings + two convolutions, one head for the intent and one for BIO slot tags,
trained for a few epochs on ``firmware_tools.data.intents.generate``. It is deliberately
weaker than the student model: if it gets a phrasing right, the generator covers it.
Bench-only (imports TensorFlow); used by ``bench/intents_dev.py --proxy``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

from edge_agent.nlu.home import Home
from edge_agent.nlu.schema import INTENTS, OUT_OF_SCOPE, SLOTS
from edge_agent.nlu.slots import build_slots
from edge_agent.records.intent import IntentResult, Span

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?|[^\sA-Za-z0-9]")
BUCKETS = 1 << 16
MAX_LEN = 32
LABELS = [*INTENTS, OUT_OF_SCOPE]
TAGS = ["O"] + [f"{p}-{s}" for s in SLOTS for p in ("B", "I")]


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)][:MAX_LEN]


def _hash(word: str) -> int:
    return 1 + zlib.crc32(word.encode()) % (BUCKETS - 1)


def encode(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.zeros((len(texts), MAX_LEN), np.int32)
    shape = np.zeros((len(texts), MAX_LEN), np.int32)
    for i, text in enumerate(texts):
        for j, (_, _, tok) in enumerate(_tokens(text)):
            ids[i, j] = _hash(tok.lower())
            shape[i, j] = 1 + (tok[:1].isupper()) + 2 * tok[:1].isdigit()
    return ids, shape


def tag_targets(text: str, spans: Sequence[tuple[int, int, str]]) -> list[int]:
    out = [0] * MAX_LEN
    for j, (start, end, _) in enumerate(_tokens(text)):
        for s, e, slot in spans:
            if start >= s and end <= e:
                out[j] = TAGS.index(("B-" if start == s or not text[s:start].strip() else "I-") + slot)
                break
    return out


class ProxyRecognizer:
    def __init__(self, epochs: int = 4, seed: int = 0) -> None:
        import tensorflow as tf

        tf.random.set_seed(seed)
        self.tf = tf
        self.epochs = epochs
        ids = tf.keras.Input((MAX_LEN,), dtype="int32")
        shp = tf.keras.Input((MAX_LEN,), dtype="int32")
        x = tf.keras.layers.Embedding(BUCKETS, 96)(ids) + tf.keras.layers.Embedding(4, 96)(shp)
        x = tf.keras.layers.Conv1D(160, 3, padding="same", activation="relu")(x)
        x = tf.keras.layers.Conv1D(160, 5, padding="same", activation="relu")(x)
        x = tf.keras.layers.Conv1D(160, 3, padding="same", activation="relu")(x)
        pooled = tf.keras.layers.GlobalMaxPooling1D()(x)
        intent = tf.keras.layers.Dense(len(LABELS), name="intent")(
            tf.keras.layers.Dense(160, activation="relu")(pooled)
        )
        tags = tf.keras.layers.Dense(len(TAGS), name="tags")(x)
        self.model = tf.keras.Model([ids, shp], [intent, tags])
        loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.model.compile(optimizer=tf.keras.optimizers.Adam(2e-3), loss=[loss, loss])

    def fit(self, examples: Sequence[object]) -> None:
        texts = [e.text for e in examples]  # type: ignore[attr-defined]
        ids, shape = encode(texts)
        y_int = np.array([LABELS.index(e.intent or OUT_OF_SCOPE) for e in examples], np.int32)  # type: ignore[attr-defined]
        y_tag = np.array([tag_targets(e.text, e.spans) for e in examples], np.int32)  # type: ignore[attr-defined]
        self.model.fit([ids, shape], [y_int, y_tag], batch_size=128, epochs=self.epochs, verbose=2)

    def save(self, path: str) -> None:
        self.model.save_weights(path)

    def load(self, path: str) -> None:
        self.model.load_weights(path)

    def recognize(
        self, texts: Sequence[str], home: Home | None, areas: Sequence[str | None]
    ) -> list[IntentResult]:
        ids, shape = encode(texts)
        intent_logits, tag_logits = self.model.predict([ids, shape], batch_size=256, verbose=0)
        out: list[IntentResult] = []
        for i, text in enumerate(texts):
            p = np.exp(intent_logits[i] - intent_logits[i].max())
            p /= p.sum()
            best = int(p.argmax())
            label = LABELS[best]
            if label == OUT_OF_SCOPE:
                out.append(IntentResult(text, None, float(p[best])))
                continue
            spans = _decode(text, tag_logits[i].argmax(-1))
            slots = build_slots(text, label, spans, home, areas[i])
            out.append(IntentResult(text, label, float(p[best]), slots))
        return out


def _decode(text: str, tags: np.ndarray) -> list[Span]:
    spans: list[Span] = []
    cur: list[object] | None = None
    for j, (start, end, _) in enumerate(_tokens(text)):
        tag = TAGS[int(tags[j])]
        if cur is not None and tag == f"I-{cur[2]}":
            cur[1] = end
            continue
        if cur is not None:
            spans.append(Span(int(cur[0]), int(cur[1]), str(cur[2]), 1.0))  # type: ignore[call-overload]
            cur = None
        if tag != "O":
            cur = [start, end, tag[2:]]
    if cur is not None:
        spans.append(Span(int(cur[0]), int(cur[1]), str(cur[2]), 1.0))  # type: ignore[call-overload]
    return spans
