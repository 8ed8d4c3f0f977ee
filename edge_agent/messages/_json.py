"""Small JSON helpers shared by the message modules."""

from __future__ import annotations

from typing import Any

import orjson

from edge_agent.errors import PayloadError

__all__ = ["MAX_JSON_DEPTH", "check_depth", "dumps", "loads_object"]

MAX_JSON_DEPTH = 32


def dumps(payload: dict[str, Any]) -> bytes:
    return orjson.dumps(payload)


def check_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` (iterative, so it cannot blow the stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise PayloadError(f"JSON nested deeper than {limit} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def loads_object(raw: bytes) -> Any:
    """Parse JSON or raise PayloadError with the parser's reason."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise PayloadError(f"invalid JSON: {exc}") from None
    check_depth(value)
    return value
