"""``edge-fw calibrate-custom BUNDLE --data-dir DIR``: choose a bundle's custom-intent settings again.

``build-model`` chooses ``calibration.custom_intents`` (the threshold, the confidence map, how
the sentence embedding and the word-piece overlap are mixed) on SGD development episodes
(``firmware_tools/model/custom_calib.py``). This runs the same choice on an existing bundle,
without retraining, for a bundle built before the choice changed. The manifest changes: sign
afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edge_agent.errors import BundleError
from firmware_tools.commands import refuse_signed

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "calibrate-custom", help="choose a bundle's custom-intent settings again (no retraining)"
    )
    p.add_argument("bundle", type=Path, help="bundle directory (its manifest is changed in place)")
    p.add_argument(
        "--data-dir", type=Path, required=True, help="directory holding sgd/dev.jsonl (../shared/data)"
    )
    p.add_argument("--seed", type=int, help="episode seed (default: the bundle's build seed)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from firmware_tools.model.custom_calib import recalibrate_bundle

    if refuse_signed(args.bundle, "calibrate-custom", "calibrating", "calibrate"):
        return 2
    try:
        manifest = recalibrate_bundle(args.bundle, args.data_dir, args.seed)
    except (BundleError, ValueError) as exc:
        print(f"edge-fw calibrate-custom: {exc}", file=sys.stderr)
        return 2
    cal = manifest["calibration"]["custom_intents"]
    found = manifest["metrics"]["student_int8"]
    metrics = {k: round(v, 4) for k, v in found.items() if k.startswith("custom_")}
    print(f"calibration.custom_intents: {json.dumps(cal)}")
    print(f"on SGD development episodes: {json.dumps(metrics)}")
    return 0
