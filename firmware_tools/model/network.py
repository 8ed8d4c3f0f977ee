"""Keras definition of the encoder (teacher and student share the architecture, not the size).

Layout, which is also the segment layout of the exported bundle:
``ids -> Embed -> Block x N -> {IntentHead, LogsHead}``. Heads also read ``ids`` to pool over
real tokens only. No attention mask: pads are ordinary tokens the model learns to ignore,
which keeps every block a pure ``h -> h`` function and the int8 graph free of large constants.

:func:`join_networks` puts several trained students of one shape side by side in that same
layout (each hidden state holds every member's, each head averages the members' outputs), so
that a bundle of several members is converted, streamed and run like a bundle of one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass
from typing import Any

import keras
from keras import layers, ops

__all__ = [
    "Block",
    "Embed",
    "IntentHead",
    "LogsHead",
    "NetConfig",
    "Network",
    "build_network",
    "join_networks",
]


@dataclass(frozen=True)
class NetConfig:
    vocab: int
    max_len: int
    d_model: int
    block_kinds: tuple[str, ...]
    n_heads: int
    d_ff: int
    n_intents: int
    n_tags: int
    n_severity: int
    n_category: int
    dropout: float = 0.1
    # width of the sentence embedding the intent head also writes (distilled from a pretrained
    # sentence encoder; custom intents compare it with the user's examples); 0: none
    sentence_dim: int = 0
    # what the sentence embedding reads: "pooled" (the last block's state, shared with the intent
    # classes) or "embed" (the token embeddings through a conv block of its own, so that the
    # intent classes, which make every out-of-scope request alike, do not shape it)
    sentence_source: str = "pooled"
    # networks of this shape side by side (``join_networks``): the hidden states between segments
    # are ``members * d_model`` wide, the heads' outputs the members' mean
    members: int = 1

    @property
    def n_blocks(self) -> int:
        return len(self.block_kinds)

    @property
    def width(self) -> int:
        """The width of the hidden states that pass between segments."""
        return self.members * self.d_model

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Norm(layers.Layer):
    """Layer norm from mean / sub / mul / rsqrt only (Keras' own lowers to an int8 DIV, which
    tflite-runtime 2.14 cannot run)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)

    def build(self, shape: Any) -> None:
        self.gamma = self.add_weight(name="gamma", shape=(shape[-1],), initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(shape[-1],), initializer="zeros")

    def call(self, x: Any) -> Any:
        xc = x - ops.mean(x, axis=-1, keepdims=True)
        var = ops.mean(xc * xc, axis=-1, keepdims=True)
        return xc * ops.rsqrt(var + 1e-5) * self.gamma + self.beta


class Embed(layers.Layer):
    def __init__(self, cfg: NetConfig, **kw: Any) -> None:
        super().__init__(**kw)
        self.tok = layers.Embedding(cfg.vocab, cfg.d_model, name="tok")
        self.pos = self.add_weight(
            name="pos", shape=(1, cfg.max_len, cfg.d_model), initializer="random_normal"
        )
        self.norm = Norm(name="norm")
        self.drop = layers.Dropout(cfg.dropout)

    def call(self, ids: Any, training: bool = False) -> Any:
        return self.drop(self.norm(self.tok(ids) + self.pos), training=training)


class Block(layers.Layer):
    """Post-norm residual block; ``kind`` "attn" (self-attention, heads by slicing: no 5-D
    transposes) or "conv" (dilated depthwise conv: about 1/4 of the int8 cost of attention).
    Post-norm keeps the activations bounded, which suits int8."""

    def __init__(self, cfg: NetConfig, kind: str, dilation: int = 1, **kw: Any) -> None:
        super().__init__(**kw)
        self.kind = kind
        self.h = cfg.n_heads
        self.dh = cfg.d_model // cfg.n_heads
        self.d = cfg.d_model
        if kind == "attn":
            self.qkv = layers.Dense(3 * cfg.d_model, name="qkv")
            self.proj = layers.Dense(cfg.d_model, name="proj")
        else:
            self.dw = layers.DepthwiseConv1D(5, padding="same", dilation_rate=dilation, name="dw")
        self.ff1 = layers.Dense(cfg.d_ff, activation="relu", name="ff1")
        self.ff2 = layers.Dense(cfg.d_model, name="ff2")
        self.n1 = Norm(name="n1")
        self.n2 = Norm(name="n2")
        self.drop = layers.Dropout(cfg.dropout)

    def _attend(self, x: Any) -> Any:
        y = self.qkv(x)
        d, dh = self.d, self.dh
        heads = []
        for i in range(self.h):
            q = y[..., i * dh : (i + 1) * dh]
            k = y[..., d + i * dh : d + (i + 1) * dh]
            v = y[..., 2 * d + i * dh : 2 * d + (i + 1) * dh]
            att = ops.softmax(ops.matmul(q, ops.transpose(k, (0, 2, 1))) * (dh**-0.5), axis=-1)
            heads.append(ops.matmul(att, v))
        return self.proj(heads[0] if self.h == 1 else ops.concatenate(heads, axis=-1))

    def call(self, x: Any, training: bool = False) -> Any:
        mixed = self._attend(x) if self.kind == "attn" else self.dw(x)
        x = self.n1(x + self.drop(mixed, training=training))
        return self.n2(x + self.drop(self.ff2(self.ff1(x)), training=training))


