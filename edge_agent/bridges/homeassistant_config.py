"""The ``homeassistant:`` config section (device-based MQTT discovery of the agent).

Apart from ``edge_agent.bridges.homeassistant`` so that loading a config does not import the
bridge: an agent with Home Assistant off never does (docs/runtime.md, "Memory").
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from edge_agent.bridges.common import BridgeConfig
from edge_agent.messages.topics import validate_topic, validate_topic_id

__all__ = ["HomeAssistantConfig"]


class HomeAssistantConfig(BridgeConfig):
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
        return None if value is None else validate_topic(value)

    @field_validator("node_id")
    @classmethod
    def _node(cls, value: str | None) -> str | None:
        return None if value is None else validate_topic_id(value, "node_id")

    @field_validator("log_sources")
    @classmethod
    def _sources(cls, value: list[str]) -> list[str]:
        return [validate_topic_id(s, "log source") for s in value]
