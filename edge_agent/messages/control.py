"""Runtime control commands in, one reply each out (the command schema; no state, no I/O).

Commands are JSON objects on ``{prefix}/{site}/control`` (the topic is configurable)::

    {"id": "c1", "cmd": "disable_intents", "intents": ["HassBroadcast"]}
    {"id": "c2", "cmd": "enable_intents", "intents": ["HassBroadcast"]}
    {"id": "c3", "cmd": "set_thresholds", "thresholds": {"HassTurnOn": 0.7, "HassToggle": null}}
    {"id": "c4", "cmd": "set_home", "home": {"areas": [...], "entities": [...]}}
    {"id": "c5", "cmd": "retire_source", "source": "zigbee"}
    {"id": "c6", "cmd": "status"}
    {"id": "c7", "cmd": "reload"}          # the custom-sentences files (intents.custom_sentences)

Every command gets one reply on ``{prefix}/{site}/control/reply``:
``{"schema": 1, "id", "cmd", "ok": true, "state": {...}}`` or ``{"ok": false, "error": "..."}``.
What a command does is ``edge_agent.bridges.control``'s business.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from edge_agent.errors import PayloadError
from edge_agent.messages.base import Message

__all__ = [
    "COMMANDS",
    "CONTROL_SCHEMA_VERSION",
    "SUFFIX",
    "ControlReply",
    "check_thresholds",
    "intent_list",
    "parse_command",
    "source_name",
    "threshold_changes",
]

CONTROL_SCHEMA_VERSION = 1
SUFFIX = "control"
COMMANDS = (
    "enable_intents",
    "disable_intents",
    "set_thresholds",
    "set_home",
    "retire_source",
    "status",
    "reload",
)


def parse_command(payload: bytes, max_bytes: int) -> dict[str, Any]:
    """A command object; raises ``PayloadError`` naming what is wrong."""
    if len(payload) > max_bytes:
        raise PayloadError(f"command larger than {max_bytes} bytes")
    try:
        cmd = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise PayloadError(f"command is not JSON: {exc}") from None
    if not isinstance(cmd, dict):
        raise PayloadError("command must be a JSON object with 'cmd'")
    if cmd.get("id") is not None and not isinstance(cmd.get("id"), (str, int)):
        raise PayloadError("'id' must be a string or an integer")
    return cmd


def check_thresholds(values: Mapping[str, Any], known: Iterable[str] | None) -> dict[str, float]:
    """Thresholds as floats in [0, 1]; with ``known``, every intent must be one of them."""
    known_set = set(known) if known is not None else None
    out: dict[str, float] = {}
    for intent, value in values.items():
        if known_set is not None and intent not in known_set:
            raise PayloadError(f"unknown intent {intent!r} in thresholds")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise PayloadError(f"threshold of {intent!r} must be a number in [0, 1], got {value!r}")
        if not 0.0 <= value <= 1.0:
            raise PayloadError(f"threshold of {intent!r} must be in [0, 1], got {value}")
        out[intent] = float(value)
    return out


def intent_list(cmd: Mapping[str, Any], known: Sequence[str]) -> list[str]:
    """``intents`` of an enable/disable command: a non-empty list of known intent names."""
    intents = cmd.get("intents")
    if not isinstance(intents, list) or not intents or not all(isinstance(i, str) for i in intents):
        raise PayloadError("'intents' must be a non-empty list of intent names")
    unknown = sorted(set(intents) - set(known))
    if unknown:
        raise PayloadError(f"unknown intents {unknown}; known intents are listed by the 'status' command")
    return intents


def threshold_changes(cmd: Mapping[str, Any], known: Sequence[str]) -> tuple[dict[str, float], set[str]]:
    """``thresholds`` of a set_thresholds command: (values to set, intents to reset with null)."""
    values = cmd.get("thresholds")
    if not isinstance(values, dict) or not values:
        raise PayloadError("'thresholds' must be a non-empty object {intent: number in [0, 1] or null}")
    resets = {i for i, v in values.items() if v is None}
    unknown = sorted(resets - set(known))
    if unknown:
        raise PayloadError(f"unknown intents {unknown} in thresholds")
    return check_thresholds({i: v for i, v in values.items() if v is not None}, known), resets


def source_name(cmd: Mapping[str, Any]) -> str:
    """``source`` of a retire_source command."""
    source = cmd.get("source")
    if not isinstance(source, str) or not source:
        raise PayloadError("'source' must be a non-empty string")
    return source


@dataclass(frozen=True)
class ControlReply(Message):
    """The reply to one command: ``state`` when it succeeded, ``error`` when it did not."""

    id: Any
    cmd: Any
    ok: bool
    state: Mapping[str, Any] | None = None
    error: str | None = None

    SUFFIX: ClassVar[str] = f"{SUFFIX}/reply"
    SCHEMA: ClassVar[str | int] = CONTROL_SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "schema": CONTROL_SCHEMA_VERSION,
            "id": self.id,
            "cmd": self.cmd if isinstance(self.cmd, str) else None,
            "ok": self.ok,
        }
        if self.ok:
            body["state"] = dict(self.state or {})
        else:
            body["error"] = self.error
        return body
