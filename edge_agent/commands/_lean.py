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
import threading
import types
from collections.abc import Sequence
from typing import Any

__all__ = ["DEFERRED", "LAZY_NUMPY", "lean_start"]

_M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)

# Subpackages numpy's __init__ imports that the agent never uses: random numbers (with its
# extensions and, through ``secrets``, OpenSSL's hashes), masked arrays, polynomials, FFT.
LAZY_NUMPY = ("numpy.random", "numpy.ma", "numpy.polynomial", "numpy.fft")

# Modules that libraries import at start whether or not the process uses them; each runs at its
# first use. asyncio: structlog's async loggers (and the Wyoming server, when it is on). ssl:
# paho, http.client, asyncio and our TLS settings; with it OpenSSL's libssl and libcrypto, for a
# TLS connection only. urllib.request (with http.client and email): paho's proxy look-up (with
# PySocks only) and the Home Assistant API client. jsonpickle and configparser: drain3's own state
# and config files, which the agent does not use (logs/templates.py keeps its own state).
DEFERRED = ("asyncio", "ssl", "urllib.request", "jsonpickle", "configparser")

# a deferred module that cannot work without this extension is not deferred where it is missing
# (it then fails at import, as it would have, and the importer's fallback stays in force)
_NEEDS = {"ssl": "_ssl"}


class _DeferredModule(types.ModuleType):
    """A module whose code has not run yet. It runs at the first look-up of a name the module
    does not have; what it has until then are the import system's own (``__spec__``,
    ``__name__``, ``__file__``...), so that importing it again does not run it. A package's
    ``__path__`` is one it does not have yet: importing a submodule runs the package first, as
    a plain import would.

    Unlike ``importlib.util.LazyLoader``, whose modules load at any attribute access, the
    ``__spec__`` that every later ``import`` statement reads included: a module that several
    libraries import (asyncio, ssl) would load at its second import.
    """

    def __getattr__(self, name: str) -> Any:
        _run(self, name)
        return getattr(self, name)

    def __dir__(self) -> list[str]:
        _run(self, "__dir__")
        return dir(self)


class _Pending:
    """What running a deferred module needs: its loader, its package's ``__path__``, and the
    lock of that one run."""

    def __init__(self, loader: importlib.abc.Loader, path: list[str] | None) -> None:
        self.loader = loader
        self.path = path
        self.lock = threading.RLock()
        self.running = False


# deferred packages that ran: a submodule their code imported while the import system was
# looking for it (it asks for ``__path__`` after its last look in sys.modules) is that module
_RAN_PACKAGES: set[str] = set()


def _run(module: types.ModuleType, name: str) -> None:
    """Run ``module``'s code in ``module``, once; another thread waits for that run. A look-up
    from within the run (a circular import) finds the module partly initialised, as it would
    during a plain import; a run that fails takes the module out of ``sys.modules``, as a
    failed import does, and raises."""
    spec = module.__spec__
    assert spec is not None
    pending: _Pending = spec.loader_state
    with pending.lock:
        deferred = isinstance(module, _DeferredModule)
        if not deferred:
            return  # another thread ran it
        if pending.running:
            raise AttributeError(f"partially initialized module {spec.name!r} has no attribute {name!r}")
        pending.running = True
        spec.loader = module.__loader__ = pending.loader
        if pending.path is not None:
            module.__path__ = pending.path
            _RAN_PACKAGES.add(spec.name)
        try:
            pending.loader.exec_module(module)
        except BaseException:
            if sys.modules.get(spec.name) is module:
                del sys.modules[spec.name]
            raise
        finally:
            module.__class__ = types.ModuleType


class _DeferredLoader(importlib.abc.Loader):
    """Creates the module as the file loader would, and defers running its code."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the import system's default module

    def exec_module(self, module: types.ModuleType) -> None:
        spec = module.__spec__
        assert spec is not None
        spec.loader_state = _Pending(self.loader, module.__dict__.pop("__path__", None))
        module.__class__ = _DeferredModule


class _Imported(importlib.abc.Loader):
    """Gives the import system the module that is already there: an ``exec_module`` may put
    another module in ``sys.modules``, and the import returns that one."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        sys.modules[module.__name__] = self.module


class _DeferringFinder(importlib.abc.MetaPathFinder):
    """Defers the code of ``names`` when they are first imported (found as the path finder
    finds them)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        imported = sys.modules.get(fullname)
        if imported is not None and target is None and fullname.rpartition(".")[0] in _RAN_PACKAGES:
            # imported by its package's code, which ran at the import system's ``__path__``
            # look-up: this module, not a second run of its code
            return importlib.machinery.ModuleSpec(fullname, _Imported(imported))
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and isinstance(
            spec.loader, (importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader)
        ):
            spec.loader = _DeferredLoader(spec.loader)
        return spec


def lean_start(*, openssl: bool = True, malloc_arenas: int | None = None) -> None:
    """- ``OPENBLAS_NUM_THREADS=1``: numpy's OpenBLAS starts a worker thread per core at import,
      which may spin for a few tens of ms of CPU; nothing here multiplies matrices (the model runs
      in TFLite, with its own threads). A value set by the user wins.
    - no ``rich``: structlog's development module imports it, when it is installed (a dependency
      of the build tools, not of the agent), to draw exception tracebacks at a terminal; plain
      tracebacks do, and the process keeps about 6 MB.
    - :data:`LAZY_NUMPY` and :data:`DEFERRED` run at their first use only (numpy is imported
      here): numpy's unused parts about 6 MB; asyncio 1.5 MB; ``ssl`` with OpenSSL about 1.3 MB,
      and with ``openssl=False`` libcrypto too (3.5 MB more).
    - ``openssl=False``: ``hashlib`` and ``hmac`` use Python's built-in hashes (by design their
      fallback), not ``_hashlib``, which would load OpenSSL's libcrypto for the bundle check
      and the dedup keys. A TLS connection still loads OpenSSL, through ``ssl``.
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
    names = [name for name in LAZY_NUMPY + DEFERRED if name not in sys.modules and _can_defer(name)]
    sys.meta_path.insert(0, _DeferringFinder(names))
    import numpy  # noqa: F401


def _can_defer(name: str) -> bool:
    needs = _NEEDS.get(name)
    return needs is None or importlib.util.find_spec(needs) is not None


def _limit_arenas(count: int) -> None:
    """glibc's ``mallopt(M_ARENA_MAX, count)``, before threads exist (musl has neither)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, count)


def _block(name: str) -> None:
    """``import name`` raises ImportError from now on (unless it is imported already)."""
    if name not in sys.modules:
        sys.modules[name] = None  # type: ignore[assignment]
