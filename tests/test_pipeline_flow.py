"""Pipeline behaviour through a real broker: backpressure instead of drops, handler failures
contained in the DLQ, acknowledgement only after the result's PUBACK."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import paho.mqtt.client as paho
from broker import Collector, TestBroker, TinyRecognizer, eventually, publish_wait

from edge_agent.app import Agent
from edge_agent.config import Config, parse
from edge_agent.engines import Engines


def config_for(broker: TestBroker, site: str, protocol: str = "5", **pipeline: object) -> Config:
    section = broker.agent_mqtt(protocol=protocol)
    config = parse({"site_id": site, "mqtt": section, "pipeline": {"stats_interval_s": 0, **pipeline}})
    config.mqtt._password = Path(section["password_file"]).read_text().strip()
    return config


def start(config: Config, collect: Collector, site: str) -> Agent:
    agent = Agent(config, Engines(recognizer=TinyRecognizer(), model_id="tiny@test"))
    agent.start()
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"])
    return agent


def test_a_full_queue_applies_backpressure_and_loses_nothing(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    # MQTT 3.1.1 has no Receive Maximum: the broker pushes up to its in-flight limit (20), far more
    # than the queue of 2 holds, so the network thread must wait for the worker
    config = config_for(broker, site, protocol="3.1.1", queue_size=2, transcript_batch_max=1)
    agent = start(config, collect, site)
    try:
        ids = [f"bp-{i}" for i in range(8)]
        for ident in ids:
            publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "slow on", "id": ident}))
        payloads = collect.wait_count(f"edge/{site}/intent", len(ids), timeout=30)
        assert sorted(json.loads(p)["id"] for p in payloads) == sorted(ids)
        # the PUBACK of the last intent may reach the agent just after the intent reached us
        assert eventually(lambda: agent.pipeline.counters.get("settled") == len(ids))
        stats = agent.pipeline.stats().to_dict()
        assert stats["queue"]["backpressure_waits"] >= 1
        assert stats["queue"]["high_water"] == 2
        assert agent.transport.counters.acked == len(ids)
    finally:
        agent.shutdown()


def test_a_failing_handler_sends_its_batch_to_the_dlq_and_the_agent_goes_on(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    agent = start(config_for(broker, site, transcript_batch_max=1), collect, site)
    try:
        publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "crash now", "id": "boom"}))
        [record] = [json.loads(p) for p in collect.wait_count(f"edge/{site}/dlq", 1)]
        assert record["reason"].startswith("internal error in transcript handler: RuntimeError")
        assert json.loads(base64.b64decode(record["payload_b64"]))["id"] == "boom"
        publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "turn on", "id": "after"}))
        [intent] = collect.wait_count(f"edge/{site}/intent", 1)
        assert json.loads(intent)["id"] == "after"
        assert agent.pipeline.counters.get("handler_errors") == 1
        assert eventually(lambda: agent.pipeline.counters.get("settled") == 2)
    finally:
        agent.shutdown()


def test_inputs_on_unknown_topics_under_logs_are_not_subscribed(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    agent = start(config_for(broker, site), collect, site)
    try:
        publish_wait(client, f"edge/{site}/logs/a/b", "two levels deep")  # outside logs/+
        publish_wait(client, f"edge/{site}/transcript", "turn off")
        collect.wait_count(f"edge/{site}/intent", 1)
        assert agent.pipeline.counters.get("received") == 1
        assert collect.on(f"edge/{site}/dlq") == []
    finally:
        agent.shutdown()
