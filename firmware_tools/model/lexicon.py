"""The student's first token embedding, from what the pretrained encoder knows about words.

A student learns what a piece of its vocabulary means only from the transfer rows it is
trained on: a word those rows use rarely ("film" where they mostly say "movie", "tunes" beside
"music") starts as random as any other and stays poorly placed. The teacher met those words in
a billion sentence pairs. Here every piece of the student's tokenizer is embedded alone by the
pretrained encoder (its sentence embedding of the piece's text, ``teacher.sentence_embeddings``)
and the student's token table starts from those vectors' leading principal components, so that
pieces the encoder finds alike start close together (``BuildPlan.lexical_init``). Training then
moves the table as it would have moved a random one.

The same kind of vectors (each word embedded alone) give each word of the transfer rows its
nearest words among the encoder's own vocabulary (``word_neighbours``), which
``transfer.substitute`` swaps in (``BuildPlan.n_substitute``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["encoder_words", "initial_table", "piece_texts", "piece_vectors", "word_neighbours"]

# a word's neighbours for ``transfer.substitute``: at most this many, each at least this close
# (cosine of the encoder's embeddings of the two words alone: "movie"/"film" 0.84, "lights"/"lamps"
# 0.77, "turn"/"flip" 0.63, "please"/"need" 0.57)
NEIGHBOURS = 8
NEIGHBOUR_MIN_COS = 0.6

_WORD_START = "\u2581"  # sentencepiece's mark of a word's first piece


def piece_texts(tok: Any) -> list[str]:
    """The text of every piece of ``tok`` (a ``Tokenizer`` with a sentencepiece ``processor``),
    by id; "" for pieces that stand for no text (control, unknown, byte, bare word marks and
    user-defined symbols such as ``<*>``)."""
    sp = tok.processor
    out = []
    for i in range(sp.GetPieceSize()):
        piece = str(sp.IdToPiece(i))
        text = piece.replace(_WORD_START, " ").strip()
        plain = not (sp.IsControl(i) or sp.IsUnknown(i) or sp.IsUnused(i) or sp.IsByte(i))
        out.append(text if plain and any(c.isalnum() for c in text) and not text.startswith("<") else "")
    return out


def piece_vectors(texts: list[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``embed`` (texts -> their unit-length sentence embeddings, (n, width); the build passes the
    pretrained encoder's, kept in the work directory) of each piece text, float32 (N, width); zero
    rows where the text is empty."""
    idx = [i for i, t in enumerate(texts) if t]
    vectors = np.asarray(embed([texts[i] for i in idx]), np.float32)
    out = np.zeros((len(texts), vectors.shape[1]), np.float32)
    out[idx] = vectors
    return out


def initial_table(vectors: np.ndarray, table: np.ndarray, width: float = 1.0) -> np.ndarray:
    """``table`` (the student's randomly initialised token embedding, (N, d)) with every row
    that has a vector given that vector's coordinates on the vectors' first k principal
    components in its first k columns, k = ``width`` * d rounded (all of them by default),
    scaled so that those columns' root mean square is the random table's (the rest of training
    sees the spread it always saw). Rows without a vector, and the other d - k columns of every
    row, keep their random values."""
    has = np.linalg.norm(vectors, axis=1) > 0
    if vectors.shape[0] != table.shape[0]:
        raise ValueError(f"{vectors.shape[0]} piece vectors for a table of {table.shape[0]} rows")
    if not 0.0 < width <= 1.0:
        raise ValueError(f"width {width}: the lexicon's share of the table must be in (0, 1]")
    d = max(1, round(table.shape[1] * width))
    if has.sum() <= d:
        raise ValueError(f"{int(has.sum())} pieces with a text: too few for {d} components")
    x = vectors[has].astype(np.float64)
    x -= x.mean(axis=0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    proj = x @ vt[:d].T
    rms = float(np.sqrt(np.mean(np.square(table))))
    proj *= rms / max(float(np.sqrt(np.mean(np.square(proj)))), 1e-12)
    out = np.array(table, np.float32, copy=True)
    rows = np.flatnonzero(has)
    out[rows, :d] = proj.astype(np.float32)
    return out


def encoder_words(tokenizer_json: str) -> list[str]:
    """The whole words of the pretrained encoder's word-piece vocabulary (``Checkpoint.tokenizer_json``):
    ASCII letters only, two or more, sorted (about 21,700 for all-MiniLM-L6-v2)."""
    import json

    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    return sorted(w for w in vocab if w.isascii() and w.isalpha() and len(w) >= 2)


def word_neighbours(
    words: list[str],
    vectors: np.ndarray,
    wanted: set[str],
    k: int = NEIGHBOURS,
    min_cos: float = NEIGHBOUR_MIN_COS,
    chunk: int = 2048,
) -> dict[str, list[str]]:
    """For each word of ``wanted`` that is in ``words`` (whose unit vectors are ``vectors``, by
    row), its ``k`` nearest other words at cosine ``min_cos`` or more, nearest first, leaving out
    forms of the same word ("turned", "turns" for "turn": ``_same_stem``); words without one are
    left out. Only the ``3 k`` nearest are looked at."""
    index = {w: i for i, w in enumerate(words)}
    rows = sorted(index[w] for w in wanted if w in index)
    unit = np.asarray(vectors, np.float32)
    out: dict[str, list[str]] = {}
    for s in range(0, len(rows), chunk):
        part = rows[s : s + chunk]
        sims = unit[part] @ unit.T
        sims[np.arange(len(part)), part] = -1.0
        top = np.argsort(-sims, axis=1)[:, : 3 * k]
        for r, (i, cand) in enumerate(zip(part, top, strict=True)):
            near = [words[j] for j in cand if sims[r, j] >= min_cos and not _same_stem(words[i], words[j])]
            if near:
                out[words[i]] = near[:k]
    return out


def _same_stem(a: str, b: str) -> bool:
    """Whether two words start alike for four letters (or the whole of a shorter one): another
    form of the word more often than another word ("lights"/"lighting", "hot"/"hotter")."""
    n = min(4, len(a), len(b))
    return a[:n] == b[:n]