def _masked_pool(h: Any, ids: Any) -> Any:
    """Sum over real tokens; the Norm after it makes it scale-free (a mean needs an int8 DIV)."""
    mask = ops.cast(ops.not_equal(ids, 0), h.dtype)[:, :, None]
    return ops.sum(h * mask, axis=1)


class IntentHead(layers.Layer):
    """Intent logits and slot tags; with ``cfg.sentence_dim`` also a sentence embedding (not
    normalized here: the runtime divides by its norm), from its own branch of the pooled state so
    that it keeps what the intent classes throw away."""

    def __init__(self, cfg: NetConfig, **kw: Any) -> None:
        super().__init__(**kw)
        self.norm = Norm(name="pool_norm")
        self.pool = layers.Dense(cfg.d_model, activation="tanh", name="pool")
        self.intent = layers.Dense(cfg.n_intents, name="intent")
        self.slot_hidden = layers.Dense(cfg.d_model, activation="relu", name="slot_hidden")
        self.slots = layers.Dense(cfg.n_tags, name="slots")
        self.sentence_dim = cfg.sentence_dim
        self.own_path = cfg.sentence_source == "embed"
        if cfg.sentence_dim:
            if self.own_path:
                self.sent_block = Block(cfg, "conv", dilation=1, name="sent_block")
                self.sent_norm = Norm(name="sent_norm")
            self.sent_hidden = layers.Dense(2 * cfg.d_model, activation="tanh", name="sent_hidden")
            self.sent = layers.Dense(cfg.sentence_dim, name="sentence")

    def call(self, h: Any, ids: Any, h0: Any = None) -> tuple[Any, ...]:
        normed = self.norm(_masked_pool(h, ids))
        pooled = self.pool(normed)
        out = (self.intent(pooled), self.slots(self.slot_hidden(h)))
        if self.sentence_dim:
            if self.own_path:
                normed = self.sent_norm(_masked_pool(self.sent_block(h0), ids))
            out = (*out, self.sent(self.sent_hidden(normed)))
        return out


class LogsHead(layers.Layer):
    def __init__(self, cfg: NetConfig, **kw: Any) -> None:
        super().__init__(**kw)
        self.norm = Norm(name="pool_norm")
        self.pool = layers.Dense(cfg.d_model, activation="tanh", name="pool")
        self.sev = layers.Dense(cfg.n_severity, name="severity")
        self.cat = layers.Dense(cfg.n_category, name="category")
        self.anom = layers.Dense(1, name="anomaly")

    def call(self, h: Any, ids: Any) -> tuple[Any, Any, Any]:
        pooled = self.pool(self.norm(_masked_pool(h, ids)))
        return self.sev(pooled), self.cat(pooled), self.anom(pooled)


@dataclass
class Network:
    cfg: NetConfig
    embed: Embed
    blocks: list[Block]
    intent_head: IntentHead
    logs_head: LogsHead
    model: keras.Model  # ids -> {intent, slots, [sentence,] severity, category, anomaly}

    def hidden(self, ids: Any) -> list[Any]:
        """Hidden states h0..hN (numpy in, tensors out) for calibration data."""
        hs = [self.embed(ids, training=False)]
        for block in self.blocks:
            hs.append(block(hs[-1], training=False))
        return hs


