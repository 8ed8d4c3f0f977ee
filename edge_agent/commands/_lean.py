"""Process settings for a lean start, made before numpy and structlog are imported (they do
nothing once they are, e.g. when a test calls a command in-process).

Shared by ``edge-agent run`` and ``edge-agent intents``; docs/runtime.md ("Memory") says what
each part of the process costs.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["LAZY_NUMPY", "lean_start"]

_M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)

# Subpackages numpy's __init__ imports that the agent never uses: random numbers (with its
# extensions and, through ``secrets``, OpenSSL's hashes), masked arrays, polynomials, FFT.
LAZY_NUMPY = ("numpy.random", "numpy.ma", "numpy.polynomial", "numpy.fft")


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds ``names`` as the path finder does, with a loader that runs a module's code at its
    first attribute access instead of at import (``importlib.util.LazyLoader``)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def lean_start(*, openssl: bool = True, malloc_arenas: int | None = None) -> None:
    """- ``OPENBLAS_NUM_THREADS=1``: numpy's OpenBLAS starts a worker thread per core at import,
      which may spin for a few tens of ms of CPU; nothing here multiplies matrices (the model runs
      in TFLite, with its own threads). A value set by the user wins.
    - no ``rich``: structlog's development module imports it, when it is installed (a dependency
      of the build tools, not of the agent), to draw exception tracebacks at a terminal; plain
      tracebacks do, and the process keeps about 6 MB.
    - numpy imported here, with :data:`LAZY_NUMPY` loaded at first use only (about 6 MB, 9 MB
      with OpenSSL's hashes that ``numpy.random`` would load).
    - ``openssl=False``: no OpenSSL, about 2 MB more, for a process that opens no TLS connection
      (paho imports ``ssl``, so not the service): ``hashlib`` (the bundle check; ``hmac`` through
      ``numpy.random`` when it loads) would load ``_hashlib`` and with it libcrypto; ``hashlib``
      and ``hmac`` fall back to Python's built-in hashes by design.
    - ``malloc_arenas``: at most this many glibc malloc arenas (as ``MALLOC_ARENA_MAX``; a value
      in the environment wins). glibc gives each thread that allocates an arena of its own, up
      to 8 per core, each holding freed memory of its own; the agent's threads mostly wait, and
      two arenas keep about 0.5 MB less resident. No-op without glibc.
    """
    if "numpy" in sys.modules:
        return
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if malloc_arenas is not None and "MALLOC_ARENA_MAX" not in os.environ:
        _limit_arenas(malloc_arenas)
    _block("rich")
    if not openssl:
        _block("_hashlib")
    finder = _LazyFinder(LAZY_NUMPY)
    sys.meta_path.insert(0, finder)
    try:
        import numpy  # noqa: F401
    finally:
        sys.meta_path.remove(finder)


def _limit_arenas(count: int) -> None:
    """glibc's ``mallopt(M_ARENA_MAX, count)``, before threads exist (musl has neither)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, count)


def _block(name: str) -> None:
    """``import name`` raises ImportError from now on (unless it is imported already)."""
    if name not in sys.modules:
        sys.modules[name] = None  # type: ignore[assignment]
