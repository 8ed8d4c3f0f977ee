"""Log lines on a second MQTT session (``mqtt.bulk_session``), against a real mosquitto: each kind
arrives and is acknowledged on its own session, a stalled log path does not hold back a
transcript (it does with one shared session), status stays right with two sessions, and a
session resumed from a single-session run stops receiving log lines."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from broker import Collector, TestBroker, TinyRecognizer, eventually, publish_wait, unique

from edge_agent.app import Agent
from edge_agent.config import Config, parse
from edge_agent.engines import Engines
from edge_agent.records.logs import Outgoing, RawLine


class GateLogService:
    """A log service that counts lines and, while ``gate`` is clear, blocks in ``ingest``: a log
    path that is stalled (or just very slow under its CPU quota)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.lines = 0

    def ingest(self, source: str, lines: list[RawLine], now: float) -> list[Outgoing]:
        self.entered.set()
        self.gate.wait(30)
        self.lines += len(lines)
        return [Outgoing(f"summary/{source}", {"source": source, "lines": len(lines)})]

    def tick(self, now: float) -> list[Outgoing]:
        return []

    def flush(self, now: float) -> list[Outgoing]:
        return []

    def swap_model(self, model: object) -> None:
        pass

    def limit_lines(self, max_chars: int | None) -> None:
        pass


def config_for(broker: TestBroker, site: str, *, bulk: bool = True, **pipeline: Any) -> Config:
    section = broker.agent_mqtt()
    section.update(bulk_session=bulk, client_id=f"agent-{site}")
    config = parse({
        "site_id": site, "mqtt": section,
        "pipeline": {"stats_interval_s": 0, **pipeline},
        "reliability": {"state_dir": str(broker.workdir / "state" / site)},
    })
    config.mqtt._password = Path(section["password_file"]).read_text().strip()
    return config


def start(config: Config, collect: Collector, site: str, logs: GateLogService | None = None) -> Agent:
    engines = Engines(recognizer=TinyRecognizer(), model_id="tiny@test", log_service=logs or GateLogService())
    agent = Agent(config, engines)
    agent.start()
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"])
    return agent


@contextlib.contextmanager
def running(config: Config, collect: Collector, site: str, logs: GateLogService) -> Iterator[Agent]:
    """An agent started and online; shut down at the end (the log path let go first)."""
    agent = start(config, collect, site, logs)
    try:
        yield agent
    finally:
        logs.gate.set()
        agent.shutdown()


def test_transcripts_and_log_lines_arrive_on_their_own_sessions(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    logs = GateLogService()
    with running(config_for(broker, site), collect, site, logs) as agent:
        assert agent.bulk is not None
        assert agent.bulk.client_id == f"agent-{site}-bulk"
        assert agent.transport.subscriptions == [f"edge/{site}/transcript"]
        assert agent.bulk.subscriptions == [f"edge/{site}/logs/+"]
        publish_wait(client, f"edge/{site}/logs/gw", "kernel: eth0 link up\nkernel: eth0 link down")
        publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "turn on", "id": "t1"}))
        collect.wait_count(f"edge/{site}/intent", 1)
        collect.wait_count(f"edge/{site}/summary/gw", 1)
        # each input was received and acknowledged (after its result's PUBACK) on its own session
        assert eventually(lambda: agent.transport.counters.acked == 1 and agent.bulk.counters.acked == 1)
        assert agent.transport.counters.received == 1
        assert agent.bulk.counters.received == 1
        assert logs.lines == 2
        # every result goes out on the main session (the bulk one only receives and acknowledges)
        assert agent.bulk.counters.published == 0
        assert agent.transport.counters.published >= 3  # "online", the intent, the summary
        counters = agent.pipeline.stats().counters
        assert counters["mqtt_bulk_acked"] == 1 and counters["mqtt_acked"] == 1
    # one status for the agent: the bulk session has no Will and says nothing ("offline" reaches
    # the collecting client a moment after shutdown returns)
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"offline"])
    assert collect.on(f"edge/{site}/status") == [b"online", b"offline"]