def build_network(cfg: NetConfig, name: str) -> Network:
    embed = Embed(cfg, name="embed")
    blocks = [
        Block(cfg, kind, dilation=1 + i % 2, name=f"block{i}") for i, kind in enumerate(cfg.block_kinds)
    ]
    ihead = IntentHead(cfg, name="intent_head")
    lhead = LogsHead(cfg, name="logs_head")
    ids = keras.Input(shape=(cfg.max_len,), dtype="int32", name="ids")
    h0 = h = embed(ids)
    for block in blocks:
        h = block(h)
    intent, slots, *sentence = ihead(h, ids, h0)
    sev, cat, anom = lhead(h, ids)
    outputs = {
        "intent": layers.Identity(name="intent")(intent),
        "slots": layers.Identity(name="slots")(slots),
        "severity": layers.Identity(name="severity")(sev),
        "category": layers.Identity(name="category")(cat),
        "anomaly": layers.Identity(name="anomaly")(anom),
    }
    if sentence:
        outputs["sentence"] = layers.Identity(name="sentence")(sentence[0])
    model = keras.Model(ids, outputs, name=name)
    return Network(cfg, embed, blocks, ihead, lhead, model)


class _Side(layers.Layer):
    """Members' layers side by side: each reads its own slice of the hidden state(s) passed to it
    (``d`` wide each) and the same ``ids``; ``mean`` averages the members' outputs (heads), else
    their states are concatenated (the embedding, the blocks)."""

    def __init__(self, parts: list[Any], d: int, mean: bool, **kw: Any) -> None:
        super().__init__(**kw)
        self.parts, self.d, self.mean = parts, d, mean

    def _own(self, x: Any, i: int) -> Any:
        return x[..., i * self.d : (i + 1) * self.d]

    def call(self, *args: Any, training: bool = False) -> Any:
        if not self.mean:  # Embed(ids) or Block(h)
            (x,) = args
            reads_ids = isinstance(self.parts[0], Embed)  # every member reads the same ids
            outs = [
                p(x if reads_ids else self._own(x, i), training=training) for i, p in enumerate(self.parts)
            ]
            return ops.concatenate(outs, axis=-1)
        h, ids, *h0 = args  # a head: (h, ids) or (h, ids, h0)
        outs = [p(self._own(h, i), ids, *(self._own(x, i) for x in h0)) for i, p in enumerate(self.parts)]
        return tuple(_mean([o[k] for o in outs]) for k in range(len(outs[0])))


def _mean(xs: list[Any]) -> Any:
    """The members' mean by ADD and MUL alone (int8 builtins, EdgeTPU's included)."""
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total * (1.0 / len(xs))


def join_networks(nets: list[Network], name: str) -> Network:
    """One network whose outputs are the mean of ``nets``' (trained students of one shape):
    its embedding writes every member's state side by side, each block runs each member's block
    on its slice, each head averages the members' logits (and sentence embeddings, which the
    runtime makes unit length). Segment for segment the layout of one network, ``members`` wide."""
    cfg = nets[0].cfg
    if any(n.cfg != cfg for n in nets) or cfg.members != 1:
        raise ValueError("join_networks: the members must be single networks of one shape")
    d = cfg.d_model
    joined = dataclasses.replace(cfg, members=len(nets))
    embed = _Side([n.embed for n in nets], d, mean=False, name="embed")
    blocks = [
        _Side([n.blocks[b] for n in nets], d, mean=False, name=f"block{b}") for b in range(cfg.n_blocks)
    ]
    ihead = _Side([n.intent_head for n in nets], d, mean=True, name="intent_head")
    lhead = _Side([n.logs_head for n in nets], d, mean=True, name="logs_head")
    ids = keras.Input(shape=(cfg.max_len,), dtype="int32", name="ids")
    h0 = h = embed(ids)
    for block in blocks:
        h = block(h)
    own_path = cfg.sentence_dim and cfg.sentence_source == "embed"  # as the segments call it
    intent, slots, *sentence = ihead(h, ids, h0) if own_path else ihead(h, ids)
    sev, cat, anom = lhead(h, ids)
    outputs = {"intent": intent, "slots": slots, "severity": sev, "category": cat, "anomaly": anom}
    if sentence:
        outputs["sentence"] = sentence[0]
    outputs = {k: layers.Identity(name=k)(v) for k, v in outputs.items()}
    model = keras.Model(ids, outputs, name=name)
    return Network(joined, embed, blocks, ihead, lhead, model)  # type: ignore[arg-type]
