"""The persisted state of runtime control: disabled intents, thresholds, the home, learned entities.

Versioned JSON through ``edge_agent.store`` (``ControlState.to_json`` / ``from_json``); loading
refuses anything malformed rather than guessing. Pure: the bridge does the saving.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from edge_agent.errors import PayloadError
from edge_agent.messages.control import CONTROL_SCHEMA_VERSION, check_thresholds
from edge_agent.nlu.home import Home, HomeFileError

__all__ = ["ControlState", "check_home"]


@dataclass(frozen=True)
class ControlState:
    """Everything runtime control changes; persisted as versioned JSON."""

    disabled: frozenset[str] = frozenset()
    thresholds: Mapping[str, float] = field(default_factory=dict)
    home: Mapping[str, Any] | None = None  # replaces the configured home when set
    learned: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # discovery topic -> entities

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "schema": CONTROL_SCHEMA_VERSION,
                "disabled": sorted(self.disabled),
                "thresholds": dict(sorted(self.thresholds.items())),
                "home": self.home,
                "learned": dict(self.learned),
            }
        )

    @classmethod
    def from_json(cls, raw: bytes) -> ControlState:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise PayloadError(f"control state is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("schema") != CONTROL_SCHEMA_VERSION:
            raise PayloadError("control state has an unknown schema version")
        disabled = data.get("disabled", [])
        thresholds = data.get("thresholds", {})
        home = data.get("home")
        learned = data.get("learned", {})
        if not isinstance(disabled, list) or not all(isinstance(i, str) for i in disabled):
            raise PayloadError("control state: 'disabled' must be a list of intent names")
        if not isinstance(thresholds, dict) or not isinstance(learned, dict):
            raise PayloadError("control state: 'thresholds' and 'learned' must be objects")
        if home is not None:
            check_home(home)
        for topic, item in learned.items():
            _check_learned(topic, item)
        return cls(frozenset(disabled), check_thresholds(thresholds, None), home, learned)


def _check_learned(topic: str, item: Any) -> None:
    ok = (
        isinstance(item, dict)
        and isinstance(item.get("entities"), list)
        and isinstance(item.get("areas"), list)
    )
    if ok:
        ok = all(
            isinstance(e, dict)
            and set(e) <= {"name", "domain", "area"}
            and isinstance(e.get("name"), str)
            and isinstance(e.get("domain"), str)
            for e in item["entities"]
        ) and all(isinstance(a, str) for a in item["areas"])
    if not ok:
        raise PayloadError(f"control state: learned entry of {topic!r} is malformed")


def check_home(home: Any) -> Home:
    """A home object (as in ``set_home`` and the state) as a ``Home``; ``PayloadError`` if invalid."""
    try:
        return Home.from_dict(home, source="control home")
    except HomeFileError as exc:
        raise PayloadError(str(exc)) from None
