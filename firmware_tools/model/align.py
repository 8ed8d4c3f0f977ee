"""Slot tags across two tokenizations: gold BIO tags on the teacher's word pieces, and the
teacher's per-piece tag distributions moved onto the student's sentencepiece tokens by character
offsets. Pure numpy (no TensorFlow)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from firmware_tools.model.dataset import tag_index

__all__ = ["align_slot_logits", "wordpiece_tags"]


def wordpiece_tags(offsets: np.ndarray, spans: Sequence[tuple[int, int, str]]) -> np.ndarray:
    """BIO tag ids per WordPiece position from char spans (special and pad positions: O)."""
    index = tag_index()
    tags = np.zeros(len(offsets), np.int32)
    for start, end, slot in spans:
        if f"B-{slot}" not in index:
            continue
        first = True
        for i, (ts, te) in enumerate(offsets):
            if te <= ts or te <= start or ts >= end:
                continue
            tags[i] = index[f"{'B' if first else 'I'}-{slot}"]
            first = False
    return tags


def align_slot_logits(
    t_logits: np.ndarray, t_offsets: np.ndarray, s_offsets: Sequence[Sequence[tuple[int, int]]], s_len: int
) -> np.ndarray:
    """The teacher's slot-tag distribution of each student token, as log-probabilities.

    A student token takes the distribution of the teacher piece where its first character lies
    (else the first piece it overlaps). When two student tokens fall in one teacher piece, the
    later ones are inside the span: their B- mass moves to the matching I- tag. Tokens that meet
    no teacher piece, bare word-boundary pieces (no characters; their gold tag is ``O`` too, and
    the run-time decoder skips them) and pads get a sure ``O``.
    """
    n, _, c = t_logits.shape
    z = t_logits - t_logits.max(axis=-1, keepdims=True)
    prob = np.exp(z)
    prob /= prob.sum(axis=-1, keepdims=True)
    sure_o = np.full(c, 1e-6, np.float32)
    sure_o[0] = 1.0
    out = np.tile(sure_o, (n, s_len, 1))
    b_idx = np.arange(1, c, 2)
    for r in range(n):
        starts, ends = t_offsets[r, :, 0], t_offsets[r, :, 1]
        real = ends > starts
        prev = -1
        for i, (s, e) in enumerate(s_offsets[r][:s_len]):
            if e <= s:  # a bare word-boundary piece: no characters, so O (as its gold tag is)
                prev = -1
                continue
            hit = np.nonzero(real & (starts <= s) & (s < ends))[0]
            if not len(hit):
                hit = np.nonzero(real & (starts < e) & (ends > s))[0]
            if not len(hit):
                prev = -1
                continue
            j = int(hit[0])
            p = prob[r, j].copy()
            if j == prev:
                p[b_idx + 1] += p[b_idx]
                p[b_idx] = 0.0
            out[r, i] = p
            prev = j
    return np.log(np.maximum(out, 1e-6)).astype(np.float32)
