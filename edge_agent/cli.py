"""``edge-agent`` command line: argument parsing only; each subcommand lives in ``commands/``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# what `edge-agent --help` tells a user (the module docstring above is for developers)
DESCRIPTION = (
    "On-device language agent for IoT gateways: turns voice transcripts into intents with slots "
    "and log lines into labels, summaries and alerts, with a small int8 model on this machine. "
    "`run` serves an MQTT broker; `intents` and `logs` work on files or stdin."
)
EPILOG = "`edge-agent COMMAND --help` lists a command's options; README.md and docs/ say more."

# command name -> the module that registers it (register(subparsers)). Only the module of the
# command being run is imported, so `edge-agent intents` does not pay for paho, pydantic or drain3.
_COMMANDS: dict[str, str] = {
    "intents": "edge_agent.commands.intents",
    "logs": "edge_agent.commands.logs",
    "run": "edge_agent.commands.run",
    "check-config": "edge_agent.commands.run",
    "demo": "edge_agent.commands.demo",
    "bundle": "edge_agent.commands.bundle",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command, or only ``command``'s module when it is a known name."""
    parser = argparse.ArgumentParser(prog="edge-agent", description=DESCRIPTION, epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", required=True)
    wanted = [_COMMANDS[command]] if command in _COMMANDS else list(_COMMANDS.values())
    for name in dict.fromkeys(wanted):
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        sys.stderr.close()
        return 0
