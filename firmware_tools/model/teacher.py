"""The teacher: a pretrained encoder (``pretrained.py``) with its lower layers frozen and its top
layers fine-tuned, plus heads for every task the student learns (intent, slot tags, log
severity, category and anomaly). Word-piece tags and their move onto the student's tokens are in
``align.py``.

Frozen lower layers are run once over every text and their output is cached (float16), so
fine-tuning costs only the top layers; ``TeacherPlan.trainable_layers`` says how many. The
teacher works on WordPiece tokens; its slot-tag distributions are moved onto the student's
sentencepiece tokens by character offsets (``align_slot_logits``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from keras import layers, ops

from firmware_tools.model.pretrained import Checkpoint, WordPieces
from firmware_tools.model.teacher_plan import TeacherPlan

__all__ = [
    "FrozenEncoder",
    "Teacher",
    "build_teacher",
    "fit_teacher",
    "lower_features",
    "sentence_embeddings",
]


def _const(value: np.ndarray) -> keras.initializers.Initializer:
    return keras.initializers.Constant(np.asarray(value, np.float32))


class BertLayer(layers.Layer):
    """Post-norm transformer layer (BERT's), initialised from checkpoint weights."""

    def __init__(self, weights: dict[str, np.ndarray], heads: int, eps: float, dropout: float, **kw: Any):
        super().__init__(**kw)
        self._init = weights
        self.heads = heads
        self.eps = eps
        self.drop = layers.Dropout(dropout)

    def build(self, shape: Any) -> None:
        self.w = {
            k: self.add_weight(name=k, shape=v.shape, initializer=_const(v)) for k, v in self._init.items()
        }
        self._init = {}

    def _norm(self, x: Any, g: Any, b: Any) -> Any:
        mean = ops.mean(x, axis=-1, keepdims=True)
        var = ops.mean(ops.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * ops.rsqrt(var + self.eps) * g + b

    def call(self, h: Any, mask: Any, training: bool = False) -> Any:
        w = self.w
        d = h.shape[-1]
        dh = d // self.heads

        def split(x: Any) -> Any:
            x = ops.reshape(x, (-1, ops.shape(x)[1], self.heads, dh))
            return ops.transpose(x, (0, 2, 1, 3))

        q = split(ops.matmul(h, w["q"]) + w["q_b"])
        k = split(ops.matmul(h, w["k"]) + w["k_b"])
        v = split(ops.matmul(h, w["v"]) + w["v_b"])
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / math.sqrt(dh)
        scores = scores + (1.0 - mask[:, None, None, :]) * -1e4
        ctx = ops.matmul(ops.softmax(scores, axis=-1), v)
        ctx = ops.reshape(ops.transpose(ctx, (0, 2, 1, 3)), (-1, ops.shape(h)[1], d))
        a = ops.matmul(ctx, w["o"]) + w["o_b"]
        h = self._norm(h + self.drop(a, training=training), w["ln1_g"], w["ln1_b"])
        f = ops.gelu(ops.matmul(h, w["f1"]) + w["f1_b"], approximate=False)
        f = ops.matmul(f, w["f2"]) + w["f2_b"]
        return self._norm(h + self.drop(f, training=training), w["ln2_g"], w["ln2_b"])


class FrozenEncoder:
    """Embeddings and the first ``n_frozen`` layers, traced once for any batch and length."""

    def __init__(self, ckpt: Checkpoint, n_frozen: int) -> None:
        cfg = ckpt.config
        emb = ckpt.embeddings()
        self.width = cfg.width
        word = tf.constant(emb["word"])
        pos = tf.constant(emb["position"])
        typ = tf.constant(emb["type"][0])
        stack = [
            BertLayer(ckpt.layer(i), cfg.heads, cfg.eps, 0.0, name=f"frozen{i}") for i in range(n_frozen)
        ]

        def norm(x: Any) -> Any:
            mean = tf.reduce_mean(x, -1, keepdims=True)
            var = tf.reduce_mean(tf.square(x - mean), -1, keepdims=True)
            return (x - mean) * tf.math.rsqrt(var + cfg.eps) * emb["ln_g"] + emb["ln_b"]

        @tf.function(
            input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None, None], tf.float32)]
        )
        def run(ids: Any, mask: Any) -> Any:
            h = norm(tf.gather(word, ids) + pos[None, : tf.shape(ids)[1]] + typ)
            for layer in stack:
                h = layer(h, mask)
            return h

        self._run = run

    def __call__(self, wp: WordPieces, batch: int = 256) -> np.ndarray:
        """Features of every row as float16 (N, L, width); rows batched by similar length."""
        out = np.zeros((*wp.ids.shape, self.width), np.float16)
        lengths = wp.mask.sum(axis=1).astype(np.int64)
        order = np.argsort(lengths, kind="stable")  # padding in a batch costs nothing
        for s in range(0, len(order), batch):
            rows = order[s : s + batch]
            width = min(wp.ids.shape[1], max(1, int(lengths[rows].max())))
            h = self._run(wp.ids[rows, :width], wp.mask[rows, :width]).numpy()
            out[rows, :width] = h.astype(np.float16)
        return out


