"""Which frozen encoder would make the better teacher? A linear probe scored cross-source (issue 31).

    .venv/bin/python bench/encoder_probe.py [--encoders minilm mpnet both] [--mpnet-dir DIR]
        [--data-dir ../shared/data] [--generated 8000] [--per-source 5000] [--seed 7]
        [--ha-tests ../shared/eval/intents/ha_tests_en.jsonl]

Issue 31 asks to compare encoders cheaply before fine-tuning one: frozen sentence embeddings and a
linear head, scored on the cross-source figure. For each encoder this embeds (mean-pooled, unit
length) the build's kinds of training rows: ``--generated`` rows of the generator
(``firmware_tools.data.intents``) and up to ``--per-source`` mapped training rows of CLINC150 and of
Snips 2017 (``firmware_tools.data.real``: CLINC's out-of-scope and unmapped intents are the
out-of-scope class), then, for each source left out in turn, fits a multinomial logistic
regression (L2, full batch) on the other rows and scores the left-out source's held-out split:

- ``clinc``: CLINC150 ``test`` + ``oos_test``, mapped; ``snips``: Snips ``validate``, mapped;
- ``sgd``: Schema-Guided Dialogue ``test`` mapped by ``firmware_tools.data.sgd`` (weather and
  media services are ours, the others out of scope). SGD never trains the intent head, so its
  figure needs no fold: every probe leaves it out.

Printed per encoder and source at the argmax: in-scope accuracy, in-scope requests rejected as
out of scope, out-of-scope requests rejected; then the mean and worst in-scope accuracy (the
build's targets: mean >= 88%, worst >= 80%, false rejection <= 6%). ``both`` concatenates the two
embeddings. The all-mpnet-base-v2 folder: ``firmware_tools/model/mpnet.py``. Source: the held-out splits of
sources the probe did not train on; the generator is written here, so it is not left out.

``--ha-tests FILE``: also fits the head on every training row and prints its intent accuracy on
Home Assistant's English test sentences (a guard: what a frozen teacher alone would give there,
against the shipped student's figure in ``bench/intents_dev.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from firmware_tools.data.intents import IntentExample, generate  # noqa: E402
from firmware_tools.data.real import load_real  # noqa: E402
from firmware_tools.data.sgd import load_sgd  # noqa: E402
from firmware_tools.model.dataset import INTENT_LABELS  # noqa: E402
from firmware_tools.model.linear import fit_softmax, softmax_logits  # noqa: E402

OOS = len(INTENT_LABELS) - 1
SOURCES = ("clinc", "snips", "sgd")
Embed = Callable[[Sequence[str]], np.ndarray]


def label_index(intent: str | None) -> int:
    return OOS if intent is None else INTENT_LABELS.index(intent)


def minilm() -> Embed:
    from firmware_tools.model.pretrained import default_zip, load_checkpoint
    from firmware_tools.model.teacher import sentence_embeddings

    ckpt = load_checkpoint(default_zip())
    return lambda texts: sentence_embeddings(ckpt, list(texts)).astype(np.float32)


def mpnet(folder: Path | None) -> Embed:
    if folder is None or not (folder / "model.safetensors").is_file():
        raise SystemExit("--encoders mpnet/both need --mpnet-dir: the unpacked folder (model/mpnet.py)")
    from firmware_tools.model.mpnet import MPNetEmbedder

    return MPNetEmbedder(folder)


def fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Softmax regression weights (D + 1, C) (``firmware_tools.model.linear``)."""
    return fit_softmax(x, y, len(INTENT_LABELS))


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.argmax(softmax_logits(w, x), axis=1)


