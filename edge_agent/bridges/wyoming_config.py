"""Config model of the Wyoming intent and handle service (``wyoming:`` in the agent's config).

No I/O here; the server that reads it is ``edge_agent.bridges.wyoming``. Home Assistant's access
token (``ha_token_file``) is read by ``edge_agent.config.load`` into a private attribute.

Example (YAML)::

    wyoming:
      enabled: true
      host: 0.0.0.0        # reachable by Home Assistant on another machine
      port: 10500
      ha_url: http://homeassistant.local:8123   # version, states and areas from HA's REST API
      ha_token_file: ha_token                   # a long-lived access token, first line
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator

from edge_agent.bridges.ha_intents import OLDEST, parse_version

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

    ha_version: str | None = Field(
        None,
        description="The Home Assistant release that uses the agent (e.g. 2025.4): decides which "
        "intents are sent as they are, which are mapped and which are explained in words. Used when "
        "the agent cannot ask HA (no ha_url, or HA unreachable); unknown: the agent assumes "
        f"{OLDEST}, the oldest release with a Wyoming conversation agent.",
    )
    ha_url: str | None = Field(
        None,
        description="Home Assistant's base URL (http://homeassistant.local:8123). With it and a token "
        "the agent reads HA's version, its entities' states and areas from HA's REST API, to speak "
        "answers to questions and to turn 'brighter' into a brightness.",
    )
    ha_token_file: Path | None = Field(
        None,
        description="File whose first line is a long-lived access token of Home Assistant (needs "
        "ha_url; not readable by others). Relative: to $CREDENTIALS_DIRECTORY, else to the config "
        "file's directory. Default with ha_url: $CREDENTIALS_DIRECTORY/ha_token.",
    )
    ha_timeout_s: Annotated[float, Field(gt=0, le=30)] = Field(
        3.0, description="Time allowed for one request to Home Assistant's API."
    )
    _ha_token: str | None = PrivateAttr(None)  # read by edge_agent.config.load, never logged

    @property
    def ha_token(self) -> str | None:
        """Home Assistant's access token as read by ``load`` (None: no ha_url, or not loaded)."""
        return self._ha_token

    @field_validator("ha_version")
    @classmethod
    def _ha_version(cls, value: str | None) -> str | None:
        if value is not None:
            parse_version(value)
        return value

    @field_validator("ha_url")
    @classmethod
    def _ha_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                "must be an http:// or https:// URL with a host, like http://homeassistant.local:8123"
            )
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError(
                "must be a base URL without credentials, query or fragment (the token goes in ha_token_file)"
            )
        return value.rstrip("/")

    @field_validator("ha_token_file")
    @classmethod
    def _token_needs_url(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is not None and info.data.get("ha_url") is None:
            raise ValueError("needs wyoming.ha_url (the Home Assistant the token is for)")
        return value

    @field_validator("zeroconf_name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not (0 < len(value) <= 63 and "." not in value):
            raise ValueError("must be 1-63 characters without '.' (one DNS label)")
        return value
