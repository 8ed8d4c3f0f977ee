"""Persistence behind two methods: ``save(key, bytes)`` and ``load(key)``."""

from __future__ import annotations

from edge_agent.store.base import Store
from edge_agent.store.file import FileStore, MemoryStore

__all__ = ["FileStore", "MemoryStore", "Store"]
