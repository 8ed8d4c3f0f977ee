"""Sampled segmentations (subword regularization) drawn with the build's own random generator.

The build shows the student every other training row in a randomly sampled segmentation, so that
words the generator never wrote split into pieces the model has learnt to read. sentencepiece can
sample them itself, but in the 0.2 releases its sampler ignores ``set_random_generator_seed``: two
builds of one seed then train on different segmentations and end as different bundles (docs/model.md,
build 39). This module draws from the same distribution with a ``numpy`` generator the caller
seeds: every segmentation ``x`` of a text with probability proportional to
``exp(alpha * sum of its pieces' scores)``, the unigram model's lattice sampled by forward
filtering and backward sampling, as sentencepiece's ``alpha`` with ``nbest_size=-1`` does.

The lattice is the model's own: its normal pieces with their scores, user-defined symbols (``<*>``)
with the score sentencepiece gives them (``USER_DEFINED_SCORE``), and a character no piece covers
as one unknown piece scored ``lowest score - 10``; neighbouring unknown pieces are then
merged into one, as sentencepiece merges them. ``viterbi`` takes the best path of the same lattice:
it equals sentencepiece's own encoding (tests/test_subword.py checks both on many texts).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sentencepiece as spm

from edge_agent.runtime.tokenizer import Encoded, Tokenizer

__all__ = ["SAMPLING", "UNKNOWN_PENALTY", "USER_DEFINED_SCORE", "SegmentationSampler"]

# how the build samples segmentations, in the work directory's keys: stages kept by a build that
# sampled another way (sentencepiece's own sampler, unseeded) are not reused
SAMPLING = "lattice, seeded"

UNKNOWN_PENALTY = 10.0  # below the lowest piece score, as sentencepiece's unigram model scores <unk>
# sentencepiece gives a user-defined symbol "length x the best score - 0.1", where its best score
# works out at 0 (measured: 60,000 of its own samples of "<*>" imply 0.09-0.16, +- 0.2)
USER_DEFINED_SCORE = -0.1

Piece = tuple[int, int, int]  # (id, char begin, char end) in the original text


class SegmentationSampler:
    """Draws segmentations of texts for ``tok`` (``encode``) with a caller's generator."""

    def __init__(self, tok: Tokenizer, alpha: float = 0.1) -> None:
        sp: spm.SentencePieceProcessor = tok.processor
        self.tok, self.alpha = tok, alpha
        self.unk_id = int(sp.unk_id())
        normal = [
            i
            for i in range(sp.GetPieceSize())
            if not (sp.IsControl(i) or sp.IsUnknown(i) or sp.IsUnused(i) or sp.IsByte(i))
        ]
        scores = [float(sp.GetScore(i)) for i in normal]
        self.unk_score = min(scores, default=0.0) - UNKNOWN_PENALTY
        # a unigram piece's score is a log probability (< 0); a user-defined symbol's is 0 in the
        # model file and USER_DEFINED_SCORE in the lattice
        self.vocab = {
            str(sp.IdToPiece(i)): (i, USER_DEFINED_SCORE if score == 0.0 else score)
            for i, score in zip(normal, scores, strict=True)
        }
        self.longest = max((len(p) for p in self.vocab), default=1)
        self._normalize: Callable[[str], tuple[str, list[int]]] = lambda s: sp.Normalize(s, with_offsets=True)

    def encode(self, text: str, rng: np.random.Generator) -> Encoded:
        """``tok.encode`` with a sampled segmentation (the same cap, window and offsets)."""
        return self.tok.encode_with(text, lambda src: self.pieces(src, rng))

    def pieces(self, src: str, rng: np.random.Generator | None) -> list[Piece]:
        """A segmentation of ``src``: sampled with ``rng``, the best one without."""
        norm, offsets = self._normalize(src)
        edges = self._lattice(norm)
        path = _sample(edges, len(norm), self.alpha, rng) if rng is not None else _best(edges, len(norm))
        out: list[Piece] = []
        for begin, end, piece in path:
            if piece == self.unk_id and out and out[-1][0] == self.unk_id and out[-1][2] == offsets[begin]:
                out[-1] = (piece, out[-1][1], offsets[end])  # sentencepiece merges neighbouring <unk>
            else:
                out.append((piece, offsets[begin], offsets[end]))
        return out

    def viterbi(self, src: str) -> list[Piece]:
        return self.pieces(src, None)

    def _lattice(self, norm: str) -> list[list[tuple[int, int, float]]]:
        """Per end position: the (begin, piece id, score) of every piece that ends there."""
        ends: list[list[tuple[int, int, float]]] = [[] for _ in range(len(norm) + 1)]
        for begin in range(len(norm)):
            covered = False
            for end in range(begin + 1, min(len(norm), begin + self.longest) + 1):
                found = self.vocab.get(norm[begin:end])
                if found is not None:
                    ends[end].append((begin, found[0], found[1]))
                    covered |= end == begin + 1
            if not covered:
                ends[begin + 1].append((begin, self.unk_id, self.unk_score))
        return ends


def _best(ends: list[list[tuple[int, int, float]]], n: int) -> list[tuple[int, int, int]]:
    score = [0.0] + [-math.inf] * n
    back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
    for end in range(1, n + 1):
        for begin, piece, s in ends[end]:
            if score[begin] + s > score[end]:
                score[end], back[end] = score[begin] + s, (begin, piece)
    return _walk(back, n)


def _sample(
    ends: list[list[tuple[int, int, float]]], n: int, alpha: float, rng: np.random.Generator
) -> list[tuple[int, int, int]]:
    forward = [0.0] + [-math.inf] * n
    for end in range(1, n + 1):
        terms = [forward[begin] + alpha * s for begin, _, s in ends[end] if forward[begin] > -math.inf]
        if terms:
            top = max(terms)
            forward[end] = top + math.log(sum(math.exp(t - top) for t in terms))
    path: list[tuple[int, int, int]] = []
    end = n
    while end > 0:
        options = [(begin, piece, forward[begin] + alpha * s) for begin, piece, s in ends[end]]
        top = max(w for _, _, w in options)
        weights = np.array([math.exp(w - top) for _, _, w in options])
        begin, piece, _ = options[int(rng.choice(len(options), p=weights / weights.sum()))]
        path.append((begin, end, piece))
        end = begin
    return path[::-1]


def _walk(back: list[tuple[int, int]], n: int) -> list[tuple[int, int, int]]:
    path: list[tuple[int, int, int]] = []
    end = n
    while end > 0:
        begin, piece = back[end]
        path.append((begin, end, piece))
        end = begin
    return path[::-1]