@pytest.mark.parametrize(("bulk", "protocol"), [(True, "5"), (True, "3.1.1"), (False, "5")])
def test_a_stalled_log_path_holds_back_a_transcript_only_on_a_shared_session(
    broker: TestBroker, client: paho.Client, site: str, bulk: bool, protocol: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    logs = GateLogService()
    config = config_for(broker, site, bulk=bulk, queue_size=4, log_batch_max=1)
    config.mqtt.protocol = protocol  # type: ignore[assignment]
    with running(config, collect, site, logs) as agent:
        logs.gate.clear()
        # one line in the stalled handler, the queue full: on MQTT 5 the session's Receive Maximum
        # (queue_size) is used up and the broker keeps the rest; on 3.1.1 the broker pushes on and
        # the network thread waits on the full queue. A transcript on the same session is stuck
        # behind them; on its own session (and its own part of the queue) it is not
        for i in range(24):
            publish_wait(client, f"edge/{site}/logs/gw{i % 3}", f"line {i}")
        assert logs.entered.wait(10)
        assert eventually(lambda: len(agent.pipeline.queue) >= 3)
        publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "turn on", "id": "urgent"}))
        if bulk:
            [intent] = collect.wait_count(f"edge/{site}/intent", 1, timeout=10)
            assert json.loads(intent)["id"] == "urgent"
            assert logs.lines == 0  # answered while the log path was still stalled
        else:
            time.sleep(1.5)  # nothing can come: the shared session waits behind the log lines
            assert collect.on(f"edge/{site}/intent") == []
        logs.gate.set()
        collect.wait_count(f"edge/{site}/intent", 1, timeout=20)
        assert eventually(lambda: logs.lines == 24, timeout=20)  # and no log line was lost


def test_the_log_session_dropping_leaves_the_agent_online_and_it_comes_back(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    logs = GateLogService()
    with running(config_for(broker, site), collect, site, logs) as agent:
        assert agent.bulk is not None
        # another client takes the bulk session's client id: the broker drops the agent's session
        intruder = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=agent.bulk.client_id,
                               protocol=paho.MQTTv5, reconnect_on_failure=False)
        intruder.username_pw_set("client", "client-secret")
        intruder.connect("127.0.0.1", broker.port)
        intruder.loop_start()
        assert eventually(lambda: agent.bulk is not None and agent.bulk.counters.disconnects >= 1)
        intruder.disconnect()
        intruder.loop_stop()
        assert eventually(lambda: agent.bulk is not None and agent.bulk.connected, timeout=15)
        publish_wait(client, f"edge/{site}/logs/gw", "after the reconnect")
        collect.wait_count(f"edge/{site}/summary/gw", 1)
        publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "turn off", "id": "t2"}))
        collect.wait_count(f"edge/{site}/intent", 1)
        # the main session never went away: no "offline", no second "online"
        assert collect.on(f"edge/{site}/status") == [b"online"]


def test_a_session_resumed_from_a_single_session_run_stops_taking_log_lines(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    first = start(config_for(broker, site, bulk=False), collect, site)
    first.shutdown()  # the persistent main session keeps its logs/+ subscription at the broker
    logs = GateLogService()
    with running(config_for(broker, site, bulk=True), collect, site, logs) as agent:
        for i in range(5):
            publish_wait(client, f"edge/{site}/logs/gw", f"line {i}")
        assert eventually(lambda: logs.lines == 5)
        time.sleep(0.5)  # a copy through the main session would have arrived by now
        assert logs.lines == 5
        assert agent.transport.counters.received == 0
        assert agent.bulk is not None and agent.bulk.counters.received == 5


def test_without_the_bulk_session_one_session_takes_everything(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    logs = GateLogService()
    with running(config_for(broker, site, bulk=False), collect, site, logs) as agent:
        assert agent.bulk is None
        assert sorted(agent.transport.subscriptions) == [f"edge/{site}/logs/+", f"edge/{site}/transcript"]
        publish_wait(client, f"edge/{site}/logs/gw", "one line")
        publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "turn on", "id": unique("t")}))
        collect.wait_count(f"edge/{site}/summary/gw", 1)
        collect.wait_count(f"edge/{site}/intent", 1)
        assert eventually(lambda: agent.transport.counters.acked == 2)


def test_online_waits_until_the_log_session_is_subscribed_too(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    logs = GateLogService()
    agent = Agent(config_for(broker, site), Engines(recognizer=TinyRecognizer(), model_id="tiny@test",
                                                    log_service=logs))
    assert agent.bulk is not None
    agent.pipeline.start()
    agent.transport.start()  # the main session alone for now
    try:
        assert agent.transport.wait_connected(10)  # connected and subscribed: results may flow
        publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": "turn on", "id": "early"}))
        collect.wait_count(f"edge/{site}/intent", 1)
        assert collect.on(f"edge/{site}/status") == []  # but log lines would not be taken yet
        agent.bulk.start()
        collect.wait_for(lambda _m: collect.on(f"edge/{site}/status") == [b"online"])
        publish_wait(client, f"edge/{site}/logs/gw", "sent right after online")
        collect.wait_count(f"edge/{site}/summary/gw", 1)
        assert logs.lines == 1
    finally:
        agent.shutdown()
