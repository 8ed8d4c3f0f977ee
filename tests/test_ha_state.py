"""The Home Assistant MQTT path across restarts and HA birth messages: entity states (an alert
that still holds) are saved in the agent's state dir and restored, and the re-announce after
HA's birth message waits ``announce_jitter_s`` at most (then the next tick)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import orjson

from edge_agent.bridges.homeassistant import HA_STATE_KEY, HaBridge, HaHandler, HomeAssistantConfig
from edge_agent.messages.discovery import HaDiscovery
from edge_agent.messages.topics import SiteTopics
from edge_agent.nlu.schema import INTENTS
from edge_agent.pipeline.core import Envelope, HandlerBase, Outcome, Output
from edge_agent.store import FileStore
from edge_agent.transport.base import Inbound

SITE = "lab"
STATE_TOPIC = f"edge/{SITE}/ha/source/zigbee"


def _eco(state_dir: Path | None, **ha: Any) -> HaBridge:
    cfg = HomeAssistantConfig.model_validate({"enabled": True, "announce_jitter_s": 0.0, **ha})
    store = FileStore(state_dir) if state_dir is not None else None
    return HaBridge(
        cfg,
        SiteTopics("edge", SITE),
        intents=list(INTENTS),
        model_id="m-1",
        lock=threading.Lock(),
        store=store,
    )


class _Alerts(HandlerBase):
    """An input handler whose outputs are one alert of source zigbee per input."""

    kind = "logs"
    priority = 10
    batch_max = 8
    batch_wait_s = 0.0

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        return [Outcome([env], [Output(f"edge/{SITE}/alert/zigbee", b"{}", "alert")]) for env in batch]


def _env(topic: str, payload: bytes, key: str = "") -> Envelope:
    now = time.time()
    inbound = Inbound(topic, payload, 1, 1, False, False, now, time.perf_counter())
    return Envelope("homeassistant", key, inbound)


def _source_state(outputs: list[Output]) -> dict[str, Any] | None:
    states = [orjson.loads(o.payload) for o in outputs if o.topic == STATE_TOPIC]
    return states[-1] if states else None


def test_an_alert_that_holds_survives_a_restart(tmp_path: Path) -> None:
    eco = _eco(tmp_path, alert_hold_s=300)
    [outcome] = eco.tap(_Alerts()).handle([_env(f"edge/{SITE}/logs/zigbee", b"x")])
    first = _source_state(outcome.outputs)
    assert first is not None and first["alert"] == "ON"
    assert (tmp_path / HA_STATE_KEY).is_file()

    restarted = _eco(tmp_path, alert_hold_s=300)
    state = _source_state(restarted.on_connected())
    assert state is not None and state["alert"] == "ON"
    handler = HaHandler(restarted)
    assert _source_state(handler.tick(time.time() + 10)) is None  # still held: nothing changes
    expired = _source_state(handler.tick(time.time() + 301))
    assert expired is not None and expired["alert"] == "OFF"
    assert _source_state(_eco(tmp_path).on_connected()) == expired  # the expiry was saved too


def test_without_a_state_dir_or_with_a_broken_file_the_states_start_empty(tmp_path: Path) -> None:
    assert _source_state(_eco(None).on_connected()) is None
    (tmp_path / HA_STATE_KEY).write_bytes(b"{torn")
    assert _source_state(_eco(tmp_path).on_connected()) is None


def test_export_keeps_the_end_of_an_alert() -> None:
    cfg = HomeAssistantConfig.model_validate({"enabled": True, "alert_hold_s": 100})
    def make() -> HaDiscovery:
        return HaDiscovery(
            cfg,
            site_id=SITE,
            prefix="edge",
            intents=INTENTS,
            availability_topic=f"edge/{SITE}/status",
            sw_version="0",
            model_id="m",
        )
    bridge = make()
    bridge.on_alert("zigbee", 1000.0)
    restored = make()
    restored.restore(orjson.loads(orjson.dumps(bridge.export())))
    assert restored.tick(1099.0) == []
    [off] = restored.tick(1100.0)
    assert orjson.loads(off.payload)["alert"] == "OFF"


def test_the_reannounce_after_has_birth_waits_for_the_jitter() -> None:
    handler = HaHandler(_eco(None, announce_jitter_s=0.5))
    birth = _env("homeassistant/status", b"online", key="status")
    [outcome] = handler.handle([birth])
    assert outcome.outputs == []  # not at once
    assert handler.announce_at is not None
    assert handler.announce_at <= time.time() + 0.5
    assert handler.tick(handler.announce_at - 0.001) == []
    announced = handler.tick(handler.announce_at)
    assert any(o.topic.endswith("/config") for o in announced)
    assert handler.tick(time.time() + 60) == []  # once
    [will] = handler.handle([_env("homeassistant/status", b"offline", key="status")])
    assert will.outputs == [] and handler.announce_at is None


def test_without_jitter_the_reannounce_is_immediate() -> None:
    handler = HaHandler(_eco(None, announce_jitter_s=0.0))
    [outcome] = handler.handle([_env("homeassistant/status", b"online", key="status")])
    assert any(o.topic.endswith("/config") for o in outcome.outputs)
