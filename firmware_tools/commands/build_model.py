"""``edge-fw build-model``: rebuild the default bundle from nothing (data to int8 segments)."""

from __future__ import annotations

import argparse
from pathlib import Path

from edge_agent.runtime.bundle import default_bundle_path

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "build-model", help="generate data, train teacher + student, convert, write the bundle"
    )
    p.add_argument(
        "--out", type=Path, default=default_bundle_path(), help="bundle directory (replaced on success)"
    )
    p.add_argument("--tiny", action="store_true", help="miniature data and one short epoch (CI smoke build)")
    p.add_argument("--seed", type=_seed, default=7, help="seed of data generation and training (>= 0)")
    p.set_defaults(func=_run)


def _seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed must be >= 0, got {value}")
    return value


def _run(args: argparse.Namespace) -> int:
    from firmware_tools.model.build import build  # heavy: TensorFlow

    build(args.out, tiny=args.tiny, seed=args.seed)
    return 0
