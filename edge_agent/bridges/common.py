"""What the bridges share: their config base, the home they may replace, pipeline outputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from edge_agent.messages.base import Publish
from edge_agent.nlu.home import Home
from edge_agent.pipeline.core import Output

__all__ = ["BridgeConfig", "HomeBinding", "HomeHolder", "HomeTarget", "Retire", "to_outputs"]

# retire one log source from HA: the outputs that remove its entities
Retire = Callable[[str], list[Output]]


class BridgeConfig(BaseModel):
    """Base of the bridges' config sections: frozen, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class HomeHolder(Protocol):
    """A recognizer that resolves entities against a replaceable home (``IntentRecognizer``)."""

    home: Home | None


class HomeTarget(Protocol):
    def set_home(self, home: Home) -> None: ...


class HomeBinding:
    """The home the recognizer in service resolves against. Control and HA learning replace it;
    it follows bundle swaps (``bind`` the new recognizer). ``holder`` None: a recognizer without
    a home (test doubles), where a new home changes nothing."""

    def __init__(self, home: Home, holder: HomeHolder | None) -> None:
        self.home = home
        self._holder = holder

    def set_home(self, home: Home) -> None:
        self.home = home
        if self._holder is not None:
            self._holder.home = home

    def bind(self, holder: HomeHolder | None) -> None:
        self._holder = holder
        if holder is not None:
            holder.home = self.home


def to_outputs(msgs: Sequence[Publish], label: str, qos: int | None = None) -> list[Output]:
    """Pipeline outputs from the pure modules' messages; ``qos`` overrides theirs (Hermes' setting)."""
    return [
        Output(m.topic, m.payload, label, qos=m.qos if qos is None else qos, retain=m.retain) for m in msgs
    ]
