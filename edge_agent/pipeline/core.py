"""Pipeline value types and the handler registry.

A handler turns a micro-batch of ``Envelope`` s of its kind into ``Outcome`` s: the outputs to
publish and the inputs they settle. Inputs are acknowledged once every output of their outcome
was acknowledged by the broker. Adding an input kind = a route + a handler, registered in one line:
``registry.add(Route(kind, filter, match), handler)``. A handler derives from :class:`HandlerBase`,
which declares the optional hooks (``tick``, ``flush``) as no-ops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from edge_agent.transport.base import Inbound

__all__ = ["Envelope", "Handler", "HandlerBase", "Outcome", "Output", "Registry", "Route"]


@dataclass(frozen=True)
class Envelope:
    """An input routed to a kind. ``key`` is what the route extracted (e.g. the log source)."""

    kind: str
    key: str
    inbound: Inbound
    dedup_key: str | None = None  # recorded (edge_agent.pipeline.dedup) once the results are safe

    @property
    def topic(self) -> str:
        return self.inbound.topic

    @property
    def payload(self) -> bytes:
        return self.inbound.payload


@dataclass(frozen=True)
class Output:
    """One message to publish. ``label`` names it in the counters (``intent``, ``dlq``...)."""

    topic: str
    payload: bytes
    label: str
    qos: int = 1
    retain: bool = False


@dataclass
class Outcome:
    """Outputs and the inputs they settle. ``latency_from`` records processing latency."""

    inputs: list[Envelope]
    outputs: list[Output] = field(default_factory=list)
    record_latency: bool = True


class Handler(Protocol):
    """What the pipeline runs for one input kind (:class:`HandlerBase` gives the hooks)."""

    kind: str
    priority: int  # lower runs first
    batch_max: int
    batch_wait_s: float
    ticks: bool  # tick() has work: the pipeline runs its ticker thread only when some handler's has

    def handle(self, batch: list[Envelope]) -> list[Outcome]: ...
    def tick(self, now: float) -> list[Output]: ...
    def flush(self, now: float) -> list[Output]: ...


class HandlerBase:
    """The optional hooks of a handler, as no-ops: a handler with state over time (log windows,
    HA's delayed announcements) overrides them and sets ``ticks``."""

    ticks: bool = False

    def tick(self, now: float) -> list[Output]:
        """Outputs that are due by time (every ``pipeline.tick_interval_s``): none."""
        return []

    def flush(self, now: float) -> list[Output]:
        """Open state to publish now, before shutting down: none."""
        return []


@dataclass(frozen=True)
class Route:
    """Maps topics to a kind: ``filter`` is subscribed, ``match(topic)`` returns the key or None."""

    kind: str
    filter: str
    match: Callable[[str], str | None]


class Registry:
    def __init__(self) -> None:
        self.routes: list[Route] = []
        self.handlers: dict[str, Handler] = {}

    def add(self, route: Route, handler: Handler) -> None:
        if route.kind != handler.kind:
            raise ValueError(f"route kind {route.kind!r} does not match handler kind {handler.kind!r}")
        self.routes.append(route)
        self.handlers[handler.kind] = handler

    def subscriptions(self) -> list[str]:
        return [route.filter for route in self.routes]

    def route(self, topic: str) -> tuple[str, str] | None:
        for route in self.routes:
            key = route.match(topic)
            if key is not None:
                return route.kind, key
        return None
