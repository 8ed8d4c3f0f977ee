"""Output ``{prefix}/{site}/dlq``: an input that could not be processed, with the reason.

Example::

    {"schema": "edge-agent/dlq/1", "reason": "transcript is not UTF-8: invalid start byte at byte 0",
     "topic": "edge/kitchen/transcript", "payload_b64": "/w==", "payload_size": 1,
     "truncated": false, "received_at": 1764500000.123}

The input is still acknowledged: the record is the one place it is kept.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, ClassVar

from edge_agent.messages.base import Message

__all__ = ["SCHEMA", "SUFFIX", "DeadLetter"]

SUFFIX = "dlq"
SCHEMA = "edge-agent/dlq/1"
MAX_REASON_CHARS = 1000


@dataclass(frozen=True)
class DeadLetter(Message):
    """The record of one refused input: why, where it came from, its first ``cap`` bytes."""

    reason: str
    input_topic: str
    input_payload: bytes
    received_at: float
    cap: int = 4096

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        kept = self.input_payload[: self.cap]
        return {
            "schema": SCHEMA,
            "reason": self.reason[:MAX_REASON_CHARS],
            "topic": self.input_topic,
            "payload_b64": base64.b64encode(kept).decode("ascii"),
            "payload_size": len(self.input_payload),
            "truncated": len(kept) < len(self.input_payload),
            "received_at": round(self.received_at, 3),
        }
