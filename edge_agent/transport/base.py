"""Transport-neutral types: what arrives (``Inbound``) and the ``Publisher`` interface.

The pipeline only knows these. A durable outbox or a dedup layer wraps a ``Publisher`` and is
itself a ``Publisher``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Acker", "Inbound", "PublishDone", "PublishOutcome", "Publisher"]


@dataclass(frozen=True)
class Inbound:
    """One received message. ``mid``/``qos`` identify it for the manual acknowledgement."""

    topic: str
    payload: bytes
    qos: int
    mid: int
    retain: bool
    dup: bool
    received_at: float  # wall clock (time.time), for records
    received_mono: float  # time.perf_counter, for latencies
    session: int = 0  # which connection delivered it (acknowledgements are ordered per connection)
    link: str = "main"  # which MQTT session (client id) delivered it: "main" or "bulk"


@dataclass(frozen=True)
class PublishOutcome:
    """How a publish ended: ``ok`` only when the broker acknowledged it with a success code."""

    ok: bool
    reason_code: int
    reason: str


PublishDone = Callable[[PublishOutcome], None]


class Publisher(Protocol):
    def publish(
        self,
        topic: str,
        payload: bytes,
        *,
        qos: int = 1,
        retain: bool = False,
        on_done: PublishDone | None = None,
    ) -> None:
        """Queue a publish; ``on_done`` is called once with the outcome (possibly on another thread)."""
        ...


class Acker(Protocol):
    def ack(self, inbound: Inbound) -> None:
        """Acknowledge an input to the broker once its results are safe."""
        ...
