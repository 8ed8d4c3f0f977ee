"""Output directories that appear whole or not at all.

A command writes into a hidden sibling of its output directory (``.NAME.partial-PID``) and
renames it into place once everything is written, so a failed or interrupted run leaves no
half-written directory behind to block the next one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["rewrite_manifest", "staged_dir"]


@contextlib.contextmanager
def staged_dir(out: Path) -> Iterator[Path]:
    """Yield an empty directory to write ``out``'s contents into; it becomes ``out`` when the block
    ends normally (``out`` must be missing or empty) and is removed when the block raises,
    ``KeyboardInterrupt`` and ``SystemExit`` included."""
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        yield stage
        if out.exists():
            out.rmdir()  # OSError when not empty: nothing is overwritten
        os.replace(stage, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def rewrite_manifest(root: Path, manifest: dict[str, Any]) -> None:
    """Replace the manifest of the bundle at ``root`` with ``manifest`` in one rename (a reader
    sees the old file or the new one, never half of it), then check the bundle as the agent will."""
    from edge_agent.runtime.bundle import MANIFEST, load_bundle

    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(root / MANIFEST)
    load_bundle(root)
