"""Config model of the Wyoming intent and handle service (``wyoming:`` in the agent's config).

No I/O here; the server that reads it is ``edge_agent.bridges.wyoming``.

Example (YAML)::

    wyoming:
      enabled: true
      host: 0.0.0.0        # reachable by Home Assistant on another machine
      port: 10500
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["WyomingConfig"]


class WyomingConfig(BaseModel):
    """Wyoming protocol server: Home Assistant uses the agent as its conversation agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(False, description="Serve Wyoming describe/recognize/transcript over TCP.")
    host: str = Field(
        "127.0.0.1",
        min_length=1,
        description="Address to listen on; 0.0.0.0 lets Home Assistant on another machine connect "
        "(the protocol has no authentication: firewall the port).",
    )
    port: Annotated[int, Field(ge=0, le=65535)] = Field(
        10500, description="TCP port to listen on; 0 picks a free one (logged as wyoming.listening)."
    )
    max_clients: Annotated[int, Field(ge=1, le=4096)] = Field(
        64, description="Connections served at once; one more is answered with an error and closed."
    )
    idle_timeout_s: Annotated[float, Field(gt=0, le=86400)] = Field(
        60.0, description="A connection that sends nothing for this long is closed."
    )
    max_event_bytes: Annotated[int, Field(ge=1024, le=16 * 1024 * 1024)] = Field(
        65536,
        description="Largest event (header line + data + payload); larger ones are refused "
        "with an error event and the connection is closed.",
    )
    transcript_program: Literal["intent", "handle"] = Field(
        "intent",
        description="Which program answers a 'transcript' when the client selects none: 'intent' "
        "(an intent event; Home Assistant then runs it on its entities) or 'handle' (a spoken "
        "confirmation).",
    )
    area_context_key: str = Field(
        "area",
        min_length=1,
        description="Key of the event's context that carries the satellite's area "
        "(recognize.context / transcript.context).",
    )
    zeroconf: bool = Field(
        False, description="Announce the service over mDNS (_wyoming._tcp); needs the 'zeroconf' package."
    )
    zeroconf_name: str | None = Field(
        None, description="Service name announced over mDNS; default 'edge-agent-<site_id>'."
    )

    @field_validator("zeroconf_name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not (0 < len(value) <= 63 and "." not in value):
            raise ValueError("must be 1-63 characters without '.' (one DNS label)")
        return value
