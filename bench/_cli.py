"""One `edge-agent` subcommand over lines of input, one JSON result per line (shared by the dev benches)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OOS_DEV = ROOT / "tests" / "data" / "oos_dev.txt"


def oos_dev_lines() -> list[str]:
    """The requests of ``tests/data/oos_dev.txt`` (none of our intents; ``#`` lines are comments)."""
    lines = OOS_DEV.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _pythonpath() -> str:
    """ROOT first; a PYTHONPATH already set stays after it (bench/ensemble's sitecustomize)."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


def run_lines(args: Sequence[str], lines: Sequence[str], bundle: str | None) -> list[dict[str, Any]]:
    """``edge-agent ARGS [--bundle DIR]`` with ``lines`` on stdin; exits with the error if it fails
    or answers a different number of lines."""
    cmd = [sys.executable, "-m", "edge_agent", *args]
    if bundle:
        cmd += ["--bundle", bundle]
    proc = subprocess.run(
        cmd,
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": _pythonpath()},
        check=False,
    )
    name = " ".join(["edge-agent", *args])
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    out = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(out) != len(lines):
        raise SystemExit(f"{name} returned {len(out)} lines for {len(lines)} inputs")
    return out


def paired_line(label: str, a: Sequence[bool], b: Sequence[bool]) -> str:
    """``label``: how many of the same items bundle a and bundle b get right, how many only a,
    how many only b, and the exact two-sided McNemar p (``paired_test``)."""
    import numpy as np

    from firmware_tools.model.metrics import paired_test

    ra, rb = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    t = paired_test(ra, rb)
    return (
        f"{label}: a {int(ra.sum())}/{len(ra)}, b {int(rb.sum())}/{len(rb)}; "
        f"only a right {t['a_only']}, only b right {t['b_only']}, p = {t['p']}"
    )


def print_paired(
    label: str, expected: Sequence[str | None], a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]
) -> None:
    """Per request of one set, whether bundle a and bundle b give the expected intent (out of
    scope is right when rejected), in scope and out of scope apart (``paired_line``)."""
    for scope, what in ((True, "in scope"), (False, "out of scope")):
        keep = [i for i, exp in enumerate(expected) if (exp is not None) == scope]
        if not keep:
            continue
        ra = [a[i].get("intent") == expected[i] for i in keep]
        rb = [b[i].get("intent") == expected[i] for i in keep]
        print(f"  paired, {paired_line(f'{label} {what}', ra, rb)}")
