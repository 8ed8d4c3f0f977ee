"""``edge-fw refit-logs BUNDLE --out DIR [--log-dir DIR] [--seed N] [--epochs N]``: train a bundle's
log heads again on today's log data with its encoder frozen; the intent graph stays as it is.

Reads the generated log lines of ``firmware_tools/data/logs.py`` (the build's seed and count) and,
with ``--log-dir``, the loghub lines of the training systems, as ``build-model`` does; writes a
copy of the bundle whose log-head segments (and fused log graph) are new
(``firmware_tools/model/log_refit.py``). About a minute on 2 cores. Sign the copy afterwards.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from edge_agent.errors import BundleError
from firmware_tools.commands import refuse_signed

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "refit-logs", help="train a bundle's log heads again on today's log data (its intents untouched)"
    )
    p.add_argument("bundle", type=Path, help="bundle directory (read only)")
    p.add_argument("--out", type=Path, required=True, help="where the refit bundle is written (replaced)")
    p.add_argument(
        "--log-dir",
        type=Path,
        default=None,
        help="loghub 2k samples (../shared/eval/logs), as for build-model",
    )
    p.add_argument(
        "--seed", type=int, default=None, help="the generated lines' seed (default: the bundle's build seed)"
    )
    p.add_argument("--head-seed", type=int, default=0, help="starts the new head's weights (default 0)")
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default 12)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from edge_agent.runtime.bundle import load_bundle
    from firmware_tools.model.log_refit import RefitPlan, refit_log_heads, training_lines

    if refuse_signed(args.bundle, "refit-logs", "refitting", "refit"):
        return 2
    if args.out.resolve() == args.bundle.resolve():
        print("edge-fw refit-logs: --out must be another directory than the bundle", file=sys.stderr)
        return 2
    try:
        seed = args.seed if args.seed is not None else int(load_bundle(args.bundle).manifest["build"]["seed"])
        plan = RefitPlan(
            seed=seed, head_seed=args.head_seed, **({"epochs": args.epochs} if args.epochs else {})
        )
        examples, heldout = training_lines(plan, args.log_dir)
        refit_log_heads(args.bundle, args.out, examples, heldout, plan)
    except (BundleError, ValueError, OSError, KeyError) as exc:
        print(f"edge-fw refit-logs: {exc}", file=sys.stderr)
        return 2
    print(f"refit bundle written to {args.out}")
    return 0
