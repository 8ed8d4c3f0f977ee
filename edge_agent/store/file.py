"""Stores: a directory of files written atomically, and an in-memory one."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from edge_agent.errors import ConfigError

__all__ = ["FileStore", "MemoryStore", "check_key"]

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_key(key: str) -> str:
    """Keys are file names: letters, digits, ``.``, ``_``, ``-``; no paths."""
    if not _KEY.match(key) or ".." in key:
        raise ConfigError(f"store key {key!r} must match {_KEY.pattern} (no paths)")
    return key


class FileStore:
    """One file per key in ``directory``. A save writes a temporary file in the same directory,
    fsyncs it, renames it over the old one (``os.replace``) and fsyncs the directory, so a crash
    leaves either the old or the new value, never a torn one."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._dir = Path(directory)
        self._dir.mkdir(parents=True, exist_ok=True)

    @property
    def directory(self) -> Path:
        return self._dir

    def save(self, key: str, data: bytes) -> None:
        target = self._dir / check_key(key)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self._dir)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._sync_dir()

    def load(self, key: str) -> bytes | None:
        try:
            return (self._dir / check_key(key)).read_bytes()
        except FileNotFoundError:
            return None

    def _sync_dir(self) -> None:
        try:
            fd = os.open(self._dir, os.O_RDONLY)
        except OSError:
            return  # platforms without directory handles
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


class MemoryStore:
    """A store that keeps values in a dict (tests, ``--no-state`` runs)."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}

    def save(self, key: str, data: bytes) -> None:
        self._data[check_key(key)] = bytes(data)

    def load(self, key: str) -> bytes | None:
        return self._data.get(check_key(key))
