"""``edge-fw calibrate-intents BUNDLE [--data-dir DIR] [--oos-target R]``: choose a bundle's intent
temperature and per-intent thresholds again, as ``build-model`` does, without retraining.

The thresholds are raised until ``--oos-target`` of the calibration split's out-of-scope rows are
rejected (``firmware_tools/model/metrics.py``); a bundle built before that target changed gets the
new one this way. The manifest changes: sign afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edge_agent.errors import BundleError
from firmware_tools.commands import refuse_signed
from firmware_tools.commands.build_model import _share

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "calibrate-intents", help="choose a bundle's intent temperature and thresholds again (no retraining)"
    )
    p.add_argument("bundle", type=Path, help="bundle directory (its manifest is changed in place)")
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the build's real data (../shared/data), for its validation split; needed when the "
        "bundle was built with --data-dir",
    )
    p.add_argument(
        "--oos-target",
        type=_share,
        default=None,
        metavar="SHARE",
        help="the share, in (0, 1], of the calibration split's out-of-scope rows the thresholds "
        "must reject (default: build-model's, 0.99)",
    )
    p.add_argument("--seed", type=int, help="the calibration split's seed (default: the bundle's build seed)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from firmware_tools.model.intent_calib import recalibrate_intents
    from firmware_tools.model.metrics import OOS_TARGET

    if refuse_signed(args.bundle, "calibrate-intents", "calibrating", "calibrate"):
        return 2
    target = OOS_TARGET if args.oos_target is None else args.oos_target
    try:
        manifest = recalibrate_intents(args.bundle, args.data_dir, target, args.seed)
    except (BundleError, ValueError, OSError) as exc:
        print(f"edge-fw calibrate-intents: {exc}", file=sys.stderr)
        return 2
    cal = manifest["calibration"]
    raised = {k: v for k, v in cal["intent_thresholds"].items() if v > 0}
    print(f"temperature {cal['temperature']}, thresholds above the argmax: {json.dumps(raised)}")
    return 0
