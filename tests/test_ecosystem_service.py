"""The ecosystem bridges inside the real agent (real bundle, real mosquitto): Hermes queries,
Home Assistant discovery with re-announce on HA's birth message and after a restart, HA entity
states from intents and log summaries, and runtime control persisted across the restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import paho.mqtt.client as paho
from broker import AgentProcess, Collector, TestBroker, publish_wait, unique
from conftest import agent_config
from rhasspyhermes.nlu import NluIntent, NluIntentNotRecognized

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "ha_discovery.schema.json").read_text())
TEXT = "turn on the kitchen ceiling light"
HOME = {
    "areas": ["Kitchen"],
    "entities": [{"name": "Ceiling Light", "domain": "light", "area": "Kitchen"}],
}


def _valid(payload: bytes) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(payload)
    jsonschema.validate(data, SCHEMA)
    return data


def _start(broker: TestBroker, site: str, tmp_path: Path, agents: list[AgentProcess],
           collect: Collector, engine: str = "real") -> AgentProcess:
    config = agent_config(
        broker, site, home=HOME,
        pipeline={"tick_interval_s": 0.2}, logs={"window_s": 1.0},
        hermes={"enabled": True},
        homeassistant={"enabled": True, "status_topic": f"homeassistant/status/{site}",
                       "announce_jitter_s": 0.0},
        control={"enabled": True, "state_dir": str(tmp_path / "state")},
    )
    agent = AgentProcess(config, tmp_path, engine=engine).start()
    agents.append(agent)
    count = len(collect.on(f"edge/{site}/status"))
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[count:].count(b"online") >= 1, timeout=90)
    return agent


def _hermes(client: paho.Client, hermes_seen: Collector, qid: str, site: str) -> tuple[str, bytes]:
    query = {"input": TEXT, "siteId": site, "id": qid, "sessionId": "sess-1", "customData": "flow"}
    publish_wait(client, "hermes/nlu/query", orjson.dumps(query))

    def answered(msgs: list[tuple[str, bytes, bool]]) -> bool:
        replies = (p for t, p, _ in msgs if not t.startswith("hermes/nlu/query"))
        return any(orjson.loads(p).get("id") == qid for p in replies)

    msgs = hermes_seen.wait_for(answered, timeout=30)
    return next((t, p) for t, p, _ in msgs if not t.startswith("hermes/nlu/query")
                and orjson.loads(p).get("id") == qid)


def _control(client: paho.Client, collect: Collector, site: str, body: dict[str, Any]) -> dict[str, Any]:
    reply_topic = f"edge/{site}/control/reply"
    before = len(collect.on(reply_topic))
    publish_wait(client, f"edge/{site}/control", orjson.dumps(body))
    replies = collect.wait_count(reply_topic, before + 1, timeout=30)
    reply: dict[str, Any] = orjson.loads(replies[before])
    assert reply["id"] == body["id"]
    return reply


def test_intents_hermes_and_control_with_restart(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    """The tiny recognizer ('on' -> HassTurnOn) keeps this independent of the model's quality."""
    collect = Collector(client, f"edge/{site}/#")
    config_topic = f"homeassistant/device/edge_agent_{site}/config"
    discovery = Collector(client, config_topic)
    hermes_seen = Collector(client, "hermes/#")
    agent = _start(broker, site, tmp_path, agents, collect, engine="tiny")
    discovery.wait_count(config_topic, 1, timeout=30)

    # a transcript and a Hermes query give the same intent; both fire the HA event entity
    publish_wait(client, f"edge/{site}/transcript", orjson.dumps({"text": TEXT, "id": "t1"}))
    [edge] = collect.wait_count(f"edge/{site}/intent", 1, timeout=30)
    assert orjson.loads(edge)["intent"] == "HassTurnOn"
    topic, payload = _hermes(client, hermes_seen, unique("q"), site)
    assert topic == NluIntent.topic(intent_name="HassTurnOn")
    parsed = NluIntent.from_json(payload)
    assert (parsed.input, parsed.site_id, parsed.session_id) == (TEXT, site, "sess-1")
    assert parsed.custom_data == "flow" and parsed.intent.intent_name == "HassTurnOn"
    events = collect.wait_count(f"edge/{site}/ha/intent", 2, timeout=30)
    assert [orjson.loads(e)["event_type"] for e in events] == ["HassTurnOn", "HassTurnOn"]

    # a query that is not JSON gets hermes/error/nlu
    publish_wait(client, "hermes/nlu/query", b"{not json")
    hermes_seen.wait_count("hermes/error/nlu", 1, timeout=30)

    # runtime control: disable the intent -> not recognized on both paths
    reply = _control(client, collect, site, {"id": "c1", "cmd": "disable_intents", "intents": ["HassTurnOn"]})
    assert reply["ok"] is True and "HassTurnOn" in reply["state"]["intents"]["disabled"]
    topic, payload = _hermes(client, hermes_seen, unique("q"), site)
    assert topic == NluIntentNotRecognized.topic()
    assert NluIntentNotRecognized.from_json(payload).session_id == "sess-1"
    publish_wait(client, f"edge/{site}/transcript", orjson.dumps({"text": TEXT, "id": "t2"}))
    intents = collect.wait_count(f"edge/{site}/intent", 2, timeout=30)
    assert orjson.loads(intents[1])["intent"] is None
    bad = _control(client, collect, site, {"id": "c2", "cmd": "disable_intents", "intents": ["Nope"]})
    assert bad["ok"] is False and "Nope" in bad["error"]

    # restart: announced again after the new connection; the control state survived
    assert agent.terminate() == 0
    n = len(discovery.on(config_topic))
    _start(broker, site, tmp_path, agents, collect, engine="tiny")
    discovery.wait_count(config_topic, n + 1, timeout=60)
    status = _control(client, collect, site, {"id": "c3", "cmd": "status"})
    assert status["state"]["intents"]["disabled"] == ["HassTurnOn"]