def scores(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float, float, int, int]:
    """(in-scope accuracy, in-scope rejected, out-of-scope rejected, in-scope n, oos n)."""
    inside = gold != OOS
    acc = float((pred[inside] == gold[inside]).mean()) if inside.any() else float("nan")
    false_rej = float((pred[inside] == OOS).mean()) if inside.any() else float("nan")
    oos_rej = float((pred[~inside] == OOS).mean()) if (~inside).any() else float("nan")
    return acc, false_rej, oos_rej, int(inside.sum()), int((~inside).sum())


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoders", nargs="+", choices=("minilm", "mpnet", "both"), default=["minilm"])
    ap.add_argument("--mpnet-dir", type=Path)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--generated", type=int, default=8000, help="generated training rows")
    ap.add_argument("--per-source", type=int, default=5000, help="training rows of each real source at most")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ha-tests", type=Path, help="HA's test sentences (jsonl: text, intent): a guard line")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    train_rows = {"generated": generate(args.seed, args.generated)}
    real = load_real(args.data_dir, "train")
    for source in ("clinc", "snips"):
        rows = [e for e in real if e.origin.startswith(source)]
        train_rows[source] = rng.sample(rows, min(args.per_source, len(rows)))
    dev = load_real(args.data_dir, "dev")
    test_rows = {
        "clinc": [e for e in dev if e.origin.startswith("clinc")],
        "snips": [e for e in dev if e.origin.startswith("snips")],
        "sgd": load_sgd(args.data_dir, "test"),
    }
    ha: list[tuple[str, int]] = []
    if args.ha_tests is not None:
        for line in args.ha_tests.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if case.get("intent") in INTENT_LABELS:  # the intents we serve
                ha.append((case["text"], INTENT_LABELS.index(case["intent"])))
    texts = sorted(
        {e.text for rows in (*train_rows.values(), *test_rows.values()) for e in rows} | {t for t, _ in ha}
    )
    print(
        f"{len(texts)} texts: training rows "
        + ", ".join(f"{k} {len(v)}" for k, v in train_rows.items())
        + "; held out "
        + ", ".join(f"{k} {len(v)}" for k, v in test_rows.items())
    )

    vectors: dict[str, dict[str, np.ndarray]] = {}
    needed = {part for e in args.encoders for part in _parts(e)}
    for name in sorted(needed):
        started = time.perf_counter()
        embed = minilm() if name == "minilm" else mpnet(args.mpnet_dir)
        matrix = np.asarray(embed(texts), np.float32)
        vectors[name] = dict(zip(texts, matrix, strict=True))
        print(f"{name}: {matrix.shape[1]} wide, {len(texts)} texts in {time.perf_counter() - started:.0f} s")

    def features(encoder: str, texts: Sequence[str]) -> np.ndarray:
        x = np.hstack([np.stack([vectors[p][t] for t in texts]) for p in _parts(encoder)])
        return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)

    def fit_rows(encoder: str, rows: Sequence[IntentExample]) -> np.ndarray:
        return fit(features(encoder, [r.text for r in rows]), np.array([label_index(r.intent) for r in rows]))

    for encoder in args.encoders:
        print(f"\n== {encoder}")
        head = f"{'left out':<9} {'in scope':>9} {'falsely rejected':>17} {'oos rejected':>13}"
        print(f"{head} {'n in/oos':>12}")
        accs, rejs = [], []
        for source in SOURCES:
            rows = [r for k, v in train_rows.items() if k != source for r in v]
            w = fit_rows(encoder, rows)
            gold = np.array([label_index(r.intent) for r in test_rows[source]])
            pred = predict(w, features(encoder, [r.text for r in test_rows[source]]))
            acc, false_rej, oos_rej, n_in, n_oos = scores(pred, gold)
            accs.append(acc)
            rejs.append(false_rej)
            shares = f"{100 * acc:8.2f}% {100 * false_rej:16.2f}% {100 * oos_rej:12.2f}%"
            print(f"{source:<9} {shares} {n_in:>6}/{n_oos:<5}")
        print(
            f"mean in scope {100 * np.mean(accs):.2f}%, worst {100 * min(accs):.2f}%, "
            f"mean falsely rejected {100 * np.mean(rejs):.2f}% (targets: 88%, 80%, 6%)"
        )
        if ha:
            w = fit_rows(encoder, [r for v in train_rows.values() for r in v])
            pred = predict(w, features(encoder, [t for t, _ in ha]))
            gold = np.array([g for _, g in ha])
            right, rejected = float((pred == gold).mean()), float((pred == OOS).mean())
            print(
                f"HA test sentences (guard), head fitted on every training row: intent "
                f"{100 * right:.2f}% of {len(ha)}, rejected {100 * rejected:.2f}%"
            )
    return 0


def _parts(encoder: str) -> tuple[str, ...]:
    return ("minilm", "mpnet") if encoder == "both" else (encoder,)


if __name__ == "__main__":
    raise SystemExit(main())
