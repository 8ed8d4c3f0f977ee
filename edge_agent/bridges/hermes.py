"""Config models of the ecosystem bridges: Hermes NLU, Home Assistant discovery, runtime control.

The service's main ``Config`` embeds these as ``hermes``, ``homeassistant`` and ``control``.
Unknown keys are refused; every field has bounds and a description. No I/O here.

Example (YAML)::

    hermes:
      enabled: true
      site_ids: [kitchen, default]
    homeassistant:
      enabled: true
      log_sources: [zigbee2mqtt, system]
    control:
      enabled: true
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ControlConfig", "HermesConfig", "HomeAssistantConfig", "validate_topic_id"]

_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TOPIC_BAD = ("+", "#", "\x00")


def validate_topic_id(value: str, what: str) -> str:
    """An id that is used as one MQTT topic level (HA allows ``[A-Za-z0-9_-]`` there)."""
    if not _ID_RE.match(value):
        raise ValueError(f"{what} {value!r} must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")
    return value


def _validate_topic(value: str) -> str:
    if not value or value.startswith("/") or value.endswith("/"):
        raise ValueError(f"topic {value!r} must be non-empty and not start or end with '/'")
    if any(ch in value for ch in _TOPIC_BAD):
        raise ValueError(f"topic {value!r} must not contain wildcards ('+', '#') or NUL")
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HermesConfig(_Model):
    """Rhasspy/Snips Hermes NLU bridge (``hermes/nlu/query`` in, ``hermes/intent/<name>`` out)."""

    enabled: bool = Field(False, description="Answer Hermes NLU queries on the bus.")
    site_ids: list[str] = Field(
        default_factory=list,
        description="Answer only queries whose siteId is listed; empty = answer every site.",
        max_length=256,
    )
    publish_intent_parsed: bool = Field(
        False, description="Also publish hermes/nlu/intentParsed (as Rhasspy's NLU services do)."
    )
    qos: Annotated[int, Field(ge=0, le=2)] = Field(1, description="QoS of the subscription and results.")

    @field_validator("site_ids")
    @classmethod
    def _sites(cls, value: list[str]) -> list[str]:
        for site in value:
            if not site or any(ch in site for ch in _TOPIC_BAD):
                raise ValueError(f"site id {site!r} must be non-empty and free of '+', '#'")
        return value


class HomeAssistantConfig(_Model):
    """Home Assistant device-based MQTT discovery of the agent (see docs/home-assistant.md)."""

    enabled: bool = Field(False, description="Publish discovery, availability and states for HA.")
    discovery_prefix: str = Field("homeassistant", description="HA's discovery prefix.")
    status_topic: str | None = Field(
        None, description="HA's birth/will topic; default '<discovery_prefix>/status'."
    )
    node_id: str | None = Field(
        None, description="Device object id in the discovery topic; default 'edge_agent_<site_id>'."
    )
    device_name: str | None = Field(None, description="Device name shown in HA; default 'Edge agent <site>'.")
    suggested_area: str | None = Field(None, description="Area HA suggests for the device.")
    log_sources: list[str] = Field(
        default_factory=list,
        description="Log sources announced at start; others are announced when their first summary arrives.",
        max_length=256,
    )
    source_idle_retire_s: Annotated[float, Field(gt=0)] | None = Field(
        None, description="Retire (remove from HA) a log source after this many seconds without logs."
    )
    alert_hold_s: Annotated[float, Field(gt=0, le=7 * 86400)] = Field(
        300.0, description="The alert binary sensor stays on this long after a source's last alert."
    )
    announce_jitter_s: Annotated[float, Field(ge=0, le=60)] = Field(
        1.0, description="Random delay before re-announcing after HA's birth message (HA's advice)."
    )

    @field_validator("discovery_prefix", "status_topic")
    @classmethod
    def _topic(cls, value: str | None) -> str | None:
        return None if value is None else _validate_topic(value)

    @field_validator("node_id")
    @classmethod
    def _node(cls, value: str | None) -> str | None:
        return None if value is None else validate_topic_id(value, "node_id")

    @field_validator("log_sources")
    @classmethod
    def _sources(cls, value: list[str]) -> list[str]:
        return [validate_topic_id(s, "log source") for s in value]


class ControlConfig(_Model):
    """Runtime control over MQTT (see docs/home-assistant.md, section Control)."""

    enabled: bool = Field(False, description="Accept runtime control commands.")
    topic: str | None = Field(None, description="Command topic; default '<prefix>/<site>/control'.")
    reply_topic: str | None = Field(
        None, description="Acknowledgement topic; default '<prefix>/<site>/control/reply'."
    )
    state_dir: str | None = Field(
        None,
        description="Directory of the control state; default the agent's state directory "
        "(reliability.state_dir and its defaults).",
    )
    state_key: str = Field("control", description="Store key the control state is persisted under.")
    learn_from_homeassistant: bool = Field(
        False, description="Learn entity names and areas from HA discovery configs seen on the bus."
    )
    max_payload_bytes: Annotated[int, Field(ge=256, le=16 * 1024 * 1024)] = Field(
        1024 * 1024, description="Commands larger than this are refused."
    )

    @field_validator("topic", "reply_topic")
    @classmethod
    def _topic(cls, value: str | None) -> str | None:
        return None if value is None else _validate_topic(value)

    @field_validator("state_key")
    @classmethod
    def _key(cls, value: str) -> str:
        return validate_topic_id(value, "state_key")
