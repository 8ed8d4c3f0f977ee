"""The MQTT transport against a real mosquitto: auth, TLS, refused CONNACK, PUBACK failures,
Last Will, persistence across agent restarts, reconnect after a broker restart, backoff."""

from __future__ import annotations

import json
import random
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from broker import (
    AgentProcess,
    Collector,
    Mosquitto,
    TestBroker,
    TinyRecognizer,
    eventually,
    publish_wait,
    unique,
)
from conftest import agent_config

from edge_agent.app import Agent
from edge_agent.config import Config, parse
from edge_agent.engines import Engines
from edge_agent.transport.base import Inbound
from edge_agent.transport.mqtt import Backoff, MqttTransport, connect_hint


def in_process_config(broker: TestBroker, site: str, **mqtt: object) -> Config:
    section = broker.agent_mqtt(**mqtt)  # type: ignore[arg-type]
    config = parse({"site_id": site, "mqtt": section, "pipeline": {"stats_interval_s": 0.3}})
    config.mqtt._password = Path(section["password_file"]).read_text().strip()
    return config


def bare_transport(
    broker: TestBroker, site: str, prefix: str, on_message: Callable[[Inbound], None]
) -> MqttTransport:
    """A transport of its own (not started) for ``site``'s transcripts, with an agent's settings."""
    section = broker.agent_mqtt()
    settings = parse({"mqtt": section}).mqtt
    settings._password = Path(section["password_file"]).read_text().strip()
    return MqttTransport(
        settings, client_id=unique(prefix), status_topic=f"edge/{site}/status",
        subscriptions=[f"edge/{site}/transcript"], on_message=on_message,
    )


def tiny_agent(config: Config) -> Agent:
    return Agent(config, Engines(recognizer=TinyRecognizer(), model_id="tiny@test"))


def wait_status(collect: Collector, site: str, value: bytes, timeout: float = 20) -> None:
    topic = f"edge/{site}/status"
    collect.wait_for(lambda _m: collect.on(topic)[-1:] == [value], timeout)


def transcript(client: paho.Client, site: str, text: str, ident: str) -> None:
    publish_wait(client, f"edge/{site}/transcript", json.dumps({"text": text, "id": ident}))


def intent_ids(collect: Collector, site: str) -> list[str]:
    return [json.loads(p)["id"] for p in collect.on(f"edge/{site}/intent")]


