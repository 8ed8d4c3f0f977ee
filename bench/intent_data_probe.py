"""Does a change to the training rows help before a build pays for it? A frozen-encoder probe.

    .venv/bin/python bench/intent_data_probe.py [--data-dir ../shared/data] [--seeds 7 8 9]
        [--generated 8000] [--per-source 5000] [--cache FILE]

The cheap check that comes before a model build whose only change is to the intent rows (the
generator, the mapping of a corpus; docs/model.md plans each build with it). For each seed this
fits a multinomial logistic regression on frozen all-MiniLM-L6-v2 sentence embeddings (the
build's teacher, mean-pooled, unit length) of ``--generated`` rows of this checkout's generator
and up to ``--per-source`` mapped training rows each of CLINC150 and Snips 2017, then prints one
line of figures at the argmax:

- SGD test (never an intent source of the build) in scope, its film and music requests to play
  (``bench/intents_sgd_kinds.py``'s kinds), and its out-of-scope requests rejected;
- the real-phrasing dev set (CLINC150 test + Snips validate, mapped) in scope and out of scope
  rejected (a guard: both sources train the head);
- ``tests/data/oos_dev.txt`` rejected (a guard).

To compare a change with main, run it in a checkout of each (``git worktree add``) with the same
seeds: the rows of one seed differ only where the change does. ``--cache`` keeps the embeddings
between runs (the first run embeds about 25,000 texts: a few minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import sys
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from encoder_probe import OOS, label_index, minilm  # noqa: E402
from intents_sgd_kinds import kind_of  # noqa: E402

from bench._cli import oos_dev_lines  # noqa: E402
from firmware_tools.data.intents import IntentExample, generate  # noqa: E402
from firmware_tools.data.real import load_real  # noqa: E402
from firmware_tools.data.sgd import load_sgd  # noqa: E402
from firmware_tools.model.dataset import INTENT_LABELS  # noqa: E402
from firmware_tools.model.linear import fit_softmax, softmax_logits  # noqa: E402

PLAY = INTENT_LABELS.index("HassMediaSearchAndPlay")


class Embedder:
    """Frozen MiniLM sentence embeddings, unit length, kept by text (and in ``cache``)."""

    def __init__(self, cache: Path | None) -> None:
        self._embed = minilm()
        self._path = cache
        self._known: dict[str, np.ndarray] = {}
        if cache is not None and cache.is_file():
            self._known = pickle.loads(cache.read_bytes())

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        new = sorted({t for t in texts if t not in self._known})
        if new:
            matrix = self._embed(new)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            self._known.update(zip(new, matrix, strict=True))
            if self._path is not None:
                self._path.write_bytes(pickle.dumps(self._known))
        return np.stack([self._known[t] for t in texts])


def share(hits: np.ndarray) -> str:
    return f"{100 * hits.mean():.2f}%" if hits.size else "-"


def training_rows(
    seed: int, generated: int, per_source: int, real: list[IntentExample]
) -> list[IntentExample]:
    rng = random.Random(seed)
    rows = list(generate(seed, generated))
    for source in ("clinc", "snips"):
        pool = [e for e in real if e.origin.startswith(source)]
        rows += rng.sample(pool, min(per_source, len(pool)))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--seeds", type=int, nargs="+", default=[7, 8, 9])
    ap.add_argument("--generated", type=int, default=8000)
    ap.add_argument("--per-source", type=int, default=5000)
    ap.add_argument("--cache", type=Path, help="pickle of embeddings kept between runs")
    args = ap.parse_args(argv)

    embed = Embedder(args.cache)
    real = load_real(args.data_dir, "train")
    dev = load_real(args.data_dir, "dev")
    sgd = load_sgd(args.data_dir, "test")
    oos_dev = oos_dev_lines()
    sgd_gold = np.array([label_index(e.intent) for e in sgd])
    sgd_kind = np.array([kind_of(e.text) for e in sgd])
    dev_gold = np.array([label_index(e.intent) for e in dev])
    for seed in args.seeds:
        rows = training_rows(seed, args.generated, args.per_source, real)
        w = fit_softmax(
            embed([r.text for r in rows]), np.array([label_index(r.intent) for r in rows]), len(INTENT_LABELS)
        )

        def predict(texts: Sequence[str], w: np.ndarray = w) -> np.ndarray:
            return np.asarray(np.argmax(softmax_logits(w, embed(texts)), axis=1))

        pred = predict([e.text for e in sgd])
        inside = sgd_gold != OOS
        parts = [f"seed {seed}: SGD in scope {share(pred[inside] == sgd_gold[inside])}"]
        for kind in ("film", "music"):
            rows_of = inside & (sgd_kind == kind) & (sgd_gold == PLAY)
            parts.append(f"{kind} {share(pred[rows_of] == PLAY)} of {int(rows_of.sum())}")
        parts.append(f"out of scope rejected {share(pred[~inside] == OOS)}")
        pred = predict([e.text for e in dev])
        inside = dev_gold != OOS
        parts.append(
            f"| real phrasing in scope {share(pred[inside] == dev_gold[inside])}, "
            f"out of scope rejected {share(pred[~inside] == OOS)}"
        )
        parts.append(f"| oos_dev.txt rejected {share(predict(oos_dev) == OOS)}")
        print(", ".join(parts[:4]) + " " + " ".join(parts[4:]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
