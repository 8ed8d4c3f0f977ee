"""``edge-fw``: build-machine tools (data, train, convert, bundle, sign)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

__all__ = ["main"]

_COMMAND_MODULES = (
    "firmware_tools.commands.build_model",
    "firmware_tools.commands.evaluate",
    "firmware_tools.commands.synth_bundle",
    "firmware_tools.commands.fuse_graphs",
    "firmware_tools.commands.sign",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="edge-fw", description=__doc__)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))
