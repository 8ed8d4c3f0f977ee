"""Training: the teacher on hard labels, then the student on hard labels plus the teacher's
softened outputs (knowledge distillation with a temperature) on the intent and log heads and,
when the teacher's slot logits are passed, on the per-token slot tags.

Intent and log examples share one encoder; each row carries a task weight so that an intent
row trains only the intent and slot heads and a log row only the log heads. Targets are packed
as ``[weight, hard label, teacher logits...]`` (per token for the slot tags) so one plain Keras
loss function handles both the hard and the soft part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from keras import ops
from tqdm.auto import tqdm

from firmware_tools.model.dataset import IntentArrays, LogArrays
from firmware_tools.model.network import Network

__all__ = [
    "KD",
    "SentenceTargets",
    "Targets",
    "compile_heads",
    "fit",
    "make_targets",
    "predict_logits",
    "progress",
]

HEADS = ("intent", "slots", "severity", "category", "anomaly")


@dataclass(frozen=True)
class KD:
    """alpha = weight of the hard-label loss; (1 - alpha) * T^2 * KL on the soft targets."""

    alpha: float = 1.0
    temperature: float = 2.0


@dataclass
class Targets:
    ids: np.ndarray
    y: dict[str, np.ndarray]
    # the intent targets carry each row's hard-label share as a third column,
    # ``[weight, hard label, share, teacher logits...]`` (make_targets' ``intent_hard``)
    intent_rows: bool = False


def make_targets(
    intents: IntentArrays,
    logs: LogArrays,
    teacher: dict[str, np.ndarray] | None,
    n_classes: dict[str, int],
    sentence: SentenceTargets | None = None,
    intent_hard: np.ndarray | None = None,
    extra_hard: float = 0.5,
    scope_class: int | None = None,
) -> Targets:
    """Stack intent rows then log rows; teacher logits (same row order) are optional.

    ``sentence``: the pretrained encoder's sentence embeddings of the intent rows, and of extra
    texts that train the sentence embedding only (stacked after the log rows).
    ``intent_hard`` (one per intent row, in [0, 1]): each row's share of the intent loss taken
    from its hard label, the rest from the soft labels, in place of one share for all rows
    (``Targets.intent_rows``); the extra texts that train the intent head take ``extra_hard``.
    ``scope_class`` (the out-of-scope label): on the intent rows labelled in scope, the teacher's
    soft label gives that class no more than the row's least likely intent (``in_scope_soft``)."""
    ni, nl = len(intents.ids), len(logs.ids)
    if teacher is not None and scope_class is not None:
        teacher = {**teacher, "intent": in_scope_soft(teacher["intent"], intents.intent, scope_class)}
    L = intents.ids.shape[1]
    ids = np.concatenate([intents.ids, logs.ids])
    w_int = np.concatenate([np.ones(ni), np.zeros(nl)]).astype(np.float32)
    w_log = 1.0 - w_int

    def pack(weight: np.ndarray, label: np.ndarray, head: str) -> np.ndarray:
        soft = teacher[head] if teacher is not None else np.zeros((len(weight), n_classes[head]), np.float32)
        return np.concatenate([weight[:, None], label[:, None].astype(np.float32), soft], axis=1).astype(
            np.float32
        )

    known = np.concatenate([np.ones((ni, 3), np.float32), logs.known_mask()])  # log rows' known labels
    zeros_i, zeros_l = np.zeros(ni, np.int32), np.zeros(nl, np.int32)
    slot_w = np.concatenate([(intents.ids != 0).astype(np.float32), np.zeros((nl, L), np.float32)])
    slot_y = np.concatenate([intents.tags, np.zeros((nl, L), np.int32)]).astype(np.float32)
    slots = np.stack([slot_w, slot_y], axis=-1)
    # the slot head learns hard tags only: gold where the spans are known (exact), the teacher's
    # own tags elsewhere (build._relabel_from_teacher). Its per-token distributions, as soft
    # targets weighed T^2, pulled the student toward the teacher's weaker word-piece tagging and
    # split words (build 8: span F1 0.52 against build 6's 0.87)
    y = {
        "intent": pack(w_int, np.concatenate([intents.intent, zeros_l]), "intent"),
        "slots": slots,
        "severity": pack(w_log * known[:, 0], np.concatenate([zeros_i, logs.severity]), "severity"),
        "category": pack(w_log * known[:, 1], np.concatenate([zeros_i, logs.category]), "category"),
        "anomaly": pack(
            w_log * known[:, 2], np.concatenate([np.zeros(ni, np.float32), logs.anomaly]), "anomaly"
        ),
    }
    if intent_hard is not None:
        share = np.concatenate([_shares(intent_hard, ni), np.full(nl, extra_hard)]).astype(np.float32)
        y["intent"] = np.insert(y["intent"], 2, share, axis=1)
    if sentence is not None:
        ids, y = _with_sentence(ids, y, sentence, ni, nl, None if intent_hard is None else extra_hard)
    return Targets(ids, y, intent_rows=intent_hard is not None)


