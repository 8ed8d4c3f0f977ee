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
from typing import Any

from edge_agent.messages._json import dumps
from edge_agent.messages.topics import SiteTopics

__all__ = ["SCHEMA", "SUFFIX", "DeadLetter"]

SUFFIX = "dlq"
SCHEMA = "edge-agent/dlq/1"
MAX_REASON_CHARS = 1000


@dataclass(frozen=True)
class DeadLetter:
    reason: str
    topic: str
    payload: bytes
    received_at: float
    cap: int = 4096

    @staticmethod
    def topic_of(topics: SiteTopics) -> str:
        return topics.topic(SUFFIX)

    def to_dict(self) -> dict[str, Any]:
        kept = self.payload[: self.cap]
        return {
            "schema": SCHEMA,
            "reason": self.reason[:MAX_REASON_CHARS],
            "topic": self.topic,
            "payload_b64": base64.b64encode(kept).decode("ascii"),
            "payload_size": len(self.payload),
            "truncated": len(kept) < len(self.payload),
            "received_at": round(self.received_at, 3),
        }

    def payload_bytes(self) -> bytes:
        return dumps(self.to_dict())
