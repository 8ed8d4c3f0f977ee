"""Options shared by the commands that open a model (``intents``, ``logs classify|summarize``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from edge_agent.runtime.cachedir import make_dir, parse_setting, weight_cache_dir

__all__ = ["add_weight_cache", "cache_dir_for"]


def add_weight_cache(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--xnnpack-weight-cache",
        type=parse_setting,
        default="auto",
        metavar="auto|off|DIR",
        help="keep XNNPACK's packed weights in files (ai-edge-litert): auto (default) does when "
        "--residency stream, under $CACHE_DIRECTORY, $XDG_CACHE_HOME/edge-agent or ~/.cache/edge-agent",
    )


def cache_dir_for(args: argparse.Namespace, backend: str) -> Path | None:
    """Where the opened model's packed weights go for these arguments (None: no cache); ``auto``
    goes without, saying why, when its directory cannot be created."""
    directory = weight_cache_dir(args.xnnpack_weight_cache, backend, args.residency)
    if directory is not None and args.xnnpack_weight_cache == "auto":
        problem = make_dir(directory)
        if problem is not None:
            print(
                f"edge-agent: XNNPACK weight cache off: {problem} (--xnnpack-weight-cache DIR or off)",
                file=sys.stderr,
            )
            return None
    return directory