@pytest.mark.parametrize(("protocol", "tls"), [("5", False), ("3.1.1", False), ("5", True), ("3.1.1", True)])
def test_round_trip_each_protocol_and_tls(
    broker: TestBroker, client: paho.Client, site: str, protocol: str, tls: bool
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    agent = tiny_agent(in_process_config(broker, site, protocol=protocol, tls=tls))
    agent.start()
    try:
        wait_status(collect, site, b"online")
        transcript(client, site, "turn on the fan", "r1")
        [payload] = collect.wait_count(f"edge/{site}/intent", 1)
        assert json.loads(payload)["intent"] == "HassTurnOn"
        sock = agent.transport._client.socket()
        assert isinstance(sock, socket.socket)
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1  # no Nagle delays
        # acknowledged manually, once the intent's PUBACK came back (just after the intent reached us)
        assert eventually(lambda: agent.transport.counters.acked == 1)
    finally:
        agent.shutdown()
    wait_status(collect, site, b"offline")
    assert collect.messages[-1][2] is False  # live delivery; the broker also retains it:
    late = Collector(client, f"edge/{site}/status")
    late.wait_for(lambda msgs: msgs[-1:] == [(f"edge/{site}/status", b"offline", True)])


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_refused_connack_is_fatal_and_nothing_is_subscribed(
    broker: TestBroker, site: str, protocol: str
) -> None:
    settings = parse({"mqtt": {**broker.agent_mqtt(protocol=protocol), "password_file": None}}).mqtt
    settings._password = "wrong-password"
    received: list[Inbound] = []
    transport = MqttTransport(
        settings, client_id=unique("bad-"), status_topic=f"edge/{site}/status",
        subscriptions=[f"edge/{site}/transcript"], on_message=received.append,
    )
    transport.start()
    deadline = time.monotonic() + 15
    while transport.fatal is None and time.monotonic() < deadline:
        time.sleep(0.05)
    transport.close(timeout=1)
    assert transport.fatal is not None
    # mosquitto answers a wrong password with "not authorized" (MQTT 5: 0x87; 3.1.1: return code 5,
    # which paho maps to the same reason code); other brokers use 0x86 "bad user name or password"
    assert re.search(r"reason code (134|135)\b", str(transport.fatal))
    assert transport.counters.connect_refused == 1  # refused for good: no retry loop
    assert transport.counters.connects == 0
    assert not transport.connected
    assert received == []


def test_agent_process_with_bad_credentials_exits_with_the_reason(
    broker: TestBroker, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    config = agent_config(broker, site)
    bad = tmp_path / "bad.password"
    bad.write_text("nope\n")
    bad.chmod(0o600)
    config["mqtt"]["password_file"] = str(bad)
    agent = AgentProcess(config, tmp_path, engine="tiny").start()
    agents.append(agent)
    assert agent.wait(30) == 3
    refused = [e for e in agent.events() if e.get("event") == "mqtt.connect_refused"]
    assert refused and refused[0]["reason_code"] in (134, 135)
    assert not any(e.get("event") == "mqtt.connected" for e in agent.events())


def test_puback_failure_is_counted_and_the_input_goes_to_the_dlq(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    agent = tiny_agent(in_process_config(broker, site, user="limited"))
    agent.start()
    try:
        wait_status(collect, site, b"online")
        transcript(client, site, "turn off the heater", "denied-1")
        [record] = collect.wait_count(f"edge/{site}/dlq", 1)
        dead = json.loads(record)
        assert "135" in dead["reason"] and "intent" in dead["reason"]
        assert json.loads(__import__("base64").b64decode(dead["payload_b64"]))["id"] == "denied-1"
        assert collect.on(f"edge/{site}/intent") == []
        assert agent.transport.counters.publish_failed == 1
        assert agent.pipeline.counters.get("publish_failed") == 1
        # acknowledged once the DLQ record was
        assert eventually(lambda: agent.pipeline.counters.get("settled") == 1)
    finally:
        agent.shutdown()


def test_tls_with_an_unknown_ca_never_connects(broker: TestBroker, site: str, tmp_path: Path) -> None:
    section = broker.agent_mqtt(tls=True)
    other_ca = tmp_path / "other"
    other_ca.mkdir()
    from broker import make_certs

    section["tls"]["ca_file"] = str(make_certs(other_ca).ca)
    settings = parse({"mqtt": {**section, "password_file": None}}).mqtt
    transport = MqttTransport(settings, unique("tls-"), f"edge/{site}/status", [], on_message=lambda _m: None)
    transport.start()
    failed = eventually(lambda: transport.counters.connect_failures >= 1, timeout=15)
    transport.close(timeout=1)
    assert failed
    assert transport.counters.connects == 0


def test_last_will_offline_when_the_agent_is_killed(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    agent = AgentProcess(agent_config(broker, site), tmp_path, engine="tiny").start()
    agents.append(agent)
    wait_status(collect, site, b"online", timeout=30)
    agent.kill()  # SIGKILL: no chance to say goodbye; the broker publishes the Will
    wait_status(collect, site, b"offline")


def test_sigterm_drains_publishes_offline_and_exits_0(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    config = agent_config(broker, site)
    agent = AgentProcess(config, tmp_path, engine="tiny").start()
    agents.append(agent)
    wait_status(collect, site, b"online", timeout=30)
    ids = [f"slow-{i}" for i in range(6)]
    for ident in ids:
        transcript(client, site, "slow turn on the lamp", ident)
    collect.wait_count(f"edge/{site}/intent", 1)
    assert agent.terminate(30) == 0
    wait_status(collect, site, b"offline")
    stopped = [e for e in agent.events() if e.get("event") == "app.stopped"]
    assert stopped and stopped[0]["drained"] is True
    # whatever was not taken before SIGTERM stays with the broker and is handled by the next run
    again = AgentProcess(config, tmp_path, engine="tiny").start()
    agents.append(again)
    wait_status(collect, site, b"online", timeout=30)
    collect.wait_for(lambda _m: set(intent_ids(collect, site)) >= set(ids), timeout=30)
    assert sorted(intent_ids(collect, site)) == sorted(ids)  # each exactly once
    assert again.terminate(30) == 0


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_inputs_published_while_the_agent_is_down_are_processed_after_restart(
    broker: TestBroker,
    client: paho.Client,
    site: str,
    tmp_path: Path,
    agents: list[AgentProcess],
    protocol: str,
) -> None:
    collect = Collector(client, f"edge/{site}/#")
    config = agent_config(broker, site)
    config["mqtt"]["protocol"] = protocol
    first = AgentProcess(config, tmp_path, engine="tiny").start()
    agents.append(first)
    wait_status(collect, site, b"online", timeout=30)
    first.kill()  # even a crash keeps the session: it is the broker's
    wait_status(collect, site, b"offline")
    ids = [f"down-{i}" for i in range(5)]
    for ident in ids:
        transcript(client, site, "turn off the radio", ident)
    second = AgentProcess(config, tmp_path, engine="tiny").start()
    agents.append(second)
    collect.wait_for(lambda _m: set(intent_ids(collect, site)) >= set(ids), timeout=30)
    assert sorted(intent_ids(collect, site)) == sorted(ids)
    assert second.terminate(30) == 0


def _no_delay(transport: MqttTransport) -> bool:
    """Whether the session's current socket has Nagle's algorithm off."""
    sock = transport._client.socket()
    return isinstance(sock, socket.socket) and sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1


def test_reconnects_after_the_broker_restarts(tmp_path: Path) -> None:
    """Against a stock mosquitto (no set_tcp_nodelay): every session of the agent, the bulk one
    too, turns Nagle's algorithm off on its socket at every connect, the reconnect included."""
    site = unique("site")
    lines = ["allow_anonymous true", "persistence true", f"persistence_location {tmp_path}/"]
    mosq = Mosquitto(lines, workdir=tmp_path).start()
    try:
        config = parse({
            "site_id": site,
            "mqtt": {"port": mosq.port, "reconnect_min_s": 0.1, "reconnect_max_s": 0.5},
            "pipeline": {"stats_interval_s": 0},
        })
        agent = tiny_agent(config)
        agent.start()
        assert agent.wait_connected(15)
        sessions = agent.links.transports
        assert len(sessions) == 2 and all(_no_delay(t) for t in sessions)  # main and bulk
        mosq.stop()
        deadline = time.monotonic() + 10
        while agent.transport.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not agent.transport.connected
        mosq.start()
        deadline = time.monotonic() + 20
        while agent.transport.counters.connects < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert agent.transport.counters.connects == 2
        assert agent.wait_connected(15)
        assert all(_no_delay(t) for t in sessions)  # the new sockets too
        observer = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
        got = threading.Event()
        observer.on_message = lambda c, u, m: got.set() if m.topic.endswith("/intent") else None
        observer.connect("127.0.0.1", mosq.port)
        observer.subscribe(f"edge/{site}/intent", qos=1)
        observer.loop_start()
        time.sleep(0.3)
        observer.publish(f"edge/{site}/transcript", b"turn on the porch light", qos=1).wait_for_publish(5)
        assert got.wait(15)
        observer.disconnect()
        observer.loop_stop()
        agent.shutdown()
    finally:
        mosq.close()


def test_backoff_is_capped_exponential_with_jitter() -> None:
    backoff = Backoff(0.5, 8.0, rng=random.Random(7))
    delays = [backoff.next() for _ in range(40)]
    assert all(0.25 <= d <= 8.0 for d in delays)
    assert max(delays[:2]) <= 1.0  # early attempts stay short
    assert max(delays[10:]) > 4.0  # later ones reach towards the cap
    assert len({round(d, 6) for d in delays[10:]}) > 20  # jittered, not a fixed schedule
    backoff.reset()
    assert backoff.next() <= 0.5


def test_shared_group_splits_inputs_between_agents(
    broker: TestBroker, client: paho.Client, site: str
) -> None:
    collect = Collector(client, f"edge/{site}/intent")
    agents = []
    for n in range(2):
        section = broker.agent_mqtt()
        section.update(shared_group="edge-agents", client_id=f"{site}-member{n}")
        config = parse({"site_id": site, "mqtt": section, "pipeline": {"stats_interval_s": 0}})
        config.mqtt._password = Path(section["password_file"]).read_text().strip()
        agent = tiny_agent(config)
        agent.start()
        assert agent.transport.wait_connected(10)
        assert agent.transport.subscription_filters()[0].startswith("$share/edge-agents/edge/")
        agents.append(agent)
    time.sleep(0.5)
    ids = [f"shared-{i}" for i in range(40)]
    for ident in ids:
        transcript(client, site, "turn on the hall light", ident)
    collect.wait_for(lambda _m: set(intent_ids(collect, site)) >= set(ids), timeout=30)
    for agent in agents:
        agent.shutdown()
    assert sorted(intent_ids(collect, site)) == sorted(ids)  # each input handled once
    handled = [a.pipeline.counters.get("out_intent") for a in agents]
    assert sum(handled) == len(ids) and min(handled) > 0  # and both members took a share


def test_acknowledgements_go_out_in_arrival_order(broker: TestBroker, client: paho.Client, site: str) -> None:
    received: list[Inbound] = []
    transport = bare_transport(broker, site, "order-", received.append)
    transport.start()
    try:
        assert transport.wait_connected(10)
        time.sleep(0.3)
        for text in ("first", "second", "third"):
            publish_wait(client, f"edge/{site}/transcript", text)
        assert eventually(lambda: len(received) == 3)
        first, second, third = received
        transport.ack(third)  # settled out of order: held back
        transport.ack(second)
        assert transport.counters.acked == 0
        assert transport.unacked_inputs() == 3
        transport.ack(first)  # releases all three, in order
        assert transport.counters.acked == 3
        assert transport.unacked_inputs() == 0
    finally:
        transport.close(timeout=2)


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_a_retained_input_is_never_replayed_as_a_command(
    broker: TestBroker, client: paho.Client, site: str, protocol: str
) -> None:
    topic = f"edge/{site}/transcript"
    stale = json.dumps({"text": "turn on the oven", "id": "stale"})
    client.publish(topic, stale, qos=1, retain=True).wait_for_publish(5)
    collect = Collector(client, f"edge/{site}/#")
    agent = tiny_agent(in_process_config(broker, site, protocol=protocol))
    agent.start()
    try:
        wait_status(collect, site, b"online")
        transcript(client, site, "turn off the oven", "live")
        collect.wait_count(f"edge/{site}/intent", 1)
        assert intent_ids(collect, site) == ["live"]
        if protocol == "5":  # asked the broker not to send retained messages at all
            assert collect.on(f"edge/{site}/dlq") == []
        else:  # 3.1.1 cannot ask: the replay is recorded, acknowledged, and not executed
            [record] = collect.wait_count(f"edge/{site}/dlq", 1)
            assert json.loads(record)["reason"].startswith("retained input")
    finally:
        agent.shutdown()
        client.publish(topic, b"", qos=1, retain=True).wait_for_publish(5)  # clear the retained message


def test_connect_hint_names_tls_for_ssl_errors_only() -> None:
    """The hint recognises an SSL error by its classes (ssl is deferred in the service)."""
    tls = "the TLS handshake failed"
    assert connect_hint(ssl.SSLCertVerificationError(1, "certificate verify failed"), "h").startswith(tls)
    assert connect_hint(ssl.SSLEOFError(8, "EOF occurred"), "h").startswith(tls)
    assert not connect_hint(OSError(113, "No route to host"), "h").startswith(tls)
    assert connect_hint(ConnectionRefusedError(111, "refused"), "h").startswith("nothing listens")


def _transport_with_reset_wakeup() -> tuple[MqttTransport, socket.socket]:
    """A transport (never started) whose paho client wakes its network thread through a socket
    pair whose other end is gone, as when a reconnect replaces the pair under a worker thread."""
    settings = parse({"mqtt": {"host": "127.0.0.1", "port": 1}}).mqtt
    transport = MqttTransport(
        settings, client_id=unique("wake-"), status_topic=None, subscriptions=[], on_message=lambda _: None
    )
    reader, writer = socket.socketpair()
    reader.close()
    transport._client._sockpairW = writer
    with pytest.raises(OSError):
        writer.send(b"0")  # the fault is real: this host's socket pair refuses the wake-up
    return transport, writer


def test_an_ack_whose_wakeup_fails_during_a_reconnect_does_not_raise() -> None:
    transport, writer = _transport_with_reset_wakeup()
    try:
        inbound = Inbound(
            "t", b"x", qos=1, mid=7, retain=False, dup=False, received_at=0.0, received_mono=0.0
        )
        transport.ack(inbound)  # an input of an earlier connection: acknowledged at once
        assert transport.counters.acked == 1
        assert any(p["mid"] == 7 for p in transport._client._out_packet)  # the PUBACK stays queued
    finally:
        writer.close()


def test_a_wakeup_written_just_before_a_reconnect_replaces_the_socket_pair_is_not_refused(
    broker: TestBroker, site: str
) -> None:
    """A publish or acknowledgement on a worker thread wakes paho's network thread through the
    socket pair it read a moment earlier; a reconnect's ``loop_start`` may replace that pair in
    between. The replaced pair must still take the wake-up (an OSError there killed a worker)."""
    transport = bare_transport(broker, site, "swap-", lambda _: None)
    transport.start()
    try:
        assert transport.wait_connected(10)
        first_writer = transport._client._sockpairW
        assert first_writer is not None
        connects = transport.counters.connects
        sock = transport._client.socket()
        assert isinstance(sock, socket.socket)
        sock.shutdown(socket.SHUT_RDWR)  # the link drops: the supervisor reconnects
        assert eventually(lambda: transport.counters.connects > connects and transport.connected)
        assert transport._client._sockpairW is not first_writer  # loop_start made a new pair
        first_writer.send(b"0")  # the late wake-up of a thread that read the old pair: no error
        done: list[bool] = []
        transport.publish(f"edge/{site}/probe", b"x", qos=1, on_done=lambda o: done.append(o.ok))
        assert eventually(lambda: done == [True])
    finally:
        transport.close(timeout=2)
