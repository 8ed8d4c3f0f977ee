"""The ``control:`` config section (runtime control over MQTT).

Apart from ``edge_agent.bridges.control`` so that loading a config does not import the bridge:
an agent with control off never does (docs/runtime.md, "Memory").
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from edge_agent.bridges.common import BridgeConfig
from edge_agent.messages.topics import validate_topic, validate_topic_id

__all__ = ["ControlConfig"]


class ControlConfig(BridgeConfig):
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
        return None if value is None else validate_topic(value)

    @field_validator("state_key")
    @classmethod
    def _key(cls, value: str) -> str:
        return validate_topic_id(value, "state_key")
