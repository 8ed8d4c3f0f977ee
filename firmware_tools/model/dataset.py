"""Turn generated examples into arrays: tokenizer training, token ids, BIO tags, log labels."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sentencepiece as spm

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.nlu.schema import INTENTS, OUT_OF_SCOPE, SLOTS
from edge_agent.runtime.tokenizer import Encoded, Tokenizer
from firmware_tools.model.subword import SegmentationSampler

__all__ = [
    "INTENT_LABELS",
    "SLOT_TAGS",
    "IntentArrays",
    "LogArrays",
    "bio_tags",
    "bundle_labels",
    "encode_intents",
    "encode_logs",
    "tag_index",
    "train_tokenizer",
]

INTENT_LABELS: tuple[str, ...] = (*INTENTS, OUT_OF_SCOPE)
SLOT_TAGS: tuple[str, ...] = ("O", *(f"{p}-{s}" for s in SLOTS for p in ("B", "I")))
_TAG_INDEX = {t: i for i, t in enumerate(SLOT_TAGS)}


def bundle_labels() -> dict[str, list[str]]:
    """A bundle manifest's ``labels``: every head's classes in output order (the student's
    bundle and the teacher's write the same)."""
    return {
        "intents": list(INTENT_LABELS),
        "slot_tags": list(SLOT_TAGS),
        "severity": list(SEVERITIES),
        "category": list(CATEGORIES),
    }


def tag_index() -> dict[str, int]:
    """Slot tag name -> index in ``SLOT_TAGS``."""
    return dict(_TAG_INDEX)


def train_tokenizer(texts: Sequence[str], prefix: Path, vocab_size: int, seed: int) -> Path:
    """Train a unigram sentencepiece model (NFKC + case folding inside the model), written to
    ``prefix.model``. The texts go in from memory, so the model file records no path: two
    trainings on the same texts give the same bytes wherever they run."""
    model = io.BytesIO()
    spm.set_random_generator_seed(seed)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([t.replace("\n", " ") for t in texts if t.strip()]),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        normalization_rule_name="nmt_nfkc_cf",
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        user_defined_symbols=["<*>"],
        hard_vocab_limit=False,
        character_coverage=0.9995,
        input_sentence_size=200_000,
        shuffle_input_sentence=True,
        seed_sentencepiece_size=200_000,
        num_threads=2,
        minloglevel=2,
    )
    path = prefix.with_suffix(".model")
    path.write_bytes(model.getvalue())
    return path


def bio_tags(enc: Encoded, spans: Sequence[tuple[int, int, str]], max_len: int) -> np.ndarray:
    """Tag id per token position: B-slot on the first token overlapping a span, I-slot after."""
    tags = np.zeros(max_len, dtype=np.int32)
    for start, end, slot in spans:
        if f"B-{slot}" not in _TAG_INDEX:
            continue
        first = True
        for i, (ts, te) in enumerate(enc.offsets):
            if te <= ts or te <= start or ts >= end:
                continue
            tags[i] = _TAG_INDEX[f"{'B' if first else 'I'}-{slot}"]
            first = False
    return tags


@dataclass
class IntentArrays:
    ids: np.ndarray  # (N, L) int32
    intent: np.ndarray  # (N,) int32
    tags: np.ndarray  # (N, L) int32
    texts: list[str]
    examples: list[Any]
    offsets: list[list[tuple[int, int]]] | None = None  # char range of each real token


@dataclass
class LogArrays:
    ids: np.ndarray
    severity: np.ndarray
    category: np.ndarray
    anomaly: np.ndarray  # (N,) float32 0/1
    lines: list[str]
    # (N, 3) 1/0: whether the severity, category and anomaly labels are known (real lines lack some)
    known: np.ndarray | None = None

    def known_mask(self) -> np.ndarray:
        return self.known if self.known is not None else np.ones((len(self.ids), 3), np.float32)


def _encoder(tok: Tokenizer, sample_every: int, alpha: float, seed: int) -> Callable[[int, str], Encoded]:
    """``(row number, text) -> Encoded``: every ``sample_every``-th row (0: none) in a
    segmentation sampled with a generator of ``seed`` (``subword.py``), the others as
    ``tok.encode``; the same arguments give the same encodings."""
    if sample_every <= 0:
        return lambda _, text: tok.encode(text)
    sampler, rng = SegmentationSampler(tok, alpha), np.random.default_rng(seed)
    return lambda i, text: sampler.encode(text, rng) if i % sample_every == 0 else tok.encode(text)


def encode_intents(
    tok: Tokenizer, examples: Sequence[Any], sample_every: int = 0, alpha: float = 0.1, seed: int = 0
) -> IntentArrays:
    """Encode; with ``sample_every = k`` every k-th example gets a sampled segmentation, drawn
    with a generator of ``seed``."""
    index = {name: i for i, name in enumerate(INTENT_LABELS)}
    n, L = len(examples), tok.max_len
    ids = np.zeros((n, L), np.int32)
    intent = np.zeros(n, np.int32)
    tags = np.zeros((n, L), np.int32)
    offsets = []
    encode = _encoder(tok, sample_every, alpha, seed)
    for i, ex in enumerate(examples):
        enc = encode(i, ex.text)
        ids[i] = enc.ids
        intent[i] = index[ex.intent if ex.intent is not None else OUT_OF_SCOPE]
        tags[i] = bio_tags(enc, ex.spans, L)
        offsets.append(enc.offsets)
    return IntentArrays(ids, intent, tags, [e.text for e in examples], list(examples), offsets)


def encode_logs(
    tok: Tokenizer, examples: Sequence[Any], sample_every: int = 0, alpha: float = 0.1, seed: int = 0
) -> LogArrays:
    sev_index = {s: i for i, s in enumerate(SEVERITIES)}
    cat_index = {c: i for i, c in enumerate(CATEGORIES)}
    n = len(examples)
    ids = np.zeros((n, tok.max_len), np.int32)
    encode = _encoder(tok, sample_every, alpha, seed)
    for i, ex in enumerate(examples):
        ids[i] = encode(i, ex.line).ids
    sev = np.array([sev_index.get(e.severity, 0) for e in examples], np.int32)
    cat = np.array([cat_index.get(e.category, 0) for e in examples], np.int32)
    anom = np.array([1.0 if e.anomaly else 0.0 for e in examples], np.float32)
    known = np.array(
        [
            (e.severity in sev_index, e.category in cat_index, getattr(e, "anomaly_known", True))
            for e in examples
        ],
        np.float32,
    ).reshape(n, 3)
    return LogArrays(ids, sev, cat, anom, [e.line for e in examples], known)
