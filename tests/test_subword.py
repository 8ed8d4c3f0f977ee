"""The build's sampled segmentations (firmware_tools/model/subword.py), on the shipped tokenizer:
the lattice is sentencepiece's own (its best path is sentencepiece's encoding), samples repeat
with the generator's seed, and they follow the distribution sentencepiece's own sampler draws."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from edge_agent.runtime.bundle import default_bundle_path
from edge_agent.runtime.tokenizer import Tokenizer
from firmware_tools.data import intents, logs
from firmware_tools.model.dataset import encode_intents, encode_logs
from firmware_tools.model.subword import SegmentationSampler

ODD = [
    "Café  lights ON",
    "ﬁne <*> naïve 日本 x",  # a ligature, the user-defined symbol, unknown characters side by side
    "  leading spaces",
    "über straße",
    "",
    "   ",
    "tab\there",
    "<*><*>x",
    "x" * 2000,  # beyond the window: cut as encode cuts it
]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer(Path(default_bundle_path()) / "tokenizer.model", 48)


def _texts() -> list[str]:
    return [e.text for e in intents.generate(5, 600)] + [e.line for e in logs.generate(5, 400)] + ODD


def test_the_best_path_of_the_lattice_is_sentencepiece_s_own_encoding(tok: Tokenizer) -> None:
    sampler = SegmentationSampler(tok)
    for text in _texts():
        mine, theirs = tok.encode_with(text, sampler.viterbi), tok.encode(text)
        assert mine.ids.tolist() == theirs.ids.tolist(), text
        assert (mine.offsets, mine.truncated) == (theirs.offsets, theirs.truncated), text


def test_samples_repeat_with_the_seed_and_keep_offsets_on_the_text(tok: Tokenizer) -> None:
    sampler = SegmentationSampler(tok)
    texts = _texts()

    def draw(seed: int) -> list[list[int]]:
        rng = np.random.default_rng(seed)
        return [sampler.encode(t, rng).ids.tolist() for t in texts]

    first = draw(1)
    assert draw(1) == first
    other = draw(2)
    assert sum(a != b for a, b in zip(first, other, strict=True)) > len(texts) // 4
    assert sum(a != tok.encode(t).ids.tolist() for a, t in zip(first, texts, strict=True)) > len(texts) // 4
    rng = np.random.default_rng(3)
    for text in texts:
        enc = sampler.encode(text, rng)
        assert enc.length == int((enc.ids != 0).sum())
        ends = [0, *(e for _, e in enc.offsets)]
        # pieces follow each other along the text, each inside it
        assert all(0 <= s <= e <= len(text) for s, e in enc.offsets), text
        assert all(ends[k] <= s for k, (s, _) in enumerate(enc.offsets)), text


@pytest.mark.parametrize("text", ["dim the kitchen lights", "password", "<*>", "ab<*>cd"])
def test_samples_follow_sentencepiece_s_own_distribution(tok: Tokenizer, text: str) -> None:
    """The share of the likeliest segmentation and the mean number of pieces, ours (seeded)
    against sentencepiece's sampler (not seeded: its draws differ every run, so the bounds are
    five standard errors wide)."""
    n = 4000
    sampler, rng, sp = SegmentationSampler(tok), np.random.default_rng(7), tok.processor
    ours = [tuple(int(i) for i in sampler.encode(text, rng).ids if i) for _ in range(n)]
    theirs = [tuple(sp.encode(text, enable_sampling=True, alpha=0.1, nbest_size=-1)) for _ in range(n)]
    top, share = Counter(theirs).most_common(1)[0]
    p = share / n
    assert abs(Counter(ours)[top] / n - p) < 5 * np.sqrt(2 * p * (1 - p) / n)
    lengths_ours, lengths_theirs = np.array([len(x) for x in ours]), np.array([len(x) for x in theirs])
    spread = np.sqrt((lengths_ours.var() + lengths_theirs.var()) / n)
    assert abs(lengths_ours.mean() - lengths_theirs.mean()) < 5 * spread + 1e-9


def test_the_build_s_encodings_repeat_with_the_seed(tok: Tokenizer) -> None:
    utterances, lines = intents.generate(8, 300), logs.generate(8, 300)
    a = encode_intents(tok, utterances, sample_every=2, seed=4)
    assert np.array_equal(a.ids, encode_intents(tok, utterances, sample_every=2, seed=4).ids)
    assert not np.array_equal(a.ids, encode_intents(tok, utterances, sample_every=2, seed=5).ids)
    plain = encode_intents(tok, utterances)
    # only every other row is sampled; the rest is the plain encoding
    assert np.array_equal(a.ids[1::2], plain.ids[1::2]) and not np.array_equal(a.ids[::2], plain.ids[::2])
    b = encode_logs(tok, lines, sample_every=3, seed=4)
    assert np.array_equal(b.ids, encode_logs(tok, lines, sample_every=3, seed=4).ids)
    assert np.array_equal(b.ids[1::3], encode_logs(tok, lines).ids[1::3])
