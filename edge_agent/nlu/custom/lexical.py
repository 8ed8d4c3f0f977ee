"""Word overlap of an utterance with the custom examples, weighed by how rare each word piece is.

The sentence embedding says what an utterance means; the words a user wrote into their examples
("coffee", "taxi", "the news") say which of their intents it is about, and an utterance that
shares the rare ones with an example is very likely a paraphrase of it. Each text is the set of
its tokenizer pieces (the model's own sentencepiece vocabulary, case-folded), each piece weighed
by its information ``-log p`` from the tokenizer's unigram scores (frequent pieces such as
"the" or "me" count little; control and unknown pieces nothing), as a unit vector; the
similarity of two texts is the cosine of their vectors. ``CustomIndex`` mixes it with the
embedding's cosine (``CustomSettings.lexical_weight``).

Kept sparse: an example costs its pieces, not the vocabulary's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Lexical", "piece_weights", "tokenizer_piece_weights"]

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int32]


def piece_weights(sp: Any) -> FloatArray:
    """``-log p`` of every piece of a sentencepiece processor (0 for control, unknown and
    user-defined pieces, whose scores say nothing of how common they are)."""
    n = int(sp.GetPieceSize())
    scores = np.array([sp.GetScore(i) for i in range(n)], dtype=np.float32)
    special = np.array([sp.IsControl(i) or sp.IsUnknown(i) or sp.IsUnused(i) for i in range(n)], dtype=bool)
    return np.where(special, 0.0, np.maximum(-scores, 0.0)).astype(np.float32)


def tokenizer_piece_weights(tokenizer: Any) -> FloatArray:
    """The piece weights of a bundle's tokenizer: the sentencepiece scores' ``-log p``
    (``piece_weights``), or for a word-piece tokenizer (the teacher's bundle), whose vocabulary
    has no frequencies, 1 for every piece and 0 for its bracketed special ones."""
    sp = getattr(tokenizer, "processor", None)
    if sp is not None:
        return piece_weights(sp)
    weights: FloatArray = tokenizer.piece_weights()
    return weights


class Lexical:
    """The examples' piece vectors; ``similarities(ids)`` the cosine of an utterance to each."""

    def __init__(self, weights: FloatArray, examples: Sequence[npt.ArrayLike]) -> None:
        self.weights = np.asarray(weights, dtype=np.float32)
        cols: list[IntArray] = []
        vals: list[FloatArray] = []
        for ids in examples:
            col, val = self._unit(ids)
            # pad id 0 (weight 0) ends every row, so that no row is empty for reduceat
            cols.append(np.append(col, 0).astype(np.int32))
            vals.append(np.append(val, 0.0).astype(np.float32))
        self._starts = np.cumsum([0, *(len(c) for c in cols[:-1])]).astype(np.intp)
        flat = np.concatenate(cols) if cols else np.zeros(0, np.int32)
        self._vals = np.concatenate(vals) if vals else np.zeros(0, np.float32)
        self.n = len(cols)
        # the pieces some example has, numbered 0..u-1; every other piece maps to u, whose query
        # entry is never read: an utterance's query is then u + 1 numbers, not the vocabulary
        size = len(self.weights)
        pieces = np.unique(flat)
        self._column = np.full(size, len(pieces), dtype=np.intp)
        self._column[pieces] = np.arange(len(pieces))
        self._cols = self._column[flat]
        self._width = len(pieces) + 1
        self._positions = np.arange(64, dtype=np.intp)

    def _unit(self, ids: npt.ArrayLike) -> tuple[IntArray, FloatArray]:
        n = len(self.weights)
        found = {i for i in np.asarray(ids).reshape(-1).tolist() if 0 < i < n}
        uniq = np.array(sorted(found), dtype=np.int32)
        val = self.weights[uniq]
        norm = float(np.linalg.norm(val))
        return uniq, (val / norm if norm > 0 else val).astype(np.float32)

    def similarities(self, ids: npt.ArrayLike) -> FloatArray:
        """Cosine of the utterance of token ``ids`` (padding ignored) to every example."""
        if self.n == 0:
            return np.zeros(0, np.float32)
        size = len(self.weights)
        ids = np.asarray(ids, dtype=np.intp).reshape(-1)
        if ids.size and (int(ids.max()) >= size or int(ids.min()) < 0):
            ids = ids[(ids >= 0) & (ids < size)]
        weights = self.weights[ids]  # padding and control pieces weigh 0
        # the utterance is a set of pieces: its norm counts a repeated piece once (the last
        # position each piece was written to marks one occurrence of it)
        if len(ids) > len(self._positions):
            self._positions = np.arange(len(ids), dtype=np.intp)
        at = self._positions[: len(ids)]
        last = np.empty(size, dtype=np.intp)
        last[ids] = at
        norm2 = float(np.dot(weights, weights * (last[ids] == at)))
        if norm2 <= 0.0:
            return np.zeros(self.n, np.float32)
        query = np.zeros(self._width, np.float32)
        query[self._column[ids]] = weights  # a repeated piece writes the same weight again
        out = np.add.reduceat(query[self._cols] * self._vals, self._starts)
        out *= np.float32(1.0 / np.sqrt(norm2))
        return out.astype(np.float32, copy=False)

    def block(self, start: int, end: int, examples_ids: Sequence[npt.ArrayLike]) -> FloatArray:
        """Cosines among examples ``start:end`` (``examples_ids``: their token ids, in order)."""
        out: FloatArray = np.stack([self.similarities(ids)[start:end] for ids in examples_ids])
        return out.astype(np.float32)