def in_scope_soft(logits: np.ndarray, labels: np.ndarray, scope_class: int) -> np.ndarray:
    """``logits`` (intent rows first, then any others) with the out-of-scope logit of every row
    labelled in scope (``labels`` != ``scope_class``, one per intent row) lowered to the row's
    least logit. A row's hard label says that it is a request of one of our intents, so the
    teacher's doubt about whether it is one at all is not passed on; its doubt between intents is."""
    out = np.array(logits, copy=True)
    rows = np.flatnonzero(np.asarray(labels) != scope_class)
    out[rows, scope_class] = np.minimum(out[rows, scope_class], out[rows].min(axis=1))
    return out


def _shares(intent_hard: np.ndarray, n: int) -> np.ndarray:
    share = np.asarray(intent_hard, np.float32)
    if share.shape != (n,):
        raise ValueError(f"intent_hard is {share.shape}, expected ({n},): one share per intent row")
    if ((share < 0.0) | (share > 1.0)).any():
        raise ValueError("intent_hard: every share must be in [0, 1]")
    return share


@dataclass
class SentenceTargets:
    """Unit sentence embeddings of the intent rows (``rows``) and of extra texts (``extra_ids``,
    ``extra``) that train only the sentence head."""

    rows: np.ndarray  # (n_intent_rows, E)
    extra_ids: np.ndarray  # (n_extra, L)
    extra: np.ndarray  # (n_extra, E)
    # the teachers' intent logits of the extra texts (n_extra, I): with them the extra rows also
    # train the intent head, on these soft labels and their argmax (BuildPlan.distil_extra,
    # BuildPlan.n_substitute)
    extra_intent: np.ndarray | None = None
    # which extra rows train the intent head (n_extra,) bool; None: all, when extra_intent is set
    extra_intent_rows: np.ndarray | None = None
    # the source each extra row comes from (n_extra,): "sgd" for SGD's texts, a substituted
    # text its row's origin; the cross-source folds leave a source's rows out (None: all "sgd")
    extra_origin: np.ndarray | None = None


