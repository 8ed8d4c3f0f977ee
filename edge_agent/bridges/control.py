"""Runtime control over MQTT: enable/disable intents, per-intent thresholds, the home, status.

Commands are JSON objects on the command topic (default ``{prefix}/{site}/control``)::

    {"id": "c1", "cmd": "disable_intents", "intents": ["HassBroadcast"]}
    {"id": "c2", "cmd": "enable_intents", "intents": ["HassBroadcast"]}
    {"id": "c3", "cmd": "set_thresholds", "thresholds": {"HassTurnOn": 0.7, "HassToggle": null}}
    {"id": "c4", "cmd": "set_home", "home": {"areas": [...], "entities": [...]}}
    {"id": "c5", "cmd": "retire_source", "source": "zigbee"}
    {"id": "c6", "cmd": "status"}

Every command gets one reply on the reply topic (default ``{prefix}/{site}/control/reply``):
``{"schema": 1, "id", "cmd", "ok": true, "state": {...}}`` or ``{"ok": false, "error": "..."}``.
A change is persisted (versioned JSON through ``edge_agent.store``) before it is acknowledged; when the
save fails the change is rolled back and the reply says why. Nothing here touches the network.

With ``learn_from_homeassistant`` the controller also reads HA discovery configs seen on the bus
(``homeassistant/<component>/[<node>/]<object>/config`` and device-based ``.../device/<id>/config``)
and adds their entity names, domains and suggested areas to the home used for resolution.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from edge_agent.ecosystem_config import ControlConfig
from edge_agent.errors import PayloadError
from edge_agent.nlu.home import Entity, Home, HomeFileError
from edge_agent.nlu.result import IntentResult
from edge_agent.store import Store

__all__ = [
    "COMMANDS",
    "CONTROL_SCHEMA_VERSION",
    "ControlOutcome",
    "ControlState",
    "Controller",
    "learned_entities",
]

CONTROL_SCHEMA_VERSION = 1
COMMANDS = ("enable_intents", "disable_intents", "set_thresholds", "set_home", "retire_source", "status")

# HA platforms whose entities people name in commands
_LEARN_DOMAINS = frozenset({
    "light", "switch", "fan", "cover", "climate", "lock", "vacuum", "lawn_mower", "valve",
    "humidifier", "water_heater", "media_player", "siren", "sensor", "binary_sensor", "scene",
    "button", "number", "select",
})


@dataclass(frozen=True)
class ControlState:
    """Everything runtime control changes; persisted as versioned JSON."""

    disabled: frozenset[str] = frozenset()
    thresholds: Mapping[str, float] = field(default_factory=dict)
    home: Mapping[str, Any] | None = None  # replaces the configured home when set
    learned: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # discovery topic -> entities

    def to_json(self) -> bytes:
        return orjson.dumps({
            "schema": CONTROL_SCHEMA_VERSION,
            "disabled": sorted(self.disabled),
            "thresholds": dict(sorted(self.thresholds.items())),
            "home": self.home,
            "learned": dict(self.learned),
        })

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
            _check_home(home)
        for topic, item in learned.items():
            _check_learned(topic, item)
        return cls(frozenset(disabled), _check_thresholds(thresholds, None), home, learned)


@dataclass(frozen=True)
class ControlOutcome:
    """What one command did: the reply to publish and what the caller must apply."""

    reply: bytes
    ok: bool
    changed: bool = False
    home_changed: bool = False
    retire_source: str | None = None


def _check_thresholds(values: Mapping[str, Any], known: Iterable[str] | None) -> dict[str, float]:
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


def _check_learned(topic: str, item: Any) -> None:
    ok = isinstance(item, dict) and isinstance(item.get("entities"), list) and isinstance(
        item.get("areas"), list
    )
    if ok:
        ok = all(
            isinstance(e, dict) and set(e) <= {"name", "domain", "area"}
            and isinstance(e.get("name"), str) and isinstance(e.get("domain"), str)
            for e in item["entities"]
        ) and all(isinstance(a, str) for a in item["areas"])
    if not ok:
        raise PayloadError(f"control state: learned entry of {topic!r} is malformed")


def _check_home(home: Any) -> Home:
    try:
        return Home.from_dict(home, source="control home")
    except HomeFileError as exc:
        raise PayloadError(str(exc)) from None


def _intent_list(cmd: Mapping[str, Any], known: Sequence[str]) -> list[str]:
    intents = cmd.get("intents")
    if not isinstance(intents, list) or not intents or not all(isinstance(i, str) for i in intents):
        raise PayloadError("'intents' must be a non-empty list of intent names")
    unknown = sorted(set(intents) - set(known))
    if unknown:
        raise PayloadError(f"unknown intents {unknown}; known intents are listed by the 'status' command")
    return intents


class Controller:
    """Applies control commands to a ``ControlState``, persists it and builds the replies."""

    def __init__(
        self,
        cfg: ControlConfig,
        *,
        intents: Sequence[str],
        store: Store,
        base_home: Home | None = None,
        status_extra: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.cfg = cfg
        self.intents = tuple(intents)
        self.store = store
        self.base_home = base_home or Home()
        self.status_extra = status_extra
        self.state = self._load()

    # -- persistence ---------------------------------------------------------------------
    def _load(self) -> ControlState:
        raw = self.store.load(self.cfg.state_key)
        if raw is None:
            return ControlState()
        state = ControlState.from_json(raw)
        known = set(self.intents)
        # intents the current bundle no longer has are dropped, not an error
        return replace(
            state,
            disabled=frozenset(i for i in state.disabled if i in known),
            thresholds={i: p for i, p in state.thresholds.items() if i in known},
        )

    def _commit(self, new: ControlState) -> None:
        self.store.save(self.cfg.state_key, new.to_json())  # raises: the old state stays
        self.state = new

    # -- queries used by the pipeline ------------------------------------------------------
    @property
    def enabled(self) -> frozenset[str]:
        return frozenset(self.intents) - self.state.disabled

    def home(self) -> Home:
        """The home used for resolution: the control home (or the configured one) plus learned."""
        base = _check_home(self.state.home) if self.state.home is not None else self.base_home
        extra = [Entity(**e) for item in self.state.learned.values() for e in item.get("entities", [])]
        areas = [a for item in self.state.learned.values() for a in item.get("areas", [])]
        if not extra and not areas:
            return base
        known_names = {e.name for e in base.entities}
        entities = list(base.entities) + [e for e in extra if e.name not in known_names]
        all_areas = list(dict.fromkeys([*base.areas, *areas]))
        return Home(areas=all_areas, entities=entities, lists=list(base.lists), floors=list(base.floors))

    def effective_thresholds(self, bundle_thresholds: Mapping[str, float]) -> dict[str, float]:
        """Bundle calibration thresholds overridden by the ones set at run time."""
        return {**bundle_thresholds, **self.state.thresholds}

    def apply(self, result: IntentResult) -> IntentResult:
        """Turn a result into not-recognized when its intent is disabled or under its threshold."""
        intent = result.intent
        if intent is None:
            return result
        threshold = self.state.thresholds.get(intent)
        if intent in self.state.disabled or (threshold is not None and result.confidence < threshold):
            return replace(result, intent=None, slots={})
        return result

    def status(self) -> dict[str, Any]:
        home = self.home()
        out: dict[str, Any] = {
            "intents": {"enabled": sorted(self.enabled), "disabled": sorted(self.state.disabled)},
            "thresholds": dict(sorted(self.state.thresholds.items())),
            "home": {
                "source": "control" if self.state.home is not None else "config",
                "areas": len(home.areas), "entities": len(home.entities),
                "learned_entities": sum(len(v.get("entities", [])) for v in self.state.learned.values()),
            },
        }
        if self.status_extra is not None:
            out["agent"] = dict(self.status_extra())
        return out

    # -- commands -------------------------------------------------------------------------
    def handle(self, payload: bytes) -> ControlOutcome:
        """Run one command payload; always returns a reply (errors are replies, not raises)."""
        cmd_id: Any = None
        name: Any = None
        try:
            if len(payload) > self.cfg.max_payload_bytes:
                raise PayloadError(f"command larger than {self.cfg.max_payload_bytes} bytes")
            cmd = _parse(payload)
            cmd_id, name = cmd.get("id"), cmd.get("cmd")
            return self._dispatch(cmd, cmd_id)
        except PayloadError as exc:
            return self._reply(cmd_id, name, ok=False, error=str(exc))
        except OSError as exc:
            return self._reply(cmd_id, name, ok=False, error=f"could not persist the change: {exc}")

    def _dispatch(self, cmd: Mapping[str, Any], cmd_id: Any) -> ControlOutcome:
        name = cmd.get("cmd")
        state = self.state
        if name == "status":
            return self._reply(cmd_id, name, ok=True)
        if name == "retire_source":
            source = cmd.get("source")
            if not isinstance(source, str) or not source:
                raise PayloadError("'source' must be a non-empty string")
            out = self._reply(cmd_id, name, ok=True)
            return replace(out, retire_source=source)
        if name == "disable_intents":
            new = replace(state, disabled=state.disabled | set(_intent_list(cmd, self.intents)))
        elif name == "enable_intents":
            new = replace(state, disabled=state.disabled - set(_intent_list(cmd, self.intents)))
        elif name == "set_thresholds":
            new = replace(state, thresholds=self._thresholds(cmd))
        elif name == "set_home":
            home = cmd.get("home")
            if home is not None:
                _check_home(home)
            new = replace(state, home=home)
        else:
            raise PayloadError(f"unknown cmd {name!r}; expected one of {', '.join(COMMANDS)}")
        self._commit(new)
        return replace(self._reply(cmd_id, name, ok=True), changed=True, home_changed=name == "set_home")

    def _thresholds(self, cmd: Mapping[str, Any]) -> dict[str, float]:
        values = cmd.get("thresholds")
        if not isinstance(values, dict) or not values:
            raise PayloadError("'thresholds' must be a non-empty object {intent: number in [0, 1] or null}")
        resets = {i for i, v in values.items() if v is None}
        unknown = sorted(resets - set(self.intents))
        if unknown:
            raise PayloadError(f"unknown intents {unknown} in thresholds")
        checked = _check_thresholds({i: v for i, v in values.items() if v is not None}, self.intents)
        merged = {i: p for i, p in self.state.thresholds.items() if i not in resets}
        merged.update(checked)
        return merged

    def _reply(self, cmd_id: Any, name: Any, *, ok: bool, error: str | None = None) -> ControlOutcome:
        body: dict[str, Any] = {"schema": CONTROL_SCHEMA_VERSION, "id": cmd_id,
                                "cmd": name if isinstance(name, str) else None, "ok": ok}
        if ok:
            body["state"] = self.status()
        else:
            body["error"] = error
        return ControlOutcome(reply=orjson.dumps(body), ok=ok)

    # -- learning from HA discovery ------------------------------------------------------------
    def learn(self, topic: str, payload: bytes, *, own_node: str | None = None) -> bool:
        """Learn entities/areas from one HA discovery config; True when the home changed.

        An empty payload (HA's removal) forgets what that topic taught. Configs that cannot be
        read are ignored (other integrations' business), never an error of ours.
        """
        if not self.cfg.learn_from_homeassistant:
            return False
        levels = topic.split("/")
        if len(levels) < 4 or levels[-1] != "config" or (own_node is not None and own_node in levels):
            return False
        learned = dict(self.state.learned)
        if not payload.strip():
            if topic not in learned:
                return False
            del learned[topic]
        else:
            item = learned_entities(levels[1], payload)
            if item is None or learned.get(topic) == item:
                return False
            learned[topic] = item
        self._commit(replace(self.state, learned=learned))
        return True


def _parse(payload: bytes) -> dict[str, Any]:
    try:
        cmd = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise PayloadError(f"command is not JSON: {exc}") from None
    if not isinstance(cmd, dict):
        raise PayloadError("command must be a JSON object with 'cmd'")
    if cmd.get("id") is not None and not isinstance(cmd.get("id"), (str, int)):
        raise PayloadError("'id' must be a string or an integer")
    return cmd


def _pick(data: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in data:
            return data[key]
    return None


def _friendly(device: Mapping[str, Any], name: Any) -> str | None:
    dev_name = _pick(device, "name")
    parts = [p for p in (dev_name, name) if isinstance(p, str) and p.strip()]
    return " ".join(parts) if parts else None


def learned_entities(component: str, payload: bytes) -> dict[str, Any] | None:
    """Entities (name, domain, area) and areas described by one HA discovery payload."""
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    device = _pick(data, "device", "dev")
    device = device if isinstance(device, dict) else {}
    area = _pick(device, "suggested_area", "sa")
    area = area if isinstance(area, str) and area.strip() else None
    if component == "device":
        parts = _pick(data, "components", "cmps")
        configs = list(parts.values()) if isinstance(parts, dict) else []
    else:
        configs = [dict(data, platform=component)]
    entities: list[dict[str, Any]] = []
    for conf in configs:
        if not isinstance(conf, dict):
            continue
        domain = _pick(conf, "platform", "p")
        name = _friendly(device, _pick(conf, "name"))
        if domain in _LEARN_DOMAINS and name:
            entities.append({"name": name, "domain": domain, "area": area})
    if not entities:
        return None
    return {"entities": entities, "areas": [area] if area else []}
