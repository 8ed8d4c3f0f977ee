"""Helpers for the build-tool tests that need TensorFlow: a check script run in a child Python
(TensorFlow must stay out of the pytest process, whose tflite-runtime interpreters clash with it),
and safetensors bytes for checkpoints made in a test."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def run_checks(namespace: dict[str, object]) -> int:
    """The body of a check script's ``main``: run every ``check_*`` function of ``namespace``
    (the script's ``globals()``) in name order and print how many passed."""
    checks = [f for name, f in sorted(namespace.items()) if name.startswith("check_") and callable(f)]
    for check in checks:
        check()
    print(f"{len(checks)} checks passed")
    return 0


def run_check_script(name: str, expect: str, timeout: int = 300) -> None:
    """Run ``tests/<name>`` as ``__main__`` in a child Python from this checkout (``-c`` puts the
    working directory first on the path) and require exit 0 and ``expect`` on its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", f"import runpy; runpy.run_path('tests/{name}', run_name='__main__')"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert expect in proc.stdout


def safetensors_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    """A safetensors file of float32 ``tensors``: header length, JSON header, raw data."""
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        raw = arr.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)
