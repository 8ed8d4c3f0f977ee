"""``SlotCollector``: the slots of one utterance as they are built, first value of a slot wins
unless a rule overwrites it; and ``slot_overlaps``, whether a built slot covers a stretch of text."""

from __future__ import annotations

from edge_agent.records.intent import SlotValue, Span

__all__ = ["SlotCollector", "slot_overlaps"]


class SlotCollector:
    def __init__(self) -> None:
        self.slots: dict[str, SlotValue] = {}

    def put(self, name: str, value: object, span: Span, raw: str, overwrite: bool = False) -> None:
        if name in self.slots and not overwrite:
            return
        self.slots[name] = SlotValue(value, raw, span.start, span.end, span.confidence)


def slot_overlaps(a: SlotValue, start: int, end: int) -> bool:
    """``a`` was read from the text (not filled from context) and overlaps ``text[start:end]``."""
    return a.start >= 0 and a.start < end and start < a.end
