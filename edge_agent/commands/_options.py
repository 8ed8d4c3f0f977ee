"""Options shared by the commands that open a model (``intents``, ``logs classify|summarize``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

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


def open_task_model(args: argparse.Namespace, bundle: Any, task: str) -> Any:
    """``bundle``'s model for one task, as the command's options say (backend, threads,
    residency, weight budget, weight cache). Imports the runtime only when called."""
    from edge_agent.runtime.backend import load_backend
    from edge_agent.runtime.model import Model

    backend = load_backend(args.backend)
    return Model(
        bundle,
        backend=backend,
        threads=args.threads,
        residency=args.residency,
        weight_budget_mb=args.weight_budget_mb,
        tasks=(task,),
        weight_cache_dir=cache_dir_for(args, backend.name),
    )