def _with_sentence(
    ids: np.ndarray,
    y: dict[str, np.ndarray],
    sent: SentenceTargets,
    ni: int,
    nl: int,
    extra_hard: float | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Add the sentence head's packed targets ``[weight, embedding...]`` and the extra rows
    (weight 0 on every other head, but the intent head's on the rows ``sent.extra_intent_rows``
    names, or on all of them, when ``sent.extra_intent`` is set). ``extra_hard``: the intent
    targets carry a share column (``Targets.intent_rows``), and this is the extra rows'."""
    ne, dim = len(sent.extra_ids), sent.rows.shape[1]
    lead = 2 if extra_hard is None else 3
    w = np.concatenate([np.ones(ni), np.zeros(nl), np.ones(ne)]).astype(np.float32)
    emb = np.concatenate([sent.rows, np.zeros((nl, dim), np.float32), sent.extra]).astype(np.float32)
    out = {k: np.concatenate([v, np.zeros((ne, *v.shape[1:]), np.float32)]) for k, v in y.items()}
    if sent.extra_intent is not None:
        if sent.extra_intent.shape != (ne, y["intent"].shape[1] - lead):
            raise ValueError(f"extra_intent is {sent.extra_intent.shape}, expected ({ne}, intents)")
        soft = sent.extra_intent.astype(np.float32)
        rows = np.ones(ne, bool)
        if sent.extra_intent_rows is not None:
            rows = np.asarray(sent.extra_intent_rows, bool)
        label = soft.argmax(axis=1)[:, None].astype(np.float32)
        share = [] if extra_hard is None else [np.full((ne, 1), extra_hard, np.float32)]
        block = np.concatenate([np.ones((ne, 1), np.float32), label, *share, soft], axis=1)
        out["intent"][ni + nl :][rows] = block[rows]
    out["sentence"] = np.concatenate([w[:, None], emb], axis=1)
    return np.concatenate([ids, sent.extra_ids]), out


def _cosine_loss(y_true: Any, pred: Any) -> Any:
    """Weighted 1 - cosine between the prediction and the unit target ``y_true[:, 1:]``."""
    w, target = y_true[:, 0], y_true[:, 1:]
    unit = pred / (ops.sqrt(ops.sum(pred * pred, axis=-1, keepdims=True)) + 1e-6)
    total = 1.0 - ops.sum(unit * target, axis=-1)
    return ops.sum(w * total) / ops.maximum(ops.sum(w), 1.0)


def _softmax_kd(kd: KD) -> Any:
    """Weighted hard + soft loss over the last axis; rows (B, 2 + C) or tokens (B, L, 2 + C)."""

    def loss(y_true: Any, logits: Any) -> Any:
        w, label = y_true[..., 0], ops.cast(y_true[..., 1], "int32")
        hard = keras.losses.sparse_categorical_crossentropy(label, logits, from_logits=True)
        total = kd.alpha * hard
        if kd.alpha < 1.0:
            t = kd.temperature
            total = total + (1.0 - kd.alpha) * t * t * _soft_kl(y_true[..., 2:], logits, t)
        return ops.sum(w * total) / ops.maximum(ops.sum(w), 1.0)

    return loss


def _soft_kl(soft_logits: Any, logits: Any, t: float) -> Any:
    """KL of the student's from the teacher's distribution, both softened by ``t`` (last axis)."""
    soft_t = ops.softmax(soft_logits / t, axis=-1)
    log_p = ops.log_softmax(logits / t, axis=-1)
    return ops.sum(soft_t * (ops.log(soft_t + 1e-9) - log_p), axis=-1)


def _row_share_kd(temperature: float) -> Any:
    """As ``_softmax_kd``, on rows ``[weight, hard label, hard share, logits...]``: each row's
    own share of the hard-label loss, the rest on its soft labels."""

    def loss(y_true: Any, logits: Any) -> Any:
        w, label, alpha = y_true[:, 0], ops.cast(y_true[:, 1], "int32"), y_true[:, 2]
        hard = keras.losses.sparse_categorical_crossentropy(label, logits, from_logits=True)
        t = temperature
        total = alpha * hard + (1.0 - alpha) * t * t * _soft_kl(y_true[:, 3:], logits, t)
        return ops.sum(w * total) / ops.maximum(ops.sum(w), 1.0)

    return loss


def _sigmoid_kd(kd: KD) -> Any:
    def loss(y_true: Any, logits: Any) -> Any:
        w, label, z = y_true[:, 0], y_true[:, 1], logits[:, 0]
        hard = keras.losses.binary_crossentropy(label[:, None], z[:, None], from_logits=True)
        total = kd.alpha * hard
        if kd.alpha < 1.0:
            t = kd.temperature
            soft = ops.sigmoid(y_true[:, 2] / t)
            total = total + (1.0 - kd.alpha) * t * t * keras.losses.binary_crossentropy(
                soft[:, None], (z / t)[:, None], from_logits=True
            )
        return ops.sum(w * total) / ops.maximum(ops.sum(w), 1.0)

    return loss


class _Bar(keras.callbacks.Callback):
    def __init__(self, total: int, desc: str) -> None:
        super().__init__()
        self.bar = tqdm(total=total, desc=desc, unit="step", dynamic_ncols=True)

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self.bar.update(1)
        if logs and batch % 20 == 0:
            self.bar.set_postfix(loss=f"{float(logs.get('loss', 0.0)):.3f}")

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        self.bar.close()


def fit(
    net: Network,
    data: Targets,
    *,
    epochs: int,
    batch: int,
    lr: float,
    kd: KD,
    seed: int,
    desc: str,
    log_weight: float = 0.5,
    slot_weight: float = 1.0,
    sentence_weight: float = 1.0,
    jit_compile: bool | str = "auto",
    ema: float | None = None,
    intent_kd: KD | None = None,
) -> None:
    """Train ``net``; ``log_weight`` weighs the severity and category losses against the others,
    ``slot_weight`` the slot tags', ``sentence_weight`` the sentence embedding's; ``jit_compile``
    as keras' (False: no XLA compilation, which a few dozen steps do not pay back); ``ema``: the
    momentum of an exponential moving average of the weights, which replaces them when training
    ends (None: the last step's weights); ``intent_kd``: the intent head's own mix of hard and
    soft labels (None: ``kd``, as the log heads); where ``data.intent_rows``, each row's own
    share of the hard labels replaces its ``alpha`` (its temperature stays)."""
    n = len(data.ids)
    steps = int(np.ceil(n / batch)) * epochs
    compile_heads(
        net.model,
        lr=lr,
        steps=steps,
        kd=kd,
        log_weight=log_weight,
        slot_weight=slot_weight,
        sentence_weight=sentence_weight,
        jit_compile=jit_compile,
        ema=ema,
        intent_kd=intent_kd,
        intent_rows=data.intent_rows,
    )
    ds = (
        tf.data.Dataset.from_tensor_slices((data.ids, data.y))
        .shuffle(n, seed=seed, reshuffle_each_iteration=True)
        .batch(batch)
        .prefetch(2)
    )
    net.model.fit(ds, epochs=epochs, verbose=0, callbacks=[progress(steps, desc)])


def compile_heads(
    model: keras.Model,
    *,
    lr: float,
    steps: int,
    kd: KD,
    log_weight: float,
    slot_weight: float = 1.0,
    sentence_weight: float = 1.0,
    jit_compile: bool | str = "auto",
    ema: float | None = None,
    intent_kd: KD | None = None,
    intent_rows: bool = False,
) -> None:
    """AdamW with cosine decay over ``steps`` (keeping a moving average of the weights with
    momentum ``ema``, which keras' ``fit`` writes into the model at its end), and the
    packed-target losses of the heads (the sentence head's when the model has one);
    ``intent_rows``: the intent targets carry each row's hard share (``Targets.intent_rows``)."""
    intent = kd if intent_kd is None else intent_kd
    schedule = keras.optimizers.schedules.CosineDecay(
        lr, decay_steps=max(1, steps), warmup_target=None, alpha=0.05
    )
    loss = {
        "intent": _row_share_kd(intent.temperature) if intent_rows else _softmax_kd(intent),
        "slots": _softmax_kd(KD(alpha=1.0)),  # hard tags (make_targets says why)
        "severity": _softmax_kd(kd),
        "category": _softmax_kd(kd),
        "anomaly": _sigmoid_kd(kd),
    }
    weights = {
        "intent": 1.0,
        "slots": slot_weight,
        "severity": log_weight,
        "category": log_weight,
        "anomaly": 1.0,
    }
    if "sentence" in model.output_names:
        loss["sentence"] = _cosine_loss
        weights["sentence"] = sentence_weight
    model.compile(
        optimizer=keras.optimizers.AdamW(
            schedule,
            weight_decay=1e-4,
            clipnorm=1.0,
            use_ema=ema is not None,
            ema_momentum=0.99 if ema is None else ema,
        ),
        loss=loss,
        loss_weights=weights,
        jit_compile=jit_compile,
    )


def progress(steps: int, desc: str) -> keras.callbacks.Callback:
    """A tqdm bar over training steps (stderr)."""
    return _Bar(steps, desc)


def predict_logits(net: Network, ids: np.ndarray, batch: int = 512) -> dict[str, np.ndarray]:
    out = net.model.predict(ids, batch_size=batch, verbose=0)
    return {k: np.asarray(v, np.float32) for k, v in out.items()}