def sentence_embeddings(
    ckpt: Checkpoint, texts: list[str], max_len: int = 64, chunk: int = 4096
) -> np.ndarray:
    """The pretrained encoder's own sentence embedding (every layer, mean over real word pieces,
    unit length; what all-MiniLM-L6-v2 was trained to give) of each text, as float16 (N, width)."""
    encode = FrozenEncoder(ckpt, ckpt.config.layers)
    out = np.zeros((len(texts), ckpt.config.width), np.float16)
    for s in range(0, len(texts), chunk):
        wp = ckpt.tokenize(texts[s : s + chunk], max_len)
        h = encode(wp).astype(np.float32)
        m = wp.mask[:, :, None].astype(np.float32)
        v = (h * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
        out[s : s + chunk] = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return out


def lower_features(ckpt: Checkpoint, wp: WordPieces, n_frozen: int, batch: int = 256) -> np.ndarray:
    """Embeddings and the first ``n_frozen`` layers over every row, as float16 (N, L, width)."""
    return FrozenEncoder(ckpt, n_frozen)(wp, batch)


@dataclass
class Teacher:
    model: keras.Model
    plan: TeacherPlan

    def logits(self, feats: np.ndarray, mask: np.ndarray, batch: int = 256) -> dict[str, np.ndarray]:
        out = self.model.predict([feats, mask], batch_size=batch, verbose=0)
        return {k: np.asarray(v, np.float32) for k, v in out.items()}


def fit_teacher(
    teacher: Teacher,
    feats: np.ndarray,
    mask: np.ndarray,
    y: dict[str, np.ndarray],
    *,
    seed: int,
    log_weight: float = 1.0,
) -> None:
    """Fine-tune on hard targets, in batches of rows of similar length cut to that length (most
    utterances are a third of the window, so this costs a third of full-width batches)."""
    from firmware_tools.model.train import KD, compile_heads, progress

    plan = teacher.plan
    lengths = mask.sum(axis=1).astype(np.int64)
    widths = np.minimum(mask.shape[1], np.maximum(8, -(-lengths // 8) * 8))
    per_epoch = sum(-(-int((widths == w).sum()) // plan.batch) for w in np.unique(widths))
    steps = per_epoch * plan.epochs
    compile_heads(
        teacher.model, lr=plan.lr, steps=steps, kd=KD(alpha=1.0), log_weight=log_weight
    )
    rng = np.random.default_rng(seed)

    def batches() -> Any:
        order = []
        for w in np.unique(widths):
            rows = rng.permutation(np.flatnonzero(widths == w))
            order += [(int(w), rows[i : i + plan.batch]) for i in range(0, len(rows), plan.batch)]
        for k in rng.permutation(len(order)):
            w, rows = order[k]
            rows = np.sort(rows)
            x = (feats[rows, :w].astype(np.float32), mask[rows, :w])
            t = {h: (v[rows, :w] if h == "slots" else v[rows]) for h, v in y.items()}
            yield x, t

    width = feats.shape[2]
    spec = (
        (
            tf.TensorSpec((None, None, width), tf.float32),
            tf.TensorSpec((None, None), tf.float32),
        ),
        {h: tf.TensorSpec((None, None, 2) if h == "slots" else (None, 2), tf.float32) for h in y},
    )
    ds = tf.data.Dataset.from_generator(batches, output_signature=spec).prefetch(2)
    teacher.model.fit(ds, epochs=plan.epochs, verbose=0, callbacks=[progress(steps, "teacher (fine-tune)")])


def build_teacher(ckpt: Checkpoint, plan: TeacherPlan, n_classes: dict[str, int]) -> Teacher:
    cfg = ckpt.config
    feats = keras.Input((None, cfg.width), name="features")  # any length up to plan.max_len
    mask = keras.Input((None,), name="mask")
    h = feats
    first = cfg.layers - plan.trainable_layers
    for i in range(first, cfg.layers):
        h = BertLayer(ckpt.layer(i), cfg.heads, cfg.eps, plan.dropout, name=f"layer{i}")(h, mask)
    m = mask[:, :, None]
    pooled = ops.sum(h * m, axis=1) / ops.maximum(ops.sum(m, axis=1), 1.0)
    pooled = layers.Dropout(plan.dropout)(pooled)
    tokens = layers.Dropout(plan.dropout)(h)
    outputs = {
        "intent": layers.Dense(n_classes["intent"], name="intent")(pooled),
        "slots": layers.Dense(n_classes["slots"], name="slots")(tokens),
        "severity": layers.Dense(n_classes["severity"], name="severity")(pooled),
        "category": layers.Dense(n_classes["category"], name="category")(pooled),
        "anomaly": layers.Dense(1, name="anomaly")(pooled),
    }
    return Teacher(keras.Model([feats, mask], outputs, name="teacher"), plan)
