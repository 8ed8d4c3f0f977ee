"""Message kinds: one module per kind that owns its topic(s), payload and schema version.

The JSON schemas of every payload ship in ``edge_agent/schemas/`` (``load_schema(name)``).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_NAMES", "load_schema"]

SCHEMA_NAMES = ("transcript", "logs", "intent", "summary", "alert", "dlq", "status", "stats", "config")


def load_schema(name: str) -> dict[str, Any]:
    """The packaged JSON schema ``<name>.schema.json``."""
    text = resources.files("edge_agent").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
