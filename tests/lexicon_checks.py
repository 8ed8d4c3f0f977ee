"""The students' token embedding started from the pretrained encoder (firmware_tools/model/
lexicon.py), with the real all-MiniLM-L6-v2 weights and the shipped tokenizer.

Run by tests/test_lexicon.py in a child process: TensorFlow must not be loaded into the pytest
process, whose tflite-runtime interpreters clash with it.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from edge_agent.runtime.tokenizer import Tokenizer
from firmware_tools.model.lexicon import initial_table, piece_texts, piece_vectors
from firmware_tools.model.pretrained import default_zip, load_checkpoint
from firmware_tools.model.teacher import sentence_embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run by runpy: the helpers beside it
from childcheck import run_checks

TOKENIZER = Path(__file__).resolve().parents[1] / "edge_agent/models/default/tokenizer.model"


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def check_words_the_encoder_finds_alike_start_alike() -> None:
    """Pieces of like meaning start nearer each other than pieces of unlike meaning, in a table
    narrower than the encoder, and pieces without a text keep their random rows."""
    ckpt = load_checkpoint(default_zip())
    texts = [t for t in piece_texts(Tokenizer(TOKENIZER, 32)) if t][:400]
    words = ["film", "movie", "song", "music", "kettle", "toaster"]
    texts = [*words, *[t for t in texts if t not in words], ""]
    vectors = piece_vectors(texts, lambda t: sentence_embeddings(ckpt, t))
    assert not vectors[-1].any() and np.allclose(np.linalg.norm(vectors[:-1], axis=1), 1.0, atol=1e-2)
    rng = np.random.default_rng(0)
    table = rng.uniform(-0.05, 0.05, size=(len(texts), 16)).astype(np.float32)
    out = initial_table(vectors, table)
    np.testing.assert_array_equal(out[-1], table[-1])
    film, movie, song, music, kettle, toaster = out[:6]
    assert _cos(film, movie) > _cos(film, kettle) + 0.2
    assert _cos(song, music) > _cos(song, toaster) + 0.2
    assert _cos(kettle, toaster) > _cos(kettle, song)
    # the random table's rows have no such order
    assert abs(_cos(table[0], table[1]) - _cos(table[0], table[4])) < 1.0


def check_a_student_starts_from_the_table() -> None:
    """``_StudentTrainer`` with piece vectors builds a student whose token embedding is
    ``initial_table`` of them (on all of its width or on a share of it), and keys its weights
    apart from a student without them and from one of another share."""
    from firmware_tools.model import build as b
    from firmware_tools.model.dataset import INTENT_LABELS, SLOT_TAGS, IntentArrays, LogArrays
    from firmware_tools.model.train import make_targets

    captured: list[np.ndarray] = []

    class Probe(b._StudentTrainer):
        def __call__(self, name, shape, epochs):  # type: ignore[no-untyped-def]
            import firmware_tools.model.train as train

            real_fit = train.fit

            def fit(net, *a, **k):  # type: ignore[no-untyped-def]
                captured.append(np.array(net.embed.tok.embeddings.numpy()))
                raise StopIteration

            train.fit = fit
            try:
                return super().__call__(name, shape, epochs)
            except StopIteration:
                return None
            finally:
                train.fit = real_fit

    vocab, L = 40, 6
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(vocab, 24)).astype(np.float32)
    vectors[:3] = 0.0
    ids = np.array([[5, 6, 7, 0, 0, 0]], np.int32)
    intents = IntentArrays(ids, np.array([0], np.int32), np.zeros_like(ids), [], [])
    logs = LogArrays(ids.copy(), np.array([1]), np.array([0]), np.array([0.0], np.float32), [])
    n = {"intent": len(INTENT_LABELS), "severity": 6, "category": 12, "anomaly": 1}
    teacher = {k: np.zeros((2, c), np.float32) for k, c in n.items()}
    teacher["slots"] = np.zeros((2, L, len(SLOT_TAGS)), np.float32)
    targets = make_targets(intents, logs, teacher, n)
    base = dict(
        vocab=vocab, max_len=L, n_intents=n["intent"], n_tags=len(SLOT_TAGS), n_severity=6, n_category=12
    )
    shape = dict(d_model=8, block_kinds=("conv",), n_heads=1, d_ff=8)
    plan = b.plan_for(tiny=True)

    keys: list[str] = []

    class Cache:
        def path(self, stage, name):  # type: ignore[no-untyped-def]
            keys.append(name)
            return None

    half = dataclasses.replace(plan, lexical_init=True, lexical_width=0.5)
    for p, lexicon in ((plan, None), (plan, vectors), (half, vectors)):
        Probe(base, targets, p, 7, Cache(), (), 5, lexicon)("s", shape, 1)  # type: ignore[arg-type]
    random_start, lexical_start, half_start = captured
    np.testing.assert_array_equal(lexical_start[:3], random_start[:3])  # the same seed, kept rows
    np.testing.assert_allclose(lexical_start, initial_table(vectors, random_start), rtol=1e-6)
    assert not np.allclose(lexical_start[3:], random_start[3:])
    np.testing.assert_allclose(half_start, initial_table(vectors, random_start, 0.5), rtol=1e-6)
    np.testing.assert_array_equal(half_start[:, 4:], random_start[:, 4:])  # 4 of 8 columns random
    assert len(set(keys)) == 3, keys


if __name__ == "__main__":
    sys.exit(run_checks(globals()))
