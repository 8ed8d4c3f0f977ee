"""Output ``{prefix}/{site}/intent``: the recognized intent of one transcript.

Example::

    {"schema": "edge-agent/intent/1", "id": "abc", "site": "kitchen",
     "text": "turn on the kitchen light", "intent": "HassTurnOn", "confidence": 0.97,
     "slots": {"area": {"value": "Kitchen", "raw": "kitchen", "start": 12, "end": 19, "confidence": 0.99}},
     "latency_ms": 1.8, "model": "edge-intents@1.0.0", "mode": "normal", "step": "normal"}

``intent`` is null when the text is not a supported request; ``id`` is the transcript's id, or
a generated one when the transcript had none. ``mode`` is ``normal`` or ``degraded`` and ``step``
the SLA ladder's step the result was made on (``normal``, ``short_input``, ``small_model``;
docs/sla.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from edge_agent.messages.base import Message

__all__ = ["SCHEMA", "SUFFIX", "IntentMessage"]

SUFFIX = "intent"
SCHEMA = "edge-agent/intent/1"


@dataclass(frozen=True)
class IntentMessage(Message):
    id: str
    site: str
    text: str
    intent: str | None
    confidence: float
    slots: dict[str, Any] = field(default_factory=dict)
    latency_ms: float = 0.0
    model: str = ""
    mode: str = "normal"
    step: str = "normal"
    extra: dict[str, Any] = field(default_factory=dict)

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "id": self.id,
            "site": self.site,
            "text": self.text,
            "intent": self.intent,
            "confidence": round(float(self.confidence), 4),
            "slots": self.slots,
            "latency_ms": round(float(self.latency_ms), 3),
            "model": self.model,
            "mode": self.mode,
            "step": self.step,
        }
        out.update(self.extra)
        return out
