"""Home Assistant device-based discovery: payloads against a schema written from HA's documented
keys (tests/schemas/ha_discovery.schema.json), entity states, re-announce and source retirement,
the last part through a real mosquitto broker."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from broker import Collector, TestBroker
from paho.mqtt import client as paho
from pydantic import ValidationError

from edge_agent.bridges.homeassistant import HomeAssistantConfig
from edge_agent.errors import PayloadError
from edge_agent.messages.discovery import HaDiscovery, Publish, SourceState, source_state_from_summary
from edge_agent.nlu.schema import INTENTS

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "ha_discovery.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
TOPIC_RE = re.compile(r"^homeassistant/device/[A-Za-z0-9_-]+/config$")


def _bridge(site: str = "lab.1", **cfg: Any) -> HaDiscovery:
    config = HomeAssistantConfig.model_validate({"enabled": True, **cfg})
    return HaDiscovery(config, site_id=site, prefix="edge", intents=INTENTS,
                       availability_topic=f"edge/{site}/status", sw_version="0.1.0", model_id="m-7")


def _valid(payload: bytes) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(payload)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(data)]
    assert not errors, errors
    return data


def _config(msgs: list[Publish]) -> list[dict[str, Any]]:
    return [_valid(m.payload) for m in msgs if m.topic.endswith("/config") and m.payload]


def test_schema_is_a_valid_draft_2020_12_schema_and_refuses_bad_payloads() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    good = _bridge(log_sources=["zigbee"]).discovery_payload()
    assert not list(VALIDATOR.iter_errors(good))
    broken = [
        {k: v for k, v in good.items() if k != "origin"},  # origin is required
        {**good, "components": {"x": {"platform": "event", "unique_id": "u", "state_topic": "t"}}},
        {**good, "components": {"x": {"platform": "sensor", "state_topic": "t"}}},  # no unique_id
        {**good, "components": {"x": {"platform": "sensor", "unique_id": "u", "state_topic": "t",
                                      "unknown_key": 1}}},
        {**good, "availability": [{"payload_available": "online"}]},  # no topic
        {**good, "device": {"name": "no ids"}},
    ]
    for payload in broken:
        assert list(VALIDATOR.iter_errors(payload)), payload


def test_announce_publishes_valid_retained_config_availability_and_states() -> None:
    bridge = _bridge(log_sources=["zigbee", "kernel"])
    msgs = bridge.announce()
    config_msg = msgs[0]
    assert TOPIC_RE.match(config_msg.topic) and config_msg.retain
    data = _valid(config_msg.payload)
    assert bridge.node_id == "edge_agent_lab_1"
    assert data["device"]["identifiers"] == ["edge_agent_lab_1"] and data["origin"]["name"] == "edge-agent"
    assert data["availability"][0]["topic"] == "edge/lab.1/status"
    components = data["components"]
    assert components["intent"]["platform"] == "event"
    assert components["intent"]["event_types"] == list(INTENTS)
    mode = components["mode"]  # the SLA ladder's mode, read from the stats topic
    assert (mode["platform"], mode["state_topic"]) == ("sensor", "edge/lab.1/stats")
    assert mode["value_template"] == "{{ value_json.mode }}" and mode["options"] == ["normal", "degraded"]
    for source in ("zigbee", "kernel"):
        assert {f"{source}_{p}" for p in ("anomalies", "error_rate", "headline", "alert")} <= set(components)
        assert components[f"{source}_alert"]["platform"] == "binary_sensor"
        assert components[f"{source}_alert"]["device_class"] == "problem"
    unique_ids = [c["unique_id"] for c in components.values()]
    assert len(unique_ids) == len(set(unique_ids))
    assert Publish("edge/lab.1/status", b"online", retain=True) in msgs
    states = {m.topic: orjson.loads(m.payload) for m in msgs if "/ha/source/" in m.topic}
    assert set(states) == {"edge/lab.1/ha/source/zigbee", "edge/lab.1/ha/source/kernel"}
    assert all(m.retain for m in msgs if "/ha/source/" in m.topic)


def test_ha_birth_reannounces_and_will_does_not() -> None:
    bridge = _bridge(log_sources=["zigbee"])
    assert bridge.ha_status_topic == "homeassistant/status"
    assert bridge.on_ha_status(b"online") == bridge.announce()
    assert bridge.on_ha_status(b"offline") == []
    assert _bridge(status_topic="ha/birth").ha_status_topic == "ha/birth"


def test_summary_announces_new_source_then_publishes_its_state() -> None:
    bridge = _bridge()
    summary = {"severity_counts": {"info": 90, "warning": 5, "error": 4, "critical": 1},
               "anomalies": [{"line": "a"}, {"line": "b"}], "headline": "x" * 400}
    state = source_state_from_summary(summary)
    assert state == SourceState(anomalies=2, error_rate=5.0, headline="x" * 400)
    msgs = bridge.on_summary("zigbee", state, now=100.0)
    [config] = _config(msgs)
    assert "zigbee_headline" in config["components"]
    published = orjson.loads(msgs[-1].payload)
    assert msgs[-1].topic == "edge/lab.1/ha/source/zigbee" and msgs[-1].retain
    assert published == {"anomalies": 2, "error_rate": 5.0, "headline": "x" * 255, "alert": "OFF"}
    again = bridge.on_summary("zigbee", SourceState(), now=101.0)
    assert [m.topic for m in again] == ["edge/lab.1/ha/source/zigbee"]  # known source: state only


def test_summary_without_counts_reads_as_zero() -> None:
    assert source_state_from_summary({}) == SourceState()
    assert source_state_from_summary({"anomalies": [{}], "severity_counts": {"info": 0}}).error_rate == 0.0
    # the anomaly list of a summary is capped; the count is what HA shows
    assert source_state_from_summary({"anomalies": [{}], "anomaly_count": 17}).anomalies == 17


def test_alert_turns_binary_sensor_on_until_hold_expires() -> None:
    bridge = _bridge(log_sources=["power"], alert_hold_s=60)
    [state] = bridge.on_alert("power", now=10.0)
    assert orjson.loads(state.payload)["alert"] == "ON"
    summary = bridge.on_summary("power", SourceState(anomalies=1), now=30.0)
    assert orjson.loads(summary[-1].payload)["alert"] == "ON"  # still held
    assert bridge.tick(now=50.0) == []
    [cleared] = bridge.tick(now=71.0)
    assert cleared.topic == "edge/lab.1/ha/source/power"
    expected = {"anomalies": 1, "error_rate": 0.0, "headline": "", "alert": "OFF"}
    assert orjson.loads(cleared.payload) == expected


def test_retire_removes_components_then_omits_them_and_clears_state() -> None:
    bridge = _bridge(log_sources=["zigbee", "kernel"])
    removal, after, cleared = bridge.retire("zigbee")
    removal_data, after_data = _valid(removal.payload), _valid(after.payload)
    assert removal.retain and after.retain and removal.topic == after.topic == bridge.config_topic
    for part, platform in (("anomalies", "sensor"), ("error_rate", "sensor"), ("headline", "sensor"),
                           ("alert", "binary_sensor")):
        assert removal_data["components"][f"zigbee_{part}"] == {"platform": platform}
        assert f"zigbee_{part}" not in after_data["components"]
    assert "kernel_alert" in after_data["components"]
    assert cleared == Publish("edge/lab.1/ha/source/zigbee", b"", retain=True)
    assert bridge.sources == ("kernel",)
    assert bridge.retire("zigbee") == []


def test_idle_sources_are_retired_by_tick() -> None:
    bridge = _bridge(source_idle_retire_s=600)
    bridge.on_summary("modbus", SourceState(), now=1000.0)
    assert bridge.tick(now=1500.0) == []
    msgs = bridge.tick(now=1601.0)
    assert len(msgs) == 3 and msgs[-1].payload == b"" and bridge.sources == ()


def test_intent_fires_event_entity() -> None:
    bridge = _bridge()
    [event] = bridge.on_intent("HassTurnOn", "turn on the lamp", 0.98765, {"name": "Lamp"})
    assert event.topic == "edge/lab.1/ha/intent" and not event.retain
    assert orjson.loads(event.payload) == {"event_type": "HassTurnOn", "text": "turn on the lamp",
                                           "confidence": 0.9877, "slots": {"name": "Lamp"}}
    assert bridge.on_intent(None, "hello", 0.1, {}) == []
    with pytest.raises(PayloadError):
        bridge.on_intent("NotAnIntent", "x", 0.9, {})


def test_export_restore_round_trip_and_bad_state() -> None:
    bridge = _bridge()
    bridge.on_summary("zigbee", SourceState(anomalies=4, error_rate=12.5, headline="radio down"), now=5.0)
    bridge.on_alert("zigbee", now=6.0)
    restored = _bridge()
    restored.restore(json.loads(json.dumps(bridge.export())))
    assert restored.sources == ("zigbee",)
    assert restored.announce()[-1] == bridge.announce()[-1]
    with pytest.raises(PayloadError):
        restored.restore({"schema": 99, "sources": {}})
    with pytest.raises(PayloadError):
        restored.restore({"schema": 1, "sources": {"bad/name": {"state": {}}}})
    with pytest.raises(PayloadError, match="malformed"):
        restored.restore({"schema": 1, "sources": {"zigbee": {"state": {"anomalies": "many"}}}})


def test_remove_all_clears_device_and_states() -> None:
    bridge = _bridge(log_sources=["zigbee"])
    assert bridge.remove_all() == [Publish(bridge.config_topic, b"", retain=True),
                                   Publish("edge/lab.1/ha/source/zigbee", b"", retain=True)]


@pytest.mark.parametrize("bad", [{"node_id": "has space"}, {"log_sources": ["a/b"]},
                                 {"discovery_prefix": "ha/#"}, {"unknown": 1}])
def test_config_refuses_bad_values(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        HomeAssistantConfig.model_validate(bad)


# -- through a real broker ---------------------------------------------------------------------


class _AgentSide:
    """The agent's half: on connect and on HA's birth message, send what HaDiscovery returns."""

    def __init__(self, broker: TestBroker, bridge: HaDiscovery) -> None:
        self.bridge = bridge
        self.client = broker.client(user="agent")
        self.lock = threading.Lock()
        subscribed = threading.Event()
        self.client.message_callback_add(bridge.ha_status_topic, self._on_status)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.subscribe(bridge.ha_status_topic, qos=1)
        assert subscribed.wait(10)
        self.send(bridge.announce())  # "after connect"

    def _on_status(self, _c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        # never wait for a PUBACK on paho's network thread: hand the publishing to a thread
        msgs = self.bridge.on_ha_status(bytes(msg.payload))
        threading.Thread(target=self.send, args=(msgs,), daemon=True).start()

    def send(self, msgs: list[Publish]) -> None:
        with self.lock:
            for m in msgs:
                self.client.publish(m.topic, m.payload, qos=m.qos, retain=m.retain).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_reannounce_on_ha_birth_and_retained_after_reconnect(broker: TestBroker, site: str) -> None:
    bridge = _bridge(site, log_sources=["zigbee"], status_topic=f"homeassistant/status/{site}")
    agent = _AgentSide(broker, bridge)
    ha = broker.client()
    try:
        seen = Collector(ha, bridge.config_topic)
        [first] = seen.wait_count(bridge.config_topic, 1)  # retained announce reaches a late subscriber
        assert _valid(first)["components"]["zigbee_alert"]["platform"] == "binary_sensor"
        agent.send(bridge.on_alert("zigbee", now=1.0))
        ha.publish(bridge.ha_status_topic, b"online", qos=1).wait_for_publish(10)
        configs = seen.wait_count(bridge.config_topic, 2)
        assert _valid(configs[1]) == _valid(first)
        states = Collector(ha, f"edge/{site}/ha/source/#")  # retained last state after re-announce
        # the retained state, plus the re-announced one when it lands after this subscription
        received = states.wait_count(f"edge/{site}/ha/source/zigbee", 1)
        assert 1 <= len(received) <= 2
        assert all(orjson.loads(state)["alert"] == "ON" for state in received)
        ha.publish(bridge.ha_status_topic, b"offline", qos=1).wait_for_publish(10)
        agent.send(bridge.retire("zigbee"))
        configs = seen.wait_count(bridge.config_topic, 4)
        assert _valid(configs[2])["components"]["zigbee_anomalies"] == {"platform": "sensor"}
        assert "zigbee_anomalies" not in _valid(configs[3])["components"]
    finally:
        agent.close()
    # a new subscriber (HA restarting) gets the retained config without the retired source,
    # and no retained state for it
    late = broker.client()
    try:
        [retained] = Collector(late, bridge.config_topic).wait_count(bridge.config_topic, 1)
        assert "zigbee_alert" not in _valid(retained)["components"]
        probe = Collector(late, f"edge/{site}/ha/source/#")
        late.publish(f"edge/{site}/ha/source/probe", b"x", qos=1).wait_for_publish(10)
        probe.wait_count(f"edge/{site}/ha/source/probe", 1)
        assert probe.on(f"edge/{site}/ha/source/zigbee") == []
    finally:
        late.disconnect()
        late.loop_stop()
        ha.disconnect()
        ha.loop_stop()
