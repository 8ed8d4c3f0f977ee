"""Faults with real processes: the broker SIGKILLed mid-stream, the agent SIGKILLed mid-stream, no
broker at start, a full outbox while cut off, a stalled agent. Each checks that every input has
exactly one result after dedup by id (and that no result appears for an input never sent).

The agent is ``edge-agent run`` with the shipped bundle; the broker is mosquitto with persistence
saved after every change. mosquitto writes its database right *after* acknowledging, so a SIGKILL
can lose the one change being saved (seen: 1 of 500 acknowledged messages). Only in the broker-kill
test may the publisher therefore resend, once, an input that got no result, like a real device with
an end-to-end timeout; the number of such resends is bounded by the kills and reported.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from broker import AgentProcess, unique
from faultkit import (
    DurableBroker,
    Relay,
    Results,
    agent_config,
    persistent_client,
    publish_all,
    resume_process,
    start_agent,
    stop_process,
    wait_until,
)

from edge_agent.store.outbox import Outbox

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TEXTS = ["turn on the kitchen light", "set a timer for five minutes", "what's the weather like",
         "pause the music", "close the garage door", "tell me a joke"]  # fmt: skip


def bodies(prefix: str, n: int) -> tuple[list[str], list[bytes]]:
    ids = [f"{prefix}-{i}" for i in range(n)]
    return ids, [json.dumps({"id": i, "text": TEXTS[k % len(TEXTS)]}).encode() for k, i in enumerate(ids)]


def assert_exactly_once(results: Results, ids: list[str]) -> Counter[str]:
    """Every id has a result, nothing else does, and copies of one id carry the same answer."""
    assert results.missing(ids) == []
    assert set(results.intents) == set(ids), "results for inputs that were never sent"
    for ident, copies in results.intents.items():
        answers = {(c["text"], c["intent"]) for c in copies}
        assert len(answers) == 1, f"{ident}: copies disagree: {answers}"
    assert results.dlq == []
    return Counter({i: len(c) for i, c in results.intents.items() if len(c) > 1})


@pytest.fixture
def agents() -> list[AgentProcess]:
    started: list[AgentProcess] = []
    yield started  # type: ignore[misc]
    for agent in started:
        agent.kill()


def _online(results: Results, agent: AgentProcess) -> None:
    if not results.wait(lambda r: r.online(), timeout=90):
        raise AssertionError(f"agent never came online; log:\n{agent.log()[-3000:]}")


def test_broker_sigkilled_mid_stream(tmp_path: Path, agents: list[AgentProcess]) -> None:
    site = unique("bk")
    broker = DurableBroker(tmp_path / "mq").start()
    results = Results(broker.port, site)
    agent = start_agent(agent_config(site, broker.port, tmp_path / "state"), tmp_path, agents)
    _online(results, agent)
    publisher = persistent_client(broker.port)
    ids, payloads = bodies("bk", 240)
    kills = 0

    def fault(i: int) -> None:
        nonlocal kills
        if i in (80, 160):
            broker.kill()
            kills += 1
            time.sleep(1.0)
            broker.start()

    try:
        publish_all(publisher, f"edge/{site}/transcript", payloads, rate=120, on_index=fault)
        results.wait(lambda r: not r.missing(ids), timeout=60)
        resent = results.missing(ids)
        for ident in resent:  # what the broker itself lost when killed (see module doc)
            publisher.publish(f"edge/{site}/transcript", payloads[ids.index(ident)], qos=1)
        results.wait(lambda r: not r.missing(ids), timeout=60)
        dups = assert_exactly_once(results, ids)
        assert len(resent) <= 2 * kills, f"{len(resent)} inputs needed a resend: {resent}"
        assert agent.proc is not None and agent.proc.poll() is None, "the agent died"
        print(f"broker kills={kills} resent={len(resent)} raw duplicates={sum(dups.values())}")
    finally:
        publisher.loop_stop()
        results.close()
        broker.stop()


def test_agent_sigkilled_mid_stream_and_restarted(tmp_path: Path, agents: list[AgentProcess]) -> None:
    site = unique("ak")
    broker = DurableBroker(tmp_path / "mq").start()
    results = Results(broker.port, site)
    config = agent_config(site, broker.port, tmp_path / "state")
    first = start_agent(config, tmp_path, agents)
    _online(results, first)
    publisher = persistent_client(broker.port)
    ids, payloads = bodies("ak", 240)
    restarted: list[AgentProcess] = []

    def fault(i: int) -> None:
        if i == 100:
            first.kill()  # SIGKILL: no drain, no offline message, in-flight work lost
            restarted.append(start_agent(config, tmp_path, agents))

    try:
        publish_all(publisher, f"edge/{site}/transcript", payloads, rate=100, on_index=fault)
        ok = results.wait(lambda r: not r.missing(ids), timeout=120)
        assert ok, f"missing {len(results.missing(ids))}; log:\n{restarted[0].log()[-3000:]}"
        dups = assert_exactly_once(results, ids)
        assert restarted[0].proc is not None and restarted[0].proc.poll() is None
        print(f"agent killed once; raw duplicates={sum(dups.values())}")
    finally:
        publisher.loop_stop()
        results.close()
        broker.stop()


def test_broker_absent_when_the_agent_starts(tmp_path: Path, agents: list[AgentProcess]) -> None:
    site = unique("ab")
    broker = DurableBroker(tmp_path / "mq")  # not started yet
    agent = start_agent(agent_config(site, broker.port, tmp_path / "state"), tmp_path, agents)
    assert wait_until(lambda: "mqtt.connect_failed" in agent.log(), timeout=90), agent.log()[-2000:]
    time.sleep(1.0)
    assert agent.proc is not None and agent.proc.poll() is None, "the agent gave up without a broker"
    broker.start()
    results = Results(broker.port, site)
    try:
        _online(results, agent)
        publisher = persistent_client(broker.port)
        ids, payloads = bodies("ab", 60)
        publish_all(publisher, f"edge/{site}/transcript", payloads, rate=200)
        assert results.wait(lambda r: not r.missing(ids), timeout=60)
        assert_exactly_once(results, ids)
        publisher.loop_stop()
    finally:
        results.close()
        broker.stop()


def test_full_outbox_while_cut_off_loses_nothing(tmp_path: Path, agents: list[AgentProcess]) -> None:
    """The agent holds 80 delivered inputs when its link is cut; the outbox takes 5 results and is
    then full; the rest stay unacknowledged and come back from the broker after the link returns."""
    site = unique("fo")
    broker = DurableBroker(tmp_path / "mq").start()
    relay = Relay(broker.port)
    results = Results(broker.port, site)
    state = tmp_path / "state"
    config = agent_config(
        site, relay.port, state,
        reliability={"state_dir": str(state), "outbox": {"max_rows": 5, "ack_timeout_s": 2}},
    )  # fmt: skip
    agent = start_agent(config, tmp_path, agents)
    _online(results, agent)
    publisher = persistent_client(broker.port)
    ids, payloads = bodies("fo", 80)
    try:
        stop_process(agent)  # the inputs pile up in the agent's socket
        publish_all(publisher, f"edge/{site}/transcript", payloads, rate=1000)
        time.sleep(1.0)
        relay.cut()
        resume_process(agent)
        time.sleep(3.0)  # results made while cut off: 5 stored, the rest refused (inputs unacked)
        relay.restore()
        ok = results.wait(lambda r: not r.missing(ids), timeout=120)
        assert ok, f"missing {len(results.missing(ids))}; log:\n{agent.log()[-3000:]}"
        dups = assert_exactly_once(results, ids)
        assert wait_until(lambda: Outbox(state / "outbox.db").stats().rows == 0, timeout=30)
        stats = Outbox(state / "outbox.db").stats()
        assert stats.refused_full > 0, "the outbox never reached its bound: the fault did not happen"
        assert stats.put >= 5 and stats.published == stats.put
        print(f"outbox put={stats.put} refused_full={stats.refused_full} raw duplicates={sum(dups.values())}")
    finally:
        publisher.loop_stop()
        results.close()
        relay.close()
        broker.stop()


def test_stalled_agent_past_its_keepalive(tmp_path: Path, agents: list[AgentProcess]) -> None:
    """SIGSTOP for 15 s, three times the keepalive: the broker drops the agent (Last Will: offline) while
    inputs keep coming; after SIGCONT the agent reconnects and answers everything once."""
    site = unique("st")
    broker = DurableBroker(tmp_path / "mq").start()
    results = Results(broker.port, site)
    config = agent_config(site, broker.port, tmp_path / "state", mqtt={
        "host": "127.0.0.1", "port": broker.port, "keepalive_s": 5,
        "reconnect_min_s": 0.1, "reconnect_max_s": 0.5,
    })  # fmt: skip
    agent = start_agent(config, tmp_path, agents)
    _online(results, agent)
    publisher = persistent_client(broker.port)
    ids, payloads = bodies("st", 200)

    def fault(i: int) -> None:
        if i == 30:
            stop_process(agent)
        if i == 180:  # 15 s later: mosquitto drops a silent client after 1.5 x keepalive (+ its tick)
            resume_process(agent)

    try:
        publish_all(publisher, f"edge/{site}/transcript", payloads, rate=10, on_index=fault)
        ok = results.wait(lambda r: not r.missing(ids), timeout=90)
        assert ok, f"missing {len(results.missing(ids))}; log:\n{agent.log()[-3000:]}"
        dups = assert_exactly_once(results, ids)
        assert b"offline" in results.status, "the broker never noticed the stall (no Last Will)"
        assert results.online()
        print(f"stalled 15 s; raw duplicates={sum(dups.values())}")
    finally:
        publisher.loop_stop()
        results.close()
        broker.stop()
