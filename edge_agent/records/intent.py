"""Result types of intent recognition (the ``edge-agent intents`` JSON contract)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["IntentResult", "SlotValue", "Span"]


@dataclass(frozen=True)
class Span:
    """A tagged character span of the input text (end exclusive)."""

    start: int
    end: int
    slot: str
    confidence: float


@dataclass(frozen=True)
class SlotValue:
    """One output slot: normalized ``value`` plus the ``raw`` text it came from.

    Implied slots (e.g. ``domain`` from the word "lights") carry the span of the word that
    implied them; slots filled from context (the satellite's area) have start = end = -1.
    """

    value: Any
    raw: str
    start: int
    end: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "raw": self.raw,
            "start": self.start,
            "end": self.end,
            "confidence": round(self.confidence, 4),
        }


@dataclass(frozen=True)
class IntentResult:
    text: str
    intent: str | None
    confidence: float
    slots: dict[str, SlotValue] = field(default_factory=dict)
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "intent": self.intent,
            "confidence": round(self.confidence, 4),
            "slots": {k: v.to_dict() for k, v in self.slots.items()},
        }
        if self.truncated:
            out["truncated"] = True
        return out
