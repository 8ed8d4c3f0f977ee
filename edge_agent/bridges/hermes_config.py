"""The ``hermes:`` config section (the Rhasspy/Snips Hermes NLU bridge).

Apart from ``edge_agent.bridges.hermes`` so that loading a config does not import the bridge:
an agent with Hermes off never does (docs/runtime.md, "Memory").
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from edge_agent.bridges.common import BridgeConfig

__all__ = ["HermesConfig"]

_TOPIC_BAD = ("+", "#", "\x00")


class HermesConfig(BridgeConfig):
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