def test_discovery_reannounce_and_log_sources_with_the_real_bundle(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    config_topic = f"homeassistant/device/edge_agent_{site}/config"
    discovery = Collector(client, config_topic)
    hermes_seen = Collector(client, "hermes/#")
    _start(broker, site, tmp_path, agents, collect)

    # discovery announced after connect, valid, with the bundle's intents as event types
    [first] = discovery.wait_count(config_topic, 1, timeout=30)
    config = _valid(first)
    event_types = config["components"]["intent"]["event_types"]
    assert "HassTurnOn" in event_types and "__none__" not in event_types
    assert config["availability"][0]["topic"] == f"edge/{site}/status"

    # HA's birth message -> re-announce; HA's will -> nothing
    publish_wait(client, f"homeassistant/status/{site}", b"online")
    discovery.wait_count(config_topic, 2, timeout=30)

    # Hermes answers exactly what the edge intent topic says for the same text
    publish_wait(client, f"edge/{site}/transcript", orjson.dumps({"text": TEXT, "id": "t1"}))
    [edge] = collect.wait_count(f"edge/{site}/intent", 1, timeout=30)
    edge_intent = orjson.loads(edge)["intent"]
    topic, _payload = _hermes(client, hermes_seen, unique("q"), site)
    expected = NluIntent.topic(intent_name=edge_intent) if edge_intent else NluIntentNotRecognized.topic()
    assert topic == expected

    # log lines -> summary -> the source's HA entities appear and get a retained state
    lines = "\n".join(f"zigbee: device 0x{i:04x} joined the network" for i in range(20))
    publish_wait(client, f"edge/{site}/logs/zigbee", lines.encode())
    [summary] = collect.wait_count(f"edge/{site}/summary/zigbee", 1, timeout=60)
    [state] = collect.wait_count(f"edge/{site}/ha/source/zigbee", 1, timeout=30)
    state_data = orjson.loads(state)
    assert set(state_data) == {"anomalies", "error_rate", "headline", "alert"}
    assert state_data["anomalies"] == orjson.loads(summary)["anomaly_count"]
    assert state_data["headline"] == orjson.loads(summary)["headline"][:255]
    discovery.wait_for(
        lambda m: any(p and "zigbee_alert" in orjson.loads(p)["components"] for _, p, _r in m), timeout=30)

    # retire the source through control: removal config, then without it, state cleared
    n = len(discovery.on(config_topic))
    assert _control(client, collect, site, {"id": "c3", "cmd": "retire_source", "source": "zigbee"})["ok"]
    configs = discovery.wait_count(config_topic, n + 2, timeout=30)
    assert _valid(configs[n])["components"]["zigbee_alert"] == {"platform": "binary_sensor"}
    assert "zigbee_alert" not in _valid(configs[n + 1])["components"]
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/ha/source/zigbee")[-1:] == [b""], timeout=30)
