"""Home Assistant device-based MQTT discovery of the agent, and the states behind its entities.

One retained device discovery message on ``<discovery_prefix>/device/<node_id>/config``::

    {"device": {...}, "origin": {...}, "availability": [{"topic": "edge/<site>/status", ...}],
     "components": {
        "intent":                {"platform": "event", "event_types": [<intent names>], ...},
        "<source>_anomalies":    {"platform": "sensor", ...},   # per log source
        "<source>_error_rate":   {"platform": "sensor", ...},
        "<source>_headline":     {"platform": "sensor", ...},
        "<source>_alert":        {"platform": "binary_sensor", "device_class": "problem", ...}}}

States: each recognized intent fires the event entity through ``<prefix>/<site>/ha/intent``
(``{"event_type": <intent>, "text", "confidence", "slots"}``, not retained); each log source has
one retained JSON state on ``<prefix>/<site>/ha/source/<source>`` read by its four entities.

``HaDiscovery`` is pure: every method returns the ``Publish`` list the caller sends. It re-announces
(config, availability, last states) on ``announce()``, which the caller runs after every (re)connect
and when HA's status topic says ``online`` (``on_ha_status``). Retiring a source publishes the
device config with that source's components reduced to ``{"platform": ...}`` (HA's documented
component removal), then the config without them, and clears the source's retained state.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from edge_agent.errors import PayloadError
from edge_agent.messages.base import Publish
from edge_agent.messages.topics import validate_topic_id

__all__ = [
    "DISCOVERY_SCHEMA_VERSION",
    "DiscoverySettings",
    "HaDiscovery",
    "Publish",
    "SourceState",
    "learned_entities",
    "source_state_from_summary",
]

DISCOVERY_SCHEMA_VERSION = 1
_HEADLINE_MAX = 255  # HA refuses sensor states longer than 255 characters
_ERROR_SEVERITIES = ("error", "critical")
# HA platforms whose entities people name in commands
_LEARN_DOMAINS = frozenset(
    {
        "light",
        "switch",
        "fan",
        "cover",
        "climate",
        "lock",
        "vacuum",
        "lawn_mower",
        "valve",
        "humidifier",
        "water_heater",
        "media_player",
        "siren",
        "sensor",
        "binary_sensor",
        "scene",
        "button",
        "number",
        "select",
    }
)
_SOURCE_PARTS: dict[str, str] = {
    "anomalies": "sensor",
    "error_rate": "sensor",
    "headline": "sensor",
    "alert": "binary_sensor",
}


class DiscoverySettings(Protocol):
    """What discovery reads of its config section (``bridges.homeassistant.HomeAssistantConfig``)."""

    @property
    def discovery_prefix(self) -> str: ...
    @property
    def status_topic(self) -> str | None: ...
    @property
    def node_id(self) -> str | None: ...
    @property
    def device_name(self) -> str | None: ...
    @property
    def suggested_area(self) -> str | None: ...
    @property
    def log_sources(self) -> Sequence[str]: ...
    @property
    def source_idle_retire_s(self) -> float | None: ...
    @property
    def alert_hold_s(self) -> float: ...
    @property
    def announce_jitter_s(self) -> float: ...


@dataclass(frozen=True)
class SourceState:
    """What HA shows for one log source: last window's anomalies, error rate (%), headline."""

    anomalies: int = 0
    error_rate: float = 0.0
    headline: str = ""
    alert: bool = False

    def to_payload(self) -> dict[str, Any]:
        return {
            "anomalies": self.anomalies,
            "error_rate": round(self.error_rate, 2),
            "headline": self.headline[:_HEADLINE_MAX],
            "alert": "ON" if self.alert else "OFF",
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> SourceState:
        return cls(
            anomalies=int(data.get("anomalies", 0)),
            error_rate=float(data.get("error_rate", 0.0)),
            headline=str(data.get("headline", "")),
            alert=data.get("alert") == "ON",
        )


def _count(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and math.isfinite(value):
        return max(int(value), 0)
    if isinstance(value, list):
        return len(value)
    return 0


def source_state_from_summary(summary: Mapping[str, Any]) -> SourceState:
    """A source's HA state from one window summary (``{prefix}/{site}/summary/<source>``).

    Reads ``severity_counts`` (lines per severity), ``anomaly_count`` (else the length of
    ``anomalies``) and ``headline``;
    missing keys count as zero / empty, so a summary without errors reads as 0 %.
    """
    counts = summary.get("severity_counts")
    counts = counts if isinstance(counts, Mapping) else {}
    total = sum(_count(v) for v in counts.values())
    errors = sum(_count(counts.get(s)) for s in _ERROR_SEVERITIES)
    headline = summary.get("headline")
    anomalies = summary.get("anomaly_count", summary.get("anomalies"))  # the list is capped, the count is not
    return SourceState(
        anomalies=_count(anomalies),
        error_rate=100.0 * errors / total if total else 0.0,
        headline=headline if isinstance(headline, str) else "",
    )


def _source_id(source: str) -> str:
    try:
        return validate_topic_id(source, "log source")
    except ValueError as exc:
        raise PayloadError(str(exc)) from None


@dataclass
class _Source:
    state: SourceState = field(default_factory=SourceState)
    last_seen: float = 0.0
    alert_until: float = -math.inf


class HaDiscovery:
    """Discovery config, entity states and re-announce logic for one agent (pure)."""

    def __init__(
        self,
        cfg: DiscoverySettings,
        *,
        site_id: str,
        prefix: str,
        intents: Sequence[str],
        availability_topic: str,
        sw_version: str,
        model_id: str | None = None,
    ) -> None:
        self.cfg = cfg
        self.site_id = site_id
        self.node_id = cfg.node_id or "edge_agent_" + re.sub(r"[^A-Za-z0-9_-]", "_", site_id)[:50]
        self.base = f"{prefix}/{site_id}"
        self.intents = tuple(intents)
        self.availability_topic = availability_topic
        self.sw_version = sw_version
        self.model_id = model_id
        self._sources: dict[str, _Source] = {}
        for source in cfg.log_sources:
            self._sources[source] = _Source()

    # -- topics ------------------------------------------------------------------------
    @property
    def config_topic(self) -> str:
        return f"{self.cfg.discovery_prefix}/device/{self.node_id}/config"

    @property
    def ha_status_topic(self) -> str:
        return self.cfg.status_topic or f"{self.cfg.discovery_prefix}/status"

    @property
    def event_topic(self) -> str:
        return f"{self.base}/ha/intent"

    def source_topic(self, source: str) -> str:
        return f"{self.base}/ha/source/{source}"

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self._sources)

    # -- discovery payload ---------------------------------------------------------------
    def _device(self) -> dict[str, Any]:
        device: dict[str, Any] = {
            "identifiers": [self.node_id],
            "name": self.cfg.device_name or f"Edge agent {self.site_id}",
            "manufacturer": "edge-agent",
            "model": "edge-agent",
            "sw_version": self.sw_version,
        }
        if self.model_id:
            device["model_id"] = self.model_id
        if self.cfg.suggested_area:
            device["suggested_area"] = self.cfg.suggested_area
        return device

    def _event_component(self) -> dict[str, Any]:
        return {
            "platform": "event",
            "unique_id": f"{self.node_id}_intent",
            "name": "Intent",
            "icon": "mdi:account-voice",
            "state_topic": self.event_topic,
            "event_types": list(self.intents),
        }

    def _mode_component(self) -> dict[str, Any]:
        """The SLA ladder's mode (normal | degraded) from the stats topic, each task's step and the
        temperature as attributes (docs/sla.md)."""
        return {
            "platform": "sensor",
            "unique_id": f"{self.node_id}_mode",
            "name": "Mode",
            "icon": "mdi:speedometer-slow",
            "state_topic": f"{self.base}/stats",
            "value_template": "{{ value_json.mode }}",
            "json_attributes_topic": f"{self.base}/stats",
            "json_attributes_template": "{{ value_json.sla | tojson }}",
            "device_class": "enum",
            "options": ["normal", "degraded"],
            "entity_category": "diagnostic",
        }

    def _source_components(self, source: str) -> dict[str, dict[str, Any]]:
        topic = self.source_topic(source)
        uid = f"{self.node_id}_{source}"
        return {
            f"{source}_anomalies": {
                "platform": "sensor",
                "unique_id": f"{uid}_anomalies",
                "name": f"{source} anomalies",
                "state_topic": topic,
                "value_template": "{{ value_json.anomalies }}",
                "state_class": "measurement",
                "icon": "mdi:alert-decagram-outline",
            },
            f"{source}_error_rate": {
                "platform": "sensor",
                "unique_id": f"{uid}_error_rate",
                "name": f"{source} error rate",
                "state_topic": topic,
                "value_template": "{{ value_json.error_rate }}",
                "unit_of_measurement": "%",
                "state_class": "measurement",
                "icon": "mdi:percent-outline",
            },
            f"{source}_headline": {
                "platform": "sensor",
                "unique_id": f"{uid}_headline",
                "name": f"{source} headline",
                "state_topic": topic,
                "value_template": "{{ value_json.headline }}",
                "icon": "mdi:text-box-outline",
            },
            f"{source}_alert": {
                "platform": "binary_sensor",
                "unique_id": f"{uid}_alert",
                "name": f"{source} alert",
                "state_topic": topic,
                "value_template": "{{ value_json.alert }}",
                "payload_on": "ON",
                "payload_off": "OFF",
                "device_class": "problem",
            },
        }

    def discovery_payload(self, removing: Sequence[str] = ()) -> dict[str, Any]:
        """The device discovery config; ``removing`` sources appear as platform-only components."""
        components: dict[str, dict[str, Any]] = {
            "intent": self._event_component(),
            "mode": self._mode_component(),
        }
        for source in self._sources:
            components.update(self._source_components(source))
        for source in removing:
            for part, platform in _SOURCE_PARTS.items():
                components[f"{source}_{part}"] = {"platform": platform}
        return {
            "device": self._device(),
            "origin": {"name": "edge-agent", "sw_version": self.sw_version},
            "availability": [
                {
                    "topic": self.availability_topic,
                    "payload_available": "online",
                    "payload_not_available": "offline",
                }
            ],
            "qos": 1,
            "components": components,
        }

    def _config(self, removing: Sequence[str] = ()) -> Publish:
        return Publish(self.config_topic, orjson.dumps(self.discovery_payload(removing)), retain=True)

    def _state(self, source: str) -> Publish:
        payload = orjson.dumps(self._sources[source].state.to_payload())
        return Publish(self.source_topic(source), payload, retain=True)

    # -- lifecycle ---------------------------------------------------------------------
    def announce(self) -> list[Publish]:
        """Config, availability and every source's last state (after connect / HA birth)."""
        out = [self._config(), Publish(self.availability_topic, b"online", retain=True)]
        out.extend(self._state(source) for source in self._sources)
        return out

    def on_ha_status(self, payload: bytes) -> list[Publish]:
        """HA's birth/will message: re-announce on ``online``, nothing otherwise."""
        return self.announce() if payload.strip().lower() == b"online" else []

    def announce_delay(self, rng: random.Random | None = None) -> float:
        """Seconds to wait before re-announcing after HA's birth message (spreads the load)."""
        return (rng or random).uniform(0.0, self.cfg.announce_jitter_s)

    def remove_all(self) -> list[Publish]:
        """Remove the device and every entity from HA, and clear the retained states."""
        out = [Publish(self.config_topic, b"", retain=True)]
        out.extend(Publish(self.source_topic(s), b"", retain=True) for s in self._sources)
        return out

    # -- events and states -------------------------------------------------------------
    def on_intent(
        self, intent: str | None, text: str, confidence: float, slots: Mapping[str, Any]
    ) -> list[Publish]:
        """Fire the event entity for a recognized intent (nothing for not-recognized)."""
        if intent is None:
            return []
        if intent not in self.intents:
            raise PayloadError(f"intent {intent!r} is not an announced event type")
        body = {"event_type": intent, "text": text, "confidence": round(confidence, 4), "slots": dict(slots)}
        return [Publish(self.event_topic, orjson.dumps(body), retain=False)]

    def _touch(self, source: str, now: float) -> tuple[_Source, list[Publish]]:
        _source_id(source)
        out: list[Publish] = []
        entry = self._sources.get(source)
        if entry is None:
            entry = self._sources[source] = _Source()
            out.append(self._config())  # announce the new source's entities first
        entry.last_seen = now
        return entry, out

    def on_summary(self, source: str, state: SourceState, now: float) -> list[Publish]:
        """A window summary of ``source``: publish its state (announcing the source if new)."""
        entry, out = self._touch(source, now)
        entry.state = SourceState(state.anomalies, state.error_rate, state.headline, now < entry.alert_until)
        out.append(self._state(source))
        return out

    def on_alert(self, source: str, now: float) -> list[Publish]:
        """An immediate alert of ``source``: the alert binary sensor turns on for ``alert_hold_s``."""
        entry, out = self._touch(source, now)
        entry.alert_until = now + self.cfg.alert_hold_s
        old = entry.state
        entry.state = SourceState(old.anomalies, old.error_rate, old.headline, True)
        out.append(self._state(source))
        return out

    def retire(self, source: str) -> list[Publish]:
        """Remove ``source``'s entities from HA (no-op for an unknown source)."""
        if source not in self._sources:
            return []
        del self._sources[source]
        removal = Publish(self.config_topic, orjson.dumps(self.discovery_payload([source])), retain=True)
        return [removal, self._config(), Publish(self.source_topic(source), b"", retain=True)]

    def tick(self, now: float) -> list[Publish]:
        """Expire alerts and retire idle sources (``source_idle_retire_s``)."""
        out: list[Publish] = []
        for source, entry in list(self._sources.items()):
            if entry.state.alert and now >= entry.alert_until:
                old = entry.state
                entry.state = SourceState(old.anomalies, old.error_rate, old.headline, False)
                out.append(self._state(source))
            idle = self.cfg.source_idle_retire_s
            if idle is not None and entry.last_seen and now - entry.last_seen >= idle:
                out.extend(self.retire(source))
        return out

    # -- persistence -------------------------------------------------------------------
    def export(self) -> dict[str, Any]:
        """JSON-ready state (known sources, their last state, last-seen time and, while an alert
        holds, the wall-clock time it ends)."""
        return {
            "schema": DISCOVERY_SCHEMA_VERSION,
            "sources": {
                s: {
                    "state": e.state.to_payload(),
                    "last_seen": e.last_seen,
                    "alert_until": e.alert_until if math.isfinite(e.alert_until) else None,
                }
                for s, e in self._sources.items()
            },
        }

    def restore(self, data: Mapping[str, Any]) -> None:
        """Restore what ``export`` wrote; raises ``PayloadError`` on a foreign or broken state."""
        if data.get("schema") != DISCOVERY_SCHEMA_VERSION or not isinstance(data.get("sources"), dict):
            raise PayloadError(f"discovery state has an unknown schema {data.get('schema')!r}")
        for source, item in data["sources"].items():
            _source_id(source)
            if not isinstance(item, dict) or not isinstance(item.get("state"), dict):
                raise PayloadError(f"discovery state of source {source!r} is malformed")
            try:
                state = SourceState.from_payload(item["state"])
                last_seen = float(item.get("last_seen", 0.0))
                until = item.get("alert_until")
                alert_until = -math.inf if until is None else float(until)
            except (TypeError, ValueError) as exc:
                raise PayloadError(f"discovery state of source {source!r} is malformed: {exc}") from None
            self._sources[source] = _Source(state=state, last_seen=last_seen, alert_until=alert_until)


# -- other devices' discovery configs (what the agent may learn from) ----------------------
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
    """Entities (name, domain, area) and areas described by another device's HA discovery payload
    (``homeassistant/<component>/[<node>/]<object>/config`` or device-based
    ``.../device/<id>/config``); None when it names no entity people would command."""
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
