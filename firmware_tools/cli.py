"""``edge-fw``: build-machine tools (data, train, convert, bundle, sign, the default config file)."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

__all__ = ["main"]

DESCRIPTION = (
    "Build-machine tools for edge-agent: build the model bundle from data (build-model), evaluate it, "
    "make synthetic bundles, fuse graphs, choose custom-intent settings and intent thresholds again, "
    "export the teacher as a bundle and sign bundles."
)

_COMMAND_MODULES = (
    "firmware_tools.commands.build_model",
    "firmware_tools.commands.evaluate",
    "firmware_tools.commands.synth_bundle",
    "firmware_tools.commands.fuse_graphs",
    "firmware_tools.commands.calibrate_custom",
    "firmware_tools.commands.calibrate_intents",
    "firmware_tools.commands.refit_logs",
    "firmware_tools.commands.export_teacher",
    "firmware_tools.commands.sign",
    "firmware_tools.commands.default_config",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="edge-fw", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def _exit_on_term(signum: int, _frame: FrameType | None) -> None:
    sys.exit(128 + signum)  # unwinds like Ctrl-C: staged output directories are removed


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's INFO lines, before it is imported
    signal.signal(signal.SIGTERM, _exit_on_term)
    args = build_parser().parse_args(argv)
    return int(args.func(args))
