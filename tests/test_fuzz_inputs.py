"""Property-based fuzzing of every input topic of a running agent (real mosquitto, real model).

Each generated payload must end as exactly one DLQ record or a result: an intent for a transcript,
a reply for a bundle command, and for log lines a place in a summary (the lines of every summary of
a source add up to the lines accepted from it). The agent never crashes, no input hits an internal
error, and its RSS stays bounded. Inputs: random bytes, invalid UTF-8, payloads over the size
limit, deeply nested JSON, wrong types, control characters, plus plausible ones.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import paho.mqtt.client as paho
import pytest
from broker import AgentProcess, Collector, TestBroker, publish_wait, unique
from conftest import agent_config
from faultkit import rss_kb, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.errors import PayloadError
from edge_agent.messages.logs import parse_lines

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

MAX_PAYLOAD = 4096  # the agent's pipeline.max_payload_bytes in this module
DLQ_CAP = 256
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_ids = itertools.count()

control = st.text(alphabet=st.characters(whitelist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), max_size=64)
junk_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _nested(depth: int, wrap: str) -> bytes:
    inner = "[" * depth + "]" * depth
    return (wrap % inner).encode() if wrap else inner.encode()


payloads = st.one_of(
    st.binary(max_size=512),  # random bytes
    st.binary(min_size=1, max_size=64).map(lambda b: b"\xff" + b + b"\xc3"),  # invalid UTF-8
    st.integers(MAX_PAYLOAD + 1, MAX_PAYLOAD * 8).map(lambda n: b"x" * n),  # over the size limit
    st.integers(33, 3000).flatmap(  # deeper than the agent's 32 levels
        lambda d: st.sampled_from(["", '{"text": %s}', '{"msg": %s}', '[{"line": %s}]']).map(
            lambda w: _nested(d, w)
        )
    ),
    junk_json.map(lambda v: json.dumps(v).encode()),  # wrong shapes and types
    st.fixed_dictionaries({"text": junk_json}).map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"msg": junk_json, "level": junk_json}).map(lambda v: json.dumps(v).encode()),
    control.map(lambda s: s.encode("utf-8", "surrogatepass")),  # control characters
    st.fixed_dictionaries({"text": control}).map(lambda v: json.dumps(v).encode()),
    st.text(max_size=200).map(str.encode),  # plausible text
    st.sampled_from([b"turn on the kitchen light", b'{"text": "pause the music"}', b"kernel: eth0 down"]),
)


class Fuzzed:
    """The running agent and what the tests sent it."""

    def __init__(self, agent: AgentProcess, collect: Collector, client: paho.Client, site: str) -> None:
        self.agent = agent
        self.collect = collect
        self.client = client
        self.site = site
        self.sent: Counter[str] = Counter()
        self.lines_by_source: Counter[str] = Counter()
        self.rss_start_kb = 0

    def topic(self, suffix: str) -> str:
        return f"edge/{self.site}/{suffix}"

    def outputs(self, suffix: str) -> list[bytes]:
        return self.collect.on(self.topic(suffix))

    def dlq_for(self, topic: str) -> list[dict[str, Any]]:
        return [r for r in (json.loads(p) for p in self.outputs("dlq")) if r["topic"] == topic]

    def stats(self) -> dict[str, Any]:
        found = self.outputs("stats")
        return json.loads(found[-1]) if found else {}

    def publish(self, suffix: str, payload: bytes) -> None:
        publish_wait(self.client, self.topic(suffix), payload)
        self.sent[suffix] += 1

    def alive(self) -> bool:
        return self.agent.proc is not None and self.agent.proc.poll() is None


@pytest.fixture(scope="module")
def fuzzed(broker: TestBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    tmp = tmp_path_factory.mktemp("fuzz")
    site = unique("fz")
    incoming = tmp / "incoming"
    incoming.mkdir()
    config = agent_config(
        broker, site,
        pipeline={"stats_interval_s": 0.2, "tick_interval_s": 0.2, "max_payload_bytes": MAX_PAYLOAD,
                  "dlq_payload_max_bytes": DLQ_CAP},
        logs={"window_s": 1.0},
        reliability={"state_dir": str(tmp / "state"), "bundles": {"install_from": [str(incoming)]}},
    )  # fmt: skip
    agent = AgentProcess(config, tmp, engine="real").start()
    client = broker.client()
    collect = Collector(client, f"edge/{site}/#")
    try:
        collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"], timeout=90)
        state = Fuzzed(agent, collect, client, site)
        state.publish("transcript", b"turn on the kitchen light")  # warm: first inference allocates
        collect.wait_count(state.topic("intent"), 1, timeout=30)
        state.rss_start_kb = rss_kb(agent.proc.pid)  # type: ignore[union-attr]
        yield state
    finally:
        client.disconnect()
        client.loop_stop()
        agent.kill()


def _check_dlq_record(record: dict[str, Any], topic: str, payload: bytes) -> None:
    assert record["topic"] == topic
    assert record["reason"] and "internal error" not in record["reason"], record["reason"]
    kept = base64.b64decode(record["payload_b64"])
    assert kept == payload[: len(kept)] and len(kept) == min(len(payload), DLQ_CAP)


@FUZZ
@given(payload=payloads)
def test_transcript_topic(fuzzed: Fuzzed, payload: bytes) -> None:
    topic = fuzzed.topic("transcript")
    intents_before, dlq_before = len(fuzzed.outputs("intent")), len(fuzzed.dlq_for(topic))
    fuzzed.publish("transcript", payload)

    def outputs() -> int:
        return len(fuzzed.outputs("intent")) + len(fuzzed.dlq_for(topic)) - intents_before - dlq_before

    assert wait_until(lambda: outputs() > 0, 20), f"no intent and no DLQ record for {payload[:80]!r}"
    time.sleep(0.02)
    assert outputs() == 1, "more than one output for one input"
    dlq = fuzzed.dlq_for(topic)
    if len(dlq) > dlq_before:
        _check_dlq_record(dlq[-1], topic, payload)
    else:
        intent = json.loads(fuzzed.outputs("intent")[-1])
        assert intent["schema"] == "edge-agent/intent/1" and intent["text"]
    assert fuzzed.alive()


def _expected_lines(payload: bytes) -> int | None:
    """Lines the agent must summarize for this payload, or None when it must go to the DLQ."""
    if len(payload) > MAX_PAYLOAD:
        return None
    try:
        return len(parse_lines(payload))
    except PayloadError:
        return None


@FUZZ
@given(source=st.sampled_from(["kernel", "zigbee", "wifi-1", "power.mgr"]), payload=payloads)
def test_logs_topic(fuzzed: Fuzzed, source: str, payload: bytes) -> None:
    topic = fuzzed.topic(f"logs/{source}")
    expected = _expected_lines(payload)
    dlq_before = len(fuzzed.dlq_for(topic))
    settled_before = fuzzed.stats().get("counters", {}).get("settled", 0)
    fuzzed.publish(f"logs/{source}", payload)
    settled = wait_until(lambda: fuzzed.stats().get("counters", {}).get("settled", 0) > settled_before, 20)
    assert settled, f"log input never settled: {payload[:80]!r}"
    if expected is None:
        # "settled" may count an earlier input first: wait for this input's own record
        wait_until(lambda: len(fuzzed.dlq_for(topic)) > dlq_before, 10)
    dlq = fuzzed.dlq_for(topic)
    if expected is None:
        assert len(dlq) == dlq_before + 1, f"invalid log payload without DLQ record: {payload[:80]!r}"
        _check_dlq_record(dlq[-1], topic, payload)
    else:
        assert len(dlq) == dlq_before, f"valid log payload went to the DLQ: {dlq[-1]['reason']}"
        fuzzed.lines_by_source[source] += expected
    assert fuzzed.alive()


@FUZZ
@given(payload=payloads | st.sampled_from([b'{"path": "/etc"}', b'{"id": 1, "path": "../../x"}']))
def test_bundle_command_topic(fuzzed: Fuzzed, payload: bytes) -> None:
    before = len(fuzzed.outputs("bundle/reply")) + len(fuzzed.dlq_for(fuzzed.topic("bundle/install")))
    fuzzed.publish("bundle/install", payload)

    def answered() -> int:
        return len(fuzzed.outputs("bundle/reply")) + len(fuzzed.dlq_for(fuzzed.topic("bundle/install")))

    assert wait_until(lambda: answered() > before, 20), f"no reply for {payload[:80]!r}"
    replies = fuzzed.outputs("bundle/reply")
    if len(replies):
        assert json.loads(replies[-1])["ok"] is False  # nothing valid was ever offered
    assert fuzzed.alive()


def test_accepted_log_lines_all_reach_a_summary(fuzzed: Fuzzed) -> None:
    assert fuzzed.lines_by_source, "the fuzz run accepted no log lines at all"

    def summarized() -> Counter[str]:
        total: Counter[str] = Counter()
        for topic, payload, _ in fuzzed.collect.messages:
            if topic.startswith(fuzzed.topic("summary/")):
                body = json.loads(payload)
                total[body["source"]] += body["window"]["lines"]
        return total

    assert wait_until(lambda: summarized() == fuzzed.lines_by_source, 30), (
        summarized(), fuzzed.lines_by_source,
    )  # fmt: skip


def test_agent_survived_without_internal_errors_and_bounded_rss(fuzzed: Fuzzed) -> None:
    assert fuzzed.alive()
    counters = fuzzed.stats()["counters"]
    assert counters.get("handler_errors", 0) == 0
    reasons = [json.loads(p)["reason"] for p in fuzzed.outputs("dlq")]
    assert not [r for r in reasons if "internal error" in r]
    grown_mb = (rss_kb(fuzzed.agent.proc.pid) - fuzzed.rss_start_kb) / 1024  # type: ignore[union-attr]
    print(f"fuzz: sent {dict(fuzzed.sent)}, DLQ records {len(reasons)}, RSS growth {grown_mb:.1f} MB")
    assert grown_mb < 64, f"RSS grew by {grown_mb:.1f} MB"
