"""Keep the TFLite runtimes' native ``INFO`` lines off stderr; their warnings and errors stay.

Both interpreter packages log from C++ with ``fprintf(stderr, "INFO: ...")`` (TFLite's
``MinimalLogger``), e.g. "INFO: Created TensorFlow Lite XNNPACK delegate for CPU." whenever an
interpreter applies its default XNNPACK delegate. Python's ``logging`` and ``TF_CPP_MIN_LOG_LEVEL``
do not reach that logger.

- tflite-runtime exports the logger's setter
  (``tflite::logging_internal::MinimalLogger::SetMinimumLogSeverity``): it is set to warnings once,
  when the package's extension is first imported.
- ai-edge-litert's Python wrapper keeps the logger inside a library that exports no such symbol,
  so :func:`native_info_dropped` redirects file descriptor 2 to a temporary file around the calls
  that log (interpreter creation, delegate loading) and writes back every line that is not ``INFO``.
  A process-wide lock keeps two threads from redirecting at once; whatever another thread writes
  to stderr meanwhile is written back after, not lost.
- LiteRT's C API (``litert_c.py``) takes its minimum severity as an environment option.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import IO

__all__ = ["INFO_PREFIX", "native_info_dropped", "quiet_minimal_logger"]

INFO_PREFIX = b"INFO: "
_SETTER = "_ZN6tflite16logging_internal13MinimalLogger21SetMinimumLogSeverityENS_11LogSeverityE"
_SEVERITY_WARNING = 2  # tflite::LogSeverity: VERBOSE 0, INFO 1, WARNING 2, ERROR 3, SILENT 4
_STDERR = 2
_redirect_lock = threading.Lock()


def quiet_minimal_logger(extension: ModuleType) -> bool:
    """Set the TFLite logger inside ``extension`` (a loaded extension module) to warnings.
    False when the library does not export the setter (ai-edge-litert's)."""
    path = getattr(extension, "__file__", None)
    if not path:
        return False
    try:
        setter = getattr(ctypes.CDLL(path), _SETTER)  # the loaded library: dlopen returns its handle
    except (OSError, AttributeError):
        return False
    setter.argtypes = [ctypes.c_int]
    setter.restype = ctypes.c_int
    setter(_SEVERITY_WARNING)
    return True


@contextlib.contextmanager
def native_info_dropped() -> Iterator[None]:
    """Around native calls that may log: their ``INFO:`` lines on fd 2 are dropped, the rest kept."""
    with _redirect_lock, tempfile.TemporaryFile() as sink:
        if sys.stderr is not None:
            sys.stderr.flush()  # what Python wrote before stays before
        saved = os.dup(_STDERR)
        try:
            os.dup2(sink.fileno(), _STDERR)
            yield
        finally:
            os.dup2(saved, _STDERR)
            os.close(saved)
            _write_back(sink)


def _write_back(sink: IO[bytes]) -> None:
    """Every line of ``sink`` but the ``INFO:`` ones, to fd 2 (also when the call raised)."""
    sink.seek(0)
    kept = memoryview(b"".join(line for line in sink if not line.startswith(INFO_PREFIX)))
    while kept:
        kept = kept[os.write(_STDERR, kept) :]
