"""Expected calibration error of the intent confidence on the real-phrasing development set, before
and after the bundle's temperature scaling, and what the per-intent thresholds do there.

Usage::

    python bench/intents_calibration.py --data-dir ../shared/data [--bundle DIR] [--split dev]

The int8 model of the bundle (the edge runtime, as devices run it) scores the mapped CLINC150 test
and Snips validate utterances (``firmware_tools/data/real.py``; ``--split val`` for CLINC's
validation split, which the build calibrates on). Prints, for temperature 1 and for the manifest's
temperature: ECE over 15 equal-width confidence bins of the top class (out of scope counts as a
class), negative log-likelihood, and in-scope accuracy / out-of-scope rejection with and without
the per-intent thresholds.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edge_agent.runtime.bundle import default_bundle_path, load_bundle  # noqa: E402
from edge_agent.runtime.tokenizer import Tokenizer  # noqa: E402
from firmware_tools.data.real import load_real  # noqa: E402
from firmware_tools.model.build import runtime_logits  # noqa: E402
from firmware_tools.model.dataset import INTENT_LABELS, encode_intents  # noqa: E402
from firmware_tools.model.metrics import accept, softmax  # noqa: E402

OOS = len(INTENT_LABELS) - 1


def ece(probs: np.ndarray, gold: np.ndarray, bins: int = 15) -> float:
    conf, pred = probs.max(-1), probs.argmax(-1)
    right = pred == gold
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            total += inside.mean() * abs(right[inside].mean() - conf[inside].mean())
    return float(total)


def rates(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float]:
    in_scope = gold != OOS
    return float((pred[in_scope] == gold[in_scope]).mean()), float((pred[~in_scope] == OOS).mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", type=Path, default=default_bundle_path())
    ap.add_argument("--data-dir", type=Path, required=True, help="directory holding clinc150/ and snips2017/")
    ap.add_argument("--split", default="dev", choices=("dev", "val"))
    args = ap.parse_args()
    manifest = load_bundle(args.bundle).manifest
    if list(manifest["labels"]["intents"]) != list(INTENT_LABELS):
        print("the bundle's intent labels differ from this checkout's", file=sys.stderr)
        return 2
    tok = Tokenizer(args.bundle / manifest["tokenizer"]["file"], int(manifest["tokenizer"]["max_len"]))
    arrays = encode_intents(tok, load_real(args.data_dir, args.split))
    logits = runtime_logits(args.bundle, arrays.ids, arrays.ids[:1])["intent"]
    cal = manifest.get("calibration", {})
    t = float(cal.get("temperature", 1.0))
    thresholds = cal.get("intent_thresholds") or None
    gold = arrays.intent
    n_in = int((gold != OOS).sum())
    print(f"{args.split}: {len(gold)} utterances ({n_in} in scope), bundle {args.bundle}")
    for label, temp in (("temperature 1 (raw)", 1.0), (f"temperature {t:.2f} (bundle)", t)):
        probs = softmax(logits, temp)
        nll = float(-np.log(probs[np.arange(len(gold)), gold] + 1e-12).mean())
        acc, rej = rates(probs.argmax(-1), gold)
        th_acc, th_rej = rates(accept(probs, thresholds), gold)
        print(
            f"{label:28s} ECE {ece(probs, gold):.4f}  NLL {nll:.4f}  argmax: in scope {acc:.2%}, "
            f"rejected {rej:.2%}  with thresholds: in scope {th_acc:.2%}, rejected {th_rej:.2%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
