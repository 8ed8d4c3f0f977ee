"""The storage interface every persisted part of edge-agent uses."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Store"]


@runtime_checkable
class Store(Protocol):
    """Bytes by key. ``save`` replaces the whole value atomically; ``load`` gives None when absent."""

    def save(self, key: str, data: bytes) -> None: ...

    def load(self, key: str) -> bytes | None: ...
