"""``edge-agent`` command line. Argument parsing only: each subcommand lives in ``commands/``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# one line per command module; each has register(subparsers)
_COMMAND_MODULES = (
    "edge_agent.commands.intents",
    "edge_agent.commands.logs",
    "edge_agent.commands.run",
    "edge_agent.commands.demo",
    "edge_agent.commands.bundle",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="edge-agent", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # command not built yet
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        sys.stderr.close()
        return 0
