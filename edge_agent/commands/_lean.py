"""Process settings for a lean start, made before numpy and structlog are imported (they do
nothing once they are, e.g. when a test calls a command in-process).

Shared by ``edge-agent run`` and ``edge-agent intents``; docs/runtime.md ("Memory") says what
each part of the process costs.
"""

from __future__ import annotations

import os
import sys

__all__ = ["lean_start"]


def lean_start(*, openssl: bool = True) -> None:
    """- ``OPENBLAS_NUM_THREADS=1``: numpy's OpenBLAS starts a worker thread per core at import,
      which may spin for a few tens of ms of CPU; nothing here multiplies matrices (the model runs
      in TFLite, with its own threads). A value set by the user wins.
    - no ``rich``: structlog's development module imports it, when it is installed (a dependency
      of the build tools, not of the agent), to draw exception tracebacks at a terminal; plain
      tracebacks do, and the process keeps about 6 MB.
    - ``openssl=False``: no OpenSSL, about 2 MB, for a process that opens no TLS connection
      (paho imports ``ssl``, so not the service): numpy's import reaches ``hmac``, which would
      load ``_hashlib`` and with it libcrypto; ``hashlib`` and ``hmac`` fall back to Python's
      built-in hashes by design.
    """
    if "numpy" in sys.modules:
        return
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _block("rich")
    if not openssl:
        _block("_hashlib")


def _block(name: str) -> None:
    """``import name`` raises ImportError from now on (unless it is imported already)."""
    if name not in sys.modules:
        sys.modules[name] = None  # type: ignore[assignment]
