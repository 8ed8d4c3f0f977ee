"""MQTT transport: connect, subscribe, publish, acknowledgements, availability. Sees (topic, bytes)."""

from __future__ import annotations

from edge_agent.transport.base import Acker, Inbound, PublishDone, Publisher, PublishOutcome

__all__ = ["Acker", "Inbound", "PublishDone", "PublishOutcome", "Publisher"]
