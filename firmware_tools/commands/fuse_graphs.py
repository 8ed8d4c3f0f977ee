"""``edge-fw fuse-graphs BUNDLE``: add one-file (fused) task graphs to an existing bundle.

``edge-fw build-model`` already writes them; this adds them to a bundle built before they
existed, without retraining. The segments stay; the manifest gains ``fused`` and the new files.
Sign after fusing: the manifest changes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from edge_agent.errors import BundleError
from firmware_tools.commands import refuse_signed

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("fuse-graphs", help="add fused (one-file) task graphs to a bundle")
    p.add_argument("bundle", type=Path, help="bundle directory (changed in place)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from firmware_tools.model.fuse import fuse_bundle

    if refuse_signed(args.bundle, "fuse-graphs", "fusing", "fuse"):
        return 2
    try:
        manifest = fuse_bundle(args.bundle)
    except BundleError as exc:
        print(f"edge-fw fuse-graphs: {exc}", file=sys.stderr)
        return 2
    for task, entry in manifest["fused"].items():
        print(
            f"{task}: {entry['file']} ({manifest['files'][entry['file']]['size']} bytes) joins "
            f"{' + '.join(entry['segments'])}"
        )
    return 0
