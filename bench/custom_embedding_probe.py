"""How good can a small sentence encoder make custom intents? A probe for the next model build.

    .venv/bin/python bench/custom_embedding_probe.py [--d 128] [--kinds conv,attn] [--epochs 8]
                                                     [--contrastive 0] [--data-dir ../shared/data]
                                                     [--target mpnet --mpnet-dir DIR] [--cache FILE]

Custom intents (issue 26) compare an utterance with the user's examples through a sentence
embedding. The shipped student learns it on a narrow path of its own (the 64-wide token
embeddings through one conv block, cosine 0.70 to the pretrained encoder's). This probe trains a
separate small encoder in float, with nothing of the build but its tokenizer, and scores it with
``bench/custom_intents.py`` (parts a and b, settings chosen with ``--tune`` on CLINC150 ``val``):

1. texts: CLINC150 ``train`` + ``oos_train``, Snips 2017 ``train``, SGD ``train`` (the sources the
   build reads; never a test split, never CLINC ``val``, which tunes the settings);
2. targets: the frozen all-MiniLM-L6-v2 sentence embedding of each text (the build's teacher,
   mean-pooled over word pieces, unit length); with ``--target mpnet --mpnet-dir DIR``, frozen
   all-mpnet-base-v2's (768 wide, the build's second teacher; ``--cache FILE`` keeps them: their
   embedding took 31 min on 2 cores, niced beside a build);
3. the encoder: the bundle's sentencepiece ids -> token embeddings of width ``--d`` -> the
   student's blocks (``--kinds``) -> masked sum, norm -> dense 2d (tanh) -> dense 384 (768); loss
   1 - cosine to the target; with ``--contrastive W`` also a supervised contrastive term (weight
   W, temperature 0.05) on the labels of CLINC150 and Snips, minus the 20 CLINC intents of
   ``bench/data/custom_clinc.yaml`` and minus every SGD label (SGD stays a source whose labels the
   encoder never saw);
4. prints the held-out cosine, the int8 invoke time of the encoder alone (batch 1, one thread),
   then the custom-intent figures.

Figures are in docs/benchmarks.md ("Custom intents"). CLINC150 is an in-sample source here (its
train texts are targets, its val split tunes); SGD's train texts are targets too, its labels never.
Needs the train extra (TensorFlow) and the teacher package, as ``edge-fw build-model`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import custom_intents as bench  # noqa: E402  (bench/)

DIM = 384  # all-MiniLM-L6-v2's sentence embedding
MPNET_DIM = 768  # all-mpnet-base-v2's
MAX_LEN = 32


def training_texts(data_dir: Path) -> tuple[list[str], list[str]]:
    """Unique texts of the training splits, each with ``source:label`` (the first one seen)."""
    rows: dict[str, str] = {}
    clinc = json.loads((data_dir / "clinc150" / "data_full.json").read_text(encoding="utf-8"))
    for text, label in clinc["train"] + clinc["oos_train"]:
        rows.setdefault(text, f"clinc:{label}")
    for path in sorted((data_dir / "snips2017").glob("*/train_*_full.json")):
        intent = path.parent.name
        for row in json.loads(path.read_text(encoding="latin-1"))[intent]:
            rows.setdefault("".join(p["text"] for p in row["data"]).strip(), f"snips:{intent}")
    with (data_dir / "sgd" / "train.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            rows.setdefault(row["text"], f"sgd:{row['service']}:{row['intent']}")
    return list(rows), list(rows.values())


def contrastive_labels(labels: Sequence[str]) -> np.ndarray:
    """Class index per text for the contrastive term, -1 where it must not use the label."""
    doc = yaml.safe_load(bench.CLINC_FILE.read_text(encoding="utf-8"))
    held = {block["metadata"]["clinc"] for body in doc["intents"].values() for block in body["data"]}
    classes: dict[str, int] = {}
    out = np.full(len(labels), -1, np.int64)
    for i, label in enumerate(labels):
        source, _, name = label.partition(":")
        if source == "sgd" or name in held or name == "oos":
            continue
        out[i] = classes.setdefault(label, len(classes))
    return out


def build_encoder(d: int, kinds: Sequence[str], width: int = DIM) -> Any:
    import keras
    from keras import layers, ops

    from firmware_tools.model.network import Block, Embed, NetConfig, Norm

    cfg = NetConfig(
        vocab=8000,
        max_len=MAX_LEN,
        d_model=d,
        block_kinds=tuple(kinds),
        n_heads=1,
        d_ff=2 * d,
        n_intents=1,
        n_tags=1,
        n_severity=1,
        n_category=1,
        dropout=0.1,
    )
    ids = keras.Input((MAX_LEN,), dtype="int32", name="ids")
    h = Embed(cfg, name="embed")(ids)
    for i, kind in enumerate(cfg.block_kinds):
        h = Block(cfg, kind, dilation=1 + i % 2, name=f"block{i}")(h)
    mask = ops.cast(ops.not_equal(ids, 0), h.dtype)[:, :, None]
    pooled = Norm(name="pool_norm")(ops.sum(h * mask, axis=1))
    hidden = layers.Dense(2 * d, activation="tanh", name="hidden")(pooled)
    return keras.Model(ids, layers.Dense(width, name="sentence")(hidden))


def train(model: Any, x: np.ndarray, y: np.ndarray, lab: np.ndarray, args: argparse.Namespace) -> float:
    """Fit on all but 2,000 rows; returns the mean cosine on those 2,000."""
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(x))
    dev, rows = order[:2000], order[2000:]
    steps = -(-len(rows) // args.batch) * args.epochs
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0, steps, alpha=0.02, warmup_target=2e-3, warmup_steps=300
    )
    opt = keras.optimizers.AdamW(schedule, weight_decay=1e-4)
    weight = float(args.contrastive)

    def unit(v: Any) -> Any:
        return v / tf.maximum(tf.norm(v, axis=1, keepdims=True), 1e-9)

    @tf.function
    def step(xb: Any, yb: Any, lb: Any) -> Any:
        with tf.GradientTape() as tape:
            p = unit(model(xb, training=True))
            loss = tf.reduce_mean(1.0 - tf.reduce_sum(p * yb, axis=1))
            if weight > 0:
                n = tf.shape(xb)[0]
                eye = tf.eye(n)
                valid = tf.cast(lb >= 0, tf.float32)
                same = tf.cast(tf.equal(lb[:, None], lb[None, :]), tf.float32)
                same = same * valid[:, None] * valid[None, :] * (1.0 - eye)
                logits = tf.matmul(p, p, transpose_b=True) / 0.05 - 1e9 * eye
                logp = logits - tf.reduce_logsumexp(logits, axis=1, keepdims=True)
                positives = tf.reduce_sum(same, axis=1)
                per_row = -tf.reduce_sum(same * logp, axis=1) / tf.maximum(positives, 1.0)
                has = tf.cast(positives > 0, tf.float32)
                loss += weight * tf.reduce_sum(per_row * has) / tf.maximum(tf.reduce_sum(has), 1.0)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    cosine = 0.0
    for epoch in range(args.epochs):
        started = time.perf_counter()
        perm = rng.permutation(rows)
        for s in range(0, len(perm), args.batch):
            b = np.sort(perm[s : s + args.batch])
            step(x[b], y[b], lab[b])
        p = model.predict(x[dev], batch_size=512, verbose=0)
        p /= np.linalg.norm(p, axis=1, keepdims=True)
        cosine = float((p * y[dev]).sum(axis=1).mean())
        print(f"  epoch {epoch + 1}: held-out cosine {cosine:.4f} ({time.perf_counter() - started:.0f} s)")
    return cosine


def int8_invoke_us(model: Any, calib: np.ndarray) -> float:
    """Median invoke time of the encoder converted as the build converts a segment."""
    import tensorflow as tf

    from edge_agent.runtime.backend import load_backend
    from firmware_tools.model.convert import _convert, _Plan

    plan = _Plan(
        "sentence",
        lambda ids: {"sentence_embedding": model(ids, training=False)},
        ["ids"],
        [tf.TensorSpec((1, MAX_LEN), tf.int32, name="ids")],
        lambda i: [calib[i : i + 1]],
    )
    blob = _convert(plan, len(calib), False)
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"sentence-probe-{os.getpid()}.tflite"
    path.write_bytes(blob)
    try:
        interp = load_backend().make_interpreter(path)  # as the agent opens a segment
        index = interp.get_input_details()[0]["index"]
        times = []
        for i in range(300):
            interp.set_tensor(index, calib[i % len(calib)][None])
            start = time.perf_counter()
            interp.invoke()
            times.append((time.perf_counter() - start) * 1e6)
    finally:
        path.unlink(missing_ok=True)
    print(f"  int8 encoder: {len(blob) / 1e6:.2f} MB")
    return statistics.median(times)


def teacher_targets(texts: list[str], args: argparse.Namespace) -> np.ndarray:
    """The unit-length sentence embedding of each text by the chosen frozen encoder (from
    ``args.cache`` when it holds as many rows of that encoder's width)."""
    width = MPNET_DIM if args.target == "mpnet" else DIM
    if args.cache is not None and args.cache.exists():
        cached = np.asarray(np.load(args.cache), np.float32)
        if cached.shape == (len(texts), width):
            return cached
        print(f"{args.cache}: holds {cached.shape}, not {len(texts)} x {width}: made again")
    if args.target == "mpnet":
        from firmware_tools.model.mpnet import MPNetEmbedder

        targets = MPNetEmbedder(args.mpnet_dir)(texts).astype(np.float32)
    else:
        from firmware_tools.model.pretrained import default_zip, load_checkpoint
        from firmware_tools.model.teacher import sentence_embeddings

        targets = sentence_embeddings(load_checkpoint(default_zip()), texts).astype(np.float32)
    if args.cache is not None:
        np.save(args.cache, targets.astype(np.float16))
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", type=int, default=128, help="token width of the encoder")
    ap.add_argument("--kinds", default="conv,attn", help="the encoder's blocks, comma-separated")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--contrastive", type=float, default=0.0, help="weight of the contrastive term")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", type=Path, help="holding clinc150/, snips2017/, sgd/ (../shared/data)")
    ap.add_argument("--target", choices=("minilm", "mpnet"), default="minilm", help="the embedding learnt")
    ap.add_argument("--mpnet-dir", type=Path, help="unpacked all-mpnet-base-v2 (model/mpnet.py)")
    ap.add_argument("--cache", type=Path, help="keep the targets in this .npy file and reuse them")
    args = ap.parse_args(argv)
    if args.target == "mpnet" and args.mpnet_dir is None:
        ap.error("--target mpnet needs --mpnet-dir")
    data_dir = bench._shared("data", args.data_dir)

    model = bench.open_model(None)
    tok = model.tokenizer
    bench.use_tokenizer(tok)
    texts, labels = training_texts(data_dir)
    started = time.perf_counter()
    targets = teacher_targets(texts, args)
    took = time.perf_counter() - started
    print(f"{len(texts)} texts, {args.target} targets {targets.shape[1]} wide in {took:.0f} s")
    x = np.stack([tok.encode(t).ids for t in texts]).astype(np.int32)
    encoder = build_encoder(args.d, args.kinds.split(","), targets.shape[1])
    print(f"encoder: d {args.d}, blocks {args.kinds}, {encoder.count_params():,} parameters")
    train(encoder, x, targets, contrastive_labels(labels), args)
    calib = x[np.random.default_rng(1).choice(len(x), 300, replace=False)]
    print(f"  int8 invoke, batch 1: {int8_invoke_us(encoder, calib):.0f} µs (median of 300)")

    def embed(batch: Sequence[str]) -> np.ndarray:
        if not batch:
            return np.zeros((0, targets.shape[1]), np.float32)
        ids = np.stack([tok.encode(t).ids for t in batch]).astype(np.int32)
        v = encoder.predict(ids, batch_size=512, verbose=0)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    bench.minilm_embedder = lambda: embed  # the bench's stand-in slot, filled with this encoder
    print("custom intents with this encoder (the bench calls it the stand-in):")
    return bench.main(["--embedding", "minilm", "--tune", "--parts", "ab", "--data-dir", str(data_dir)])


if __name__ == "__main__":
    raise SystemExit(main())
